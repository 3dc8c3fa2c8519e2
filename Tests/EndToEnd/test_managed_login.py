"""Sign-in through the managed login in a real browser, the paste flow
without one, and machine credentials: the built binary against the project's
Cognito double, which serves the pool's OAuth 2.0 domain (authorize, login
page, token, revoke, logout) at its own URL.

The browser is Debian's chromium, headless, driven by selenium (the
`browser` fixture). cog-cred starts it through $BROWSER: here a script that
hands the address to the test, which opens it in the selenium session, so
the real browser follows the managed login's redirect to cog-cred's
loopback listener exactly as a desktop browser would.
"""
import json
import os
import re
import signal
import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request

import pytest

from conftest import wait_until
from support import (DOMAIN_PASSWORD, DOMAIN_USER, NoRedirects, claims, configure_on_double, sign_in_by_pasting,
                     sign_in_without_a_browser, stored)

USER, PASSWORD = DOMAIN_USER, DOMAIN_PASSWORD  # the `domain` fixture's user
CLIENT_SECRET = "machine-secret-0123456789abcdef"


def items(bus):
    return {kind for kind in ("access", "id", "refresh") if stored(bus, kind)}


class BrowserSignIn:
    """`cog-cred sign-in` running, its $BROWSER handing the address over."""

    def __init__(self, cog, tmp_path, *args, env=None):
        self.handoff = tmp_path / "browser-handoff"
        script = tmp_path / "browser.sh"
        # What the browser got of cog-cred's descriptors, before the hand-off.
        script.write_text('#!/bin/sh\nfor f in /proc/$$/fd/*; do readlink "$f"; done > "$HANDOFF.fds"\n'
                          'printf "%s\\n" "$1" >> "$HANDOFF"\n')
        script.chmod(0o755)
        full_env = {**cog.env, "BROWSER": str(script), "HANDOFF": str(self.handoff), **(env or {})}
        self.proc = subprocess.Popen([cog.binary, "sign-in", *args], env=full_env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)

    def address(self):
        """The address cog-cred asked the browser to open (once it has)."""
        wait_until(lambda: self.handoff.exists() and self.handoff.read_text().strip(), "the browser hand-off",
                   attempts=1500)
        return self.handoff.read_text().split("\n")[0]

    def finish(self, timeout=30):
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err


def in_browser(browser, address, click=None, username=USER, password=PASSWORD):
    """Opens the address, and on the sign-in page clicks `click` (or signs
    in with the password); returns the page the browser ends on."""
    from selenium.webdriver.common.by import By

    browser.delete_all_cookies()
    browser.get(address)
    if click is None:
        browser.find_element(By.ID, "username").send_keys(username)
        browser.find_element(By.ID, "password").send_keys(password)
        click = "signin"
    if click:
        browser.find_element(By.ID, click).click()
    # A click starts the navigation and returns: wait until the browser is
    # back at cog-cred's listener (every flow here ends there) before reading.
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 30).until(
        lambda b: b.current_url.startswith("http://localhost:") and b.find_elements(By.TAG_NAME, "h1"))
    return browser.find_element(By.TAG_NAME, "h1").text


def test_a_real_browser_signs_in_and_the_session_works(cog, bus, domain, browser, tmp_path):
    run = BrowserSignIn(cog, tmp_path)
    address = run.address()
    landed = in_browser(browser, address)
    code, out, err = run.finish()
    assert code == 0, err
    assert landed == "Signed in"  # cog-cred's own page, on its loopback listener
    assert out == "" and f"Signed in as {USER}" in err
    # No socket of cog-cred's (its listener, a kept connection) lives on in the browser.
    assert "socket:" not in (tmp_path / "browser-handoff.fds").read_text()
    # The browser's command line (every local user's to read) has a one-time
    # address on the listener; the authorize URL, with the state, is on the terminal only.
    assert re.fullmatch(r"http://localhost:\d+/start/[A-Za-z0-9_-]{22}", address)
    authorize = re.search(r"(http://\S+/oauth2/authorize\?\S+)", err).group(1)
    # What was asked: the authorization code flow with PKCE, state and nonce.
    sent = domain.admin("last_authorize")["params"]
    assert sent["response_type"] == "code" and sent["code_challenge_method"] == "S256"
    assert sent["scope"] == "openid email profile" and sent["redirect_uri"] == domain.callback
    assert len(sent["state"]) >= 22 and len(sent["nonce"]) >= 22 and len(sent["code_challenge"]) == 43
    assert f"state={sent['state']}" in authorize
    assert items(bus) == {"access", "id", "refresh"}
    assert claims(stored(bus, "id"))["nonce"] == sent["nonce"]
    assert cog.ok("token").stdout.strip() == stored(bus, "access")
    status = cog.ok("status").stdout
    assert "signed in:     yes" in status and USER in status
    # Refreshed and revoked where they were issued: the domain's endpoints.
    cog.ok("refresh")
    assert domain.calls("oauth2/token:refresh_token") == 1
    assert domain.calls("InitiateAuth:REFRESH_TOKEN_AUTH") == 0 and domain.calls("GetTokensFromRefreshToken") == 0
    refresh_token = stored(bus, "refresh")
    signed_out = cog.run("sign-out", "--global")
    assert signed_out.returncode == 0, signed_out.stderr
    assert domain.calls("oauth2/revoke") == 1 and items(bus) == set()
    # --global also names the managed login's own sign-out address.
    logout = re.search(r"open: (\S+)", signed_out.stderr).group(1)
    assert logout.startswith(domain.url + "logout?client_id=doubleclient&logout_uri=")
    with pytest.raises(urllib.error.HTTPError) as redirected:
        urllib.request.build_opener(NoRedirects).open(logout, timeout=10)
    assert redirected.value.code == 302 and redirected.value.headers["Location"] == "http://localhost:9/signed-out"
    # The revoked refresh token is dead at the domain.
    assert domain_token(domain, grant_type="refresh_token", refresh_token=refresh_token)[0] == 400


def domain_token(domain, **form):
    request = urllib.request.Request(domain.url + "oauth2/token", data=urllib.parse.urlencode(
        {**form, "client_id": "doubleclient"}).encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def test_a_federated_user_signs_in_without_a_password(cog, bus, domain, browser, tmp_path):
    run = BrowserSignIn(cog, tmp_path)
    assert in_browser(browser, run.address(), click="federated") == "Signed in"
    code, _, err = run.finish()
    assert code == 0, err
    identity = claims(stored(bus, "id"))
    assert identity["identities"][0]["providerName"] == "CorporateIdP"
    assert cog.ok("token").stdout.startswith("eyJ")


def test_identity_provider_goes_straight_to_the_provider(cog, bus, domain, browser, tmp_path):
    cog.ok("configure", "--identity-provider", "CorporateIdP")
    run = BrowserSignIn(cog, tmp_path)
    assert in_browser(browser, run.address(), click="") == "Signed in"  # no sign-in page in between
    assert run.finish()[0] == 0
    pages = [(r["action"], r["outcome"]) for r in domain.requests() if r["action"] in ("oauth2/authorize", "login")]
    assert pages == [("oauth2/authorize", "federated")]
    assert domain.admin("last_authorize")["params"]["identity_provider"] == "CorporateIdP"
    assert items(bus) == {"access", "id", "refresh"}


def test_sign_in_browser_once_on_a_password_profile(cog, bus, domain, browser, tmp_path):
    cog.ok("configure", "--auth-flow", "srp")
    run = BrowserSignIn(cog, tmp_path, "--browser")
    assert in_browser(browser, run.address()) == "Signed in"
    assert run.finish()[0] == 0
    assert items(bus) == {"access", "id", "refresh"}


def test_the_user_cancelling_stores_nothing(cog, bus, domain, browser, tmp_path):
    run = BrowserSignIn(cog, tmp_path)
    assert in_browser(browser, run.address(), click="cancel") == "Sign-in not completed"
    code, out, err = run.finish()
    assert code == 77 and out == ""
    assert "the sign-in was cancelled or refused in the browser" in err and "access_denied" in err
    assert items(bus) == set()


def test_an_answer_with_another_state_is_refused_and_the_wait_goes_on(cog, bus, domain, browser, tmp_path):
    run = BrowserSignIn(cog, tmp_path)
    address = run.address()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(domain.callback + "?code=planted&state=not-this-one", timeout=10)
    assert refused.value.code == 400 and "belongs to another sign-in" in refused.value.read().decode()
    assert run.proc.poll() is None  # one request cannot end somebody's sign-in
    assert in_browser(browser, address) == "Signed in"
    code, _, err = run.finish()
    assert code == 0 and "Refused an answer that belongs to another sign-in" in err
    assert domain.calls("oauth2/token:authorization_code") == 1


def as_nobody(*command):
    """Runs a command as another local user (CI runs as root)."""
    if os.getuid() != 0:
        pytest.skip("acting as another local user takes root")
    return subprocess.run(["runuser", "-u", "nobody", "--", *command], capture_output=True, text=True, timeout=30)


def test_the_start_address_and_the_callback_take_only_this_users_requests(cog, bus, domain, tmp_path):
    """Login CSRF (RFC 9700 4.7) by another local user: they get hold of the
    authorize URL, sign in to their own account with its state and PKCE
    challenge, and send the answer to the listener before the victim does."""
    domain.add_user("mallory@example.com", "Mallory-Password-1")
    run = BrowserSignIn(cog, tmp_path)
    start = run.address()
    status = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}"]
    # Another user cannot use the start address, and does not use it up either.
    assert as_nobody(*status, start).stdout == "403 "
    code, authorize = subprocess.run([*status, start], capture_output=True, text=True, timeout=30).stdout.split(" ")
    assert code == "302" and authorize.startswith(domain.url + "oauth2/authorize?")
    assert subprocess.run([*status, start], capture_output=True, text=True, timeout=30).stdout == "404 "  # once only
    planted = sign_in_without_a_browser(authorize, "mallory@example.com", "Mallory-Password-1")
    assert "state=" in planted and "code=" in planted
    assert as_nobody(*status, planted).stdout == "403 "
    assert run.proc.poll() is None and domain.calls("oauth2/token:authorization_code") == 0
    # The same answer from this user is taken: it was refused for whose it was, nothing else.
    urllib.request.urlopen(planted, timeout=10).read()
    code, _, err = run.finish()
    assert code == 0 and "Refused a request to the sign-in's address from another user's process (uid 65534)" in err
    assert claims(stored(bus, "id"))["email"] == "mallory@example.com"


def test_an_expired_id_token_from_the_managed_login_is_not_stored(cog, bus, domain, browser, tmp_path):
    """OpenID Connect Core 3.1.3.7: the ID token is checked (issuer, audience,
    token_use, expiry, nonce) before anything is stored."""
    domain.configure(issued_at_offset=-7200)  # tokens that expired an hour ago
    run = BrowserSignIn(cog, tmp_path)
    assert in_browser(browser, run.address()) == "Signed in"  # the page comes before the exchange
    code, out, err = run.finish()
    assert code == 77 and out == "" and "the ID token from the managed login fails the expiry check" in err
    assert items(bus) == set()


def test_other_requests_to_the_listener_do_not_end_the_wait(cog, bus, domain, browser, tmp_path):
    run = BrowserSignIn(cog, tmp_path)
    address = run.address()
    for path in ("/favicon.ico", "/callback"):  # a browser's extra request; a callback without an answer
        with pytest.raises(urllib.error.HTTPError) as other:
            urllib.request.urlopen(domain.callback.replace("/callback", path), timeout=10)
        assert other.value.code in (400, 404)
    assert in_browser(browser, address) == "Signed in"
    assert run.finish()[0] == 0


@pytest.mark.parametrize("family,address", [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")], ids=["ipv4", "ipv6"])
def test_a_taken_port_is_named(cog, bus, domain, tmp_path, family, address):
    """localhost is either address to a browser: another program on either one would get the answer."""
    port = int(domain.callback.split(":")[2].split("/")[0])
    with socket.socket(family) as squatter:
        if family == socket.AF_INET6:
            squatter.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        squatter.bind((address, port))
        squatter.listen()
        result = cog.run("sign-in")
    assert result.returncode == 75
    assert f"port {port} of the redirect URI is taken" in result.stderr and "--redirect-uri" in result.stderr


def test_no_answer_within_the_timeout(cog, bus, domain, tmp_path):
    run = BrowserSignIn(cog, tmp_path, "--timeout", "1")
    run.address()  # nobody opens it
    code, _, err = run.finish()
    assert code == 77 and "no answer from the browser within 1 s" in err
    assert items(bus) == set()


def test_ctrl_c_while_waiting_stores_nothing(cog, bus, domain, tmp_path):
    run = BrowserSignIn(cog, tmp_path)
    run.address()
    run.proc.send_signal(signal.SIGINT)
    code, out, _ = run.finish()
    assert code != 0 and out == ""
    assert items(bus) == set() and domain.calls("oauth2/token:authorization_code") == 0
    # The port is free again for the next attempt.
    port = int(domain.callback.split(":")[2].split("/")[0])
    for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        with socket.socket(family) as probe:
            probe.bind((address, port))


def test_no_browser_pastes_the_address_back(cog, bus, domain):
    sign_in_by_pasting(cog)
    assert items(bus) == {"access", "id", "refresh"}
    # Without a terminal there is nobody to paste: a usage error.
    headless = subprocess.run([cog.binary, "sign-in", "--no-browser"], env=cog.env, capture_output=True, text=True,
                              start_new_session=True, timeout=30)
    assert headless.returncode == 64 and "no terminal" in headless.stderr


def test_status_asks_the_managed_login_about_a_browser_sign_in(cog, bus, domain):
    """A browser sign-in's access token carries openid but not the API's
    scope: status asks the domain's userInfo (GetUser would refuse it for
    the scope alone), and sees the session end when the user is signed out
    everywhere."""
    sign_in_by_pasting(cog)
    text = cog.ok("status").stdout
    assert "session:       stands (the managed login's userInfo answered)" in text
    assert domain.calls("oauth2/userInfo") == 1 and domain.calls("GetUser") == 0
    domain.revoke(USER)
    refused = cog.run("status")
    assert refused.returncode == 77 and "sign in again" in refused.stderr, refused.stderr
    assert domain.calls("oauth2/userInfo") == 2 and items(bus) == {"access", "id", "refresh"}


def test_with_no_browser_here_it_says_so_at_once_and_offers_the_paste(cog, bus, domain):
    """Over SSH: no display, no $BROWSER. Not the whole timeout in silence."""
    env = {k: v for k, v in cog.env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    sign_in_by_pasting(cog, ["sign-in"], env=env, said_first="no browser could be started here")
    assert items(bus) == {"access", "id", "refresh"}
    # Without a terminal: said at once, before the wait, which then ends as before.
    headless = subprocess.Popen([cog.binary, "sign-in", "--timeout", "2"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
    first = headless.stderr.readline()
    assert "no browser could be started here" in first and "--no-browser" in first, first
    out, rest = headless.communicate(timeout=30)
    assert headless.returncode == 77 and out == "" and "no answer from the browser within 2 s" in rest, rest


def test_an_overlong_paste_is_refused_and_none_of_it_reaches_the_shell(cog, bus, domain):
    """What cog-cred leaves unread at its prompt, the shell reads next: as a command."""
    pexpect = pytest.importorskip("pexpect")
    script = '"$COG" sign-in --no-browser; echo "exit=$?"; IFS= read -r rest; echo "left:[$rest]"'
    child = pexpect.spawn("/bin/sh", ["-c", script], env={**cog.env, "COG": cog.binary}, encoding="utf-8", timeout=30)
    child.expect("paste the address")
    child.sendline("x" * 3000)
    child.expect(r"exit=(\d+)")
    assert child.match.group(1) == "65" and "that line is longer than 1024 bytes" in child.before
    child.sendline("after")
    child.expect(r"left:\[(.*?)\]")
    assert child.match.group(1) == "after"
    child.expect(pexpect.EOF)
    assert items(bus) == set() and domain.calls("oauth2/token:authorization_code") == 0


def test_refresh_errors_from_the_domain_keep_their_code(cog, bus, domain, browser, tmp_path):
    run = BrowserSignIn(cog, tmp_path)
    in_browser(browser, run.address())
    assert run.finish()[0] == 0
    before = {kind: stored(bus, kind) for kind in ("access", "id", "refresh")}
    domain.configure(fail_next={"status": 503, "body": "", "content_type": "text/plain", "count": 10})
    assert cog.run("refresh").returncode == 75
    domain.configure(fail_next=None)
    domain_revoke(domain, before["refresh"])
    rejected = cog.run("refresh")
    assert rejected.returncode == 77 and "invalid_grant" in rejected.stderr and "sign in again" in rejected.stderr
    assert {kind: stored(bus, kind) for kind in ("access", "id", "refresh")} == before


def domain_revoke(domain, token):
    request = urllib.request.Request(domain.url + "oauth2/revoke", data=urllib.parse.urlencode(
        {"token": token, "client_id": "doubleclient"}).encode(), method="POST")
    urllib.request.urlopen(request, timeout=10).read()


# --- machine credentials --------------------------------------------------------------------------

@pytest.fixture
def machine(cog, double):
    double.configure(client_secret=CLIENT_SECRET, oauth_flows=["code", "client_credentials"],
                     custom_scopes=["orders/read", "orders/write"])
    cog.remember_secret(CLIENT_SECRET)
    configure_on_double(cog, double.url, "--domain", double.url, "--grant", "client-credentials",
                        "--scopes", "orders/read", "--client-secret-stdin", input=CLIENT_SECRET + "\n")
    return double


def test_client_credentials_hand_out_a_machine_token_everywhere(cog, bus, machine):
    signed = cog.run("sign-in")
    assert signed.returncode == 0 and "app client doubleclient, scopes orders/read" in signed.stderr
    assert machine.calls("oauth2/token:client_credentials") == 1
    assert items(bus) == {"access"}
    token = cog.ok("token").stdout.strip()
    assert token == stored(bus, "access")
    assert claims(token)["scope"] == "orders/read" and claims(token)["sub"] == "doubleclient"
    assert cog.ok("get-header").stdout == f"Authorization: Bearer {token}\n"
    # exec and the env format without an ID token (and without fetching one each time).
    shown = cog.ok("exec", "--", "sh", "-c", 'printf %s "$COG_CRED_ACCESS_TOKEN:${COG_CRED_ID_TOKEN-unset}"').stdout
    assert shown == f"{token}:unset"
    assert "unset COG_CRED_ID_TOKEN" in cog.ok("token", "--format", "env").stdout
    assert machine.calls("oauth2/token:client_credentials") == 1
    no_id = cog.run("token", "--id-token")
    assert no_id.returncode == 64 and "no ID token" in no_id.stderr
    status = cog.ok("status").stdout
    assert "grant:         client credentials" in status and "scopes:        orders/read" in status
    assert json.loads(cog.ok("status", "--json").stdout)["grant"] == "client-credentials"
    # Near expiry: fetched again with the client's credentials (no refresh token exists).
    again = cog.ok("token", "--min-ttl", "86400").stdout.strip()
    assert machine.calls("oauth2/token:client_credentials") == 2 and again == stored(bus, "access")


def test_client_credentials_with_a_wrong_secret_or_scope(cog, bus, machine):
    wrong = "not-the-secret-000"
    cog.remember_secret(wrong)
    cog.ok("configure", "--client-secret-stdin", input=wrong + "\n")
    refused = cog.run("sign-in")
    assert refused.returncode == 78 and "the app client or its secret was refused" in refused.stderr
    assert "invalid_client" in refused.stderr and items(bus) == set()
    cog.ok("configure", "--client-secret-stdin", "--scopes", "orders/delete", input=CLIENT_SECRET + "\n")
    scope = cog.run("sign-in")
    assert scope.returncode == 78 and "a scope was refused" in scope.stderr


def test_a_machine_profile_needs_a_domain_and_a_secret(cog):
    no_domain = cog.run("configure", "--user-pool-id", "us-east-1_double", "--client-id", "doubleclient",
                        "--grant", "client-credentials")
    assert no_domain.returncode == 64 and "--domain" in no_domain.stderr
    no_secret = cog.run("configure", "--user-pool-id", "us-east-1_double", "--client-id", "doubleclient",
                        "--grant", "client-credentials", "--domain", "my-app")
    assert no_secret.returncode == 64 and "--client-secret-stdin" in no_secret.stderr
    assert not cog.config_file.exists()


def test_a_client_secret_stays_with_its_app_client(cog, bus, machine):
    """The secret is sent in the Basic header to the profile's domain: to
    another client's domain it must not go."""
    config = cog.config_file.read_text()
    # A machine profile moves to another client only with that client's secret.
    refused = cog.run("configure", "--client-id", "otherclient", "--domain", "http://127.0.0.1:9/")
    assert refused.returncode == 64 and "--client-secret-stdin" in refused.stderr
    assert cog.config_file.read_text() == config and stored(bus, "client-secret") == CLIENT_SECRET
    # The config file edited by hand to name another client: the stored
    # secret is bound to its own client, so it is not read, let alone sent.
    cog.config_file.write_text(config.replace('"doubleclient"', '"otherclient"'))
    edited = cog.run("sign-in")
    assert edited.returncode == 78 and "has none for its user pool and app client" in edited.stderr
    assert machine.calls("oauth2/token:client_credentials") == 0 and stored(bus, "client-secret") == CLIENT_SECRET
    cog.config_file.write_text(config)
    # Re-pointed as a user profile: the old client's secret is deleted, and said so.
    moved = cog.ok("configure", "--client-id", "otherclient", "--grant", "user")
    assert "The app client secret of client doubleclient was removed from the profile" in moved.stderr
    assert stored(bus, "client-secret") is None and "client-secret-in-keyring" not in cog.config_file.read_text()
    # Back to a machine profile of the first client, with its secret given again: it works as before.
    cog.ok("configure", "--client-id", "doubleclient", "--grant", "client-credentials", "--client-secret-stdin",
           input=CLIENT_SECRET + "\n")
    assert cog.run("sign-in").returncode == 0 and machine.calls("oauth2/token:client_credentials") == 1
    # A new client's secret given with the move replaces the old one.
    cog.remember_secret("other-secret-0123456789")
    cog.ok("configure", "--client-id", "otherclient", "--client-secret-stdin", input="other-secret-0123456789\n")
    assert stored(bus, "client-secret") == "other-secret-0123456789"
