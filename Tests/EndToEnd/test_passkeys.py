"""Passkeys from the terminal, end to end: a passkey made on a security key
(`passkey add`), listed and removed, and a sign-in with it (`sign-in
--method passkey`), against the project's Cognito test double (python-fido2's
Fido2Server verifies every ceremony) with the tests' software authenticator
on a UNIX socket, reached through libfido2 as a USB key would be.
"""
import json
import socket
import subprocess
import time

import pytest

from soft_authenticator import SoftAuthenticator
from support import all_stored, answered, b64url, configure_on_double, no_terminal, sign_in_by_pasting, stored

PASSWORD = "Passkey-Password-1"
USER = "pat@example.com"
RP = "auth.cog-cred.test"
PIN = "246813"
# What a key is asked that uses its credentials or its PIN (GetInfo, which
# opening a device sends, is neither).
USES_THE_KEY = {"MakeCredential", "GetAssertion", "GetNextAssertion"}


@pytest.fixture
def key(tmp_path):
    with SoftAuthenticator(tmp_path) as key:
        yield key


@pytest.fixture
def pool(cog, double):
    """A pool that offers passkeys for RP, and PAT signed in with the password
    (on a profile that pins RP and signs in by choice)."""
    double.configure(allowed_first_auth_factors=["PASSWORD", "WEB_AUTHN"], webauthn_rp_id=RP)
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD, PIN)
    configure_on_double(cog, double.url, "--username", USER, "--auth-flow", "choice", "--passkey-rp-id", RP)
    cog.ok("sign-in", "--method", "password", "--password-stdin", input=PASSWORD + "\n")
    return double


@pytest.fixture
def registered(cog, bus, pool, key):
    """PAT's passkey on `key`, and PAT signed out."""
    result = add(cog, key)
    assert result.returncode == 0, result.stderr
    sign_out(cog, bus)
    return key


def add(cog, key, *args, **kw):
    return cog.run("passkey", "add", "--authenticator", key.device, *args, **kw)


def passkey_sign_in(cog, key, *args, **kw):
    return cog.run("sign-in", "--method", "passkey", "--authenticator", key.device, *args, **kw)


def sign_out(cog, bus):
    cog.ok("sign-out", "--local")
    assert stored(bus, "refresh") is None


def key_uses(key):
    """What the key was asked that uses a credential or the PIN."""
    return [c for c in key.commands if c in USES_THE_KEY or c.startswith("ClientPIN")]


def passkeys(double):
    """PAT's passkeys as the double keeps them."""
    return double.admin(f"passkeys?username={USER}")["passkeys"]


def nothing_stored(bus):
    return all(value is None for value in all_stored(bus).values())


# --- The whole life -----------------------------------------------------------

def test_a_passkey_added_then_signs_in_without_a_password(cog, bus, pool, key):
    added = add(cog, key)
    assert added.returncode == 0, added.stderr
    assert "Touch your security key" in added.stderr and "Added passkey 'Security key'" in added.stderr
    [made] = key.credentials
    assert made.rp_id == RP and made.resident
    assert key.requests[[name for name, _ in key.requests].index("MakeCredential")][1] is not None
    listed = json.loads(cog.ok("passkey", "list", "--json").stdout)
    assert [(p["id"], p["name"], p["relying_party"]) for p in listed] == [(b64url(made.credential_id), "Security key", RP)]
    line = cog.ok("passkey", "list").stdout
    assert b64url(made.credential_id) in line and "cross-platform" in line
    sign_out(cog, bus)

    # No password is read: standard input is empty.
    signed = passkey_sign_in(cog, key, input="")
    assert signed.returncode == 0, signed.stderr
    assert "Touch your security key" in signed.stderr and f"Signed in as {USER}" in signed.stderr
    assert stored(bus, "refresh") and cog.ok("token").stdout.strip()
    assert made.sign_count == 1
    [sent] = [r for r in pool.stats()["requests"] if r.get("action") == "InitiateAuth" and r.get("preferred_challenge") == "WEB_AUTHN"]
    assert "PASSWORD" not in sent["parameter_names"] and "SRP_A" not in sent["parameter_names"]
    # Everything else is as after any sign-in: a refresh, then status asks Cognito.
    cog.ok("refresh")
    assert cog.ok("status", "--json").stdout and json.loads(cog.ok("status", "--json").stdout)["session"]


def passkey_answers(double):
    """What each WEB_AUTHN answer carried (the double records names only)."""
    return [r for r in double.stats()["requests"] if r.get("action") == "RespondToAuthChallenge" and r.get("challenge") == "WEB_AUTHN"]


def test_a_secret_hash_and_the_device_go_with_the_passkey(cog, bus, registered, double):
    double.configure(client_secret="passkey-client-secret", device_tracking="always")
    cog.remember_secret("passkey-client-secret")
    cog.ok("configure", "--client-secret-stdin", input="passkey-client-secret\n")
    first = passkey_sign_in(cog, registered)
    assert first.returncode == 0, first.stderr
    # This machine is made the user's device; a user asked for no MFA is told nothing of it (#50).
    assert double.calls("ConfirmDevice") == 1 and "device" not in first.stderr
    assert "SECRET_HASH" in passkey_answers(double)[-1]["parameter_names"]
    sign_out(cog, bus)
    # Signed in again from the remembered device: every step names it.
    again = passkey_sign_in(cog, registered)
    assert again.returncode == 0, again.stderr
    answer = passkey_answers(double)[-1]
    assert "DEVICE_KEY" in answer["parameter_names"] and "SECRET_HASH" in answer["parameter_names"]


def test_the_profiles_method_and_the_environments_key(cog, bus, registered, double):
    configure_on_double(cog, double.url, "--method", "passkey")
    result = cog.run("sign-in", env={"COG_CRED_AUTHENTICATOR": registered.device})
    assert result.returncode == 0, result.stderr
    assert stored(bus, "refresh")


def test_the_pools_list_offers_the_passkey(cog, bus, registered):
    # Without a method and without a terminal: the choices, passkey among them.
    result = no_terminal(cog, "sign-in")
    assert result.returncode == 77 and "passkey" in result.stderr and "--method" in result.stderr, result.stderr
    assert nothing_stored(bus)


def test_a_passkey_chosen_from_the_list_on_a_terminal(cog, bus, registered):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(cog.binary, ["sign-in", "--authenticator", registered.device], env=cog.env, encoding="utf-8", timeout=30)
    child.expect(r"Sign in with: (.*)\? ")
    choices = child.match.group(1)
    number = [part.split(")")[0] for part in choices.split("  ") if part.endswith("passkey")][0]
    child.sendline(number)
    child.expect("Touch your security key")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert stored(bus, "refresh")


# --- The relying party is the profile's -----------------------------------------

def test_a_challenge_for_another_relying_party_never_reaches_the_key(cog, bus, registered, double):
    double.configure(webauthn_rp_id="evil.example")
    before = len(registered.commands)
    result = passkey_sign_in(cog, registered)
    assert result.returncode == 76, result.stderr
    assert "evil.example" in result.stderr and RP in result.stderr and "not asked" in result.stderr
    assert key_uses_after(registered, before) == []
    assert nothing_stored(bus)


def test_registration_options_for_another_relying_party_never_reach_the_key(cog, bus, pool, key):
    pool.configure(webauthn_rp_id="evil.example")
    result = add(cog, key)
    assert result.returncode == 76 and "evil.example" in result.stderr, result.stderr
    assert key_uses(key) == [] and key.credentials == []
    assert passkeys(pool) == []


def key_uses_after(key, count):
    return [c for c in key.commands[count:] if c in USES_THE_KEY or c.startswith("ClientPIN")]


def test_a_profile_without_a_relying_party_sends_nothing(cog, bus, double, key):
    double.configure(allowed_first_auth_factors=["PASSWORD", "WEB_AUTHN"], webauthn_rp_id=RP)
    double.add_user(USER, PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    before = len([r for r in double.stats()["requests"] if r.get("action") == "InitiateAuth"])
    result = passkey_sign_in(cog, key)
    assert result.returncode == 78 and "--passkey-rp-id" in result.stderr, result.stderr
    assert len([r for r in double.stats()["requests"] if r.get("action") == "InitiateAuth"]) == before
    assert key.commands == []


@pytest.mark.parametrize("bad", ["https://auth.example.com", "auth.example.com:443", "Auth.Example.com", "auth..example.com", "x-.example"])
def test_a_relying_party_id_is_a_host_name(cog, double, bad):
    configure_on_double(cog, double.url, "--passkey-rp-id", RP)
    result = cog.run("configure", "--passkey-rp-id", bad)
    assert result.returncode == 64 and "not a relying party id" in result.stderr, result.stderr
    assert json.loads(cog.config_file.read_text())["profiles"]["default"]["passkey-rp-id"] == RP


def test_the_domains_host_is_the_default_relying_party(cog, bus, double, key):
    double.configure(allowed_first_auth_factors=["PASSWORD", "WEB_AUTHN"], webauthn_rp_id=RP)
    double.add_user(USER, PASSWORD)
    configure_on_double(cog, double.url, "--username", USER, "--domain", f"https://{RP}")
    cog.ok("sign-in", "--method", "password", "--password-stdin", input=PASSWORD + "\n")
    assert add(cog, key).returncode == 0
    sign_out(cog, bus)
    result = passkey_sign_in(cog, key)
    assert result.returncode == 0, result.stderr


# --- The PIN ---------------------------------------------------------------------

@pytest.fixture
def pin_key(tmp_path):
    with SoftAuthenticator(tmp_path, pin=PIN) as key:
        yield key


def test_a_key_with_a_pin_asks_for_it_and_tries_it_once(cog, bus, pool, pin_key):
    pool.configure(webauthn_user_verification="required")
    # Registration on a key with a PIN needs it.
    assert add(cog, pin_key, "--pin-stdin", input=PIN + "\n").returncode == 0
    sign_out(cog, bus)

    tokens = pin_key.commands.count("ClientPIN.getPINToken")
    wrong = passkey_sign_in(cog, pin_key, "--pin-stdin", input="000000\n")
    assert wrong.returncode == 77 and "PIN is incorrect; 7 tries left" in wrong.stderr, wrong.stderr
    # Refused before any touch is asked for: no word of one (#50).
    assert "Touch" not in wrong.stderr and len(wrong.stderr.splitlines()) == 1, wrong.stderr
    # Tried once: one of the key's retries spent, no second try.
    assert pin_key.pin_retries == 7 and pin_key.commands.count("ClientPIN.getPINToken") == tokens + 1
    assert nothing_stored(bus)

    # Traced too: the PIN reaches no line of it (cog.run checks every secret it knows).
    right = passkey_sign_in(cog, pin_key, "--pin-stdin", "--debug", input=PIN + "\n")
    assert right.returncode == 0, right.stderr
    assert "RespondToAuthChallenge" in right.stderr
    assert stored(bus, "refresh") and pin_key.pin_retries == 8


def test_the_pin_on_a_terminal(cog, bus, pool, pin_key):
    pexpect = pytest.importorskip("pexpect")
    assert add(cog, pin_key, "--pin-stdin", input=PIN + "\n").returncode == 0
    sign_out(cog, bus)
    child = pexpect.spawn(cog.binary, ["sign-in", "--method", "passkey", "--authenticator", pin_key.device],
                          env=cog.env, encoding="utf-8", timeout=30)
    child.expect(r"PIN for the security key \(8 tries left\): ")
    child.sendline(PIN)
    child.expect("Touch your security key")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and stored(bus, "refresh")


def test_the_touch_is_asked_for_only_once_the_pin_was_accepted(cog, bus, pool, pin_key):
    assert add(cog, pin_key, "--pin-stdin", input=PIN + "\n").returncode == 0
    sign_out(cog, bus)
    pin_key.presence = "wait"
    before = len(pin_key.commands)
    proc = subprocess.Popen([cog.binary, "sign-in", "--method", "passkey", "--authenticator", pin_key.device, "--pin-stdin"],
                            env=cog.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdin.write(PIN + "\n")
    proc.stdin.close()
    line = proc.stderr.readline()
    assert "Touch your security key" in line
    # By then the key had checked the PIN (a PIN token, then an assertion
    # without a touch) and had not yet been asked for the one that signs.
    asked = [c for c in pin_key.commands[before:] if c in USES_THE_KEY or c.startswith("ClientPIN")]
    assert asked[:4] == ["ClientPIN.getRetries", "ClientPIN.getKeyAgreement", "ClientPIN.getPINToken", "GetAssertion"], asked
    assert pin_key.waiting_for_touch.wait(20)
    pin_key.touch()
    assert proc.wait(timeout=30) == 0, proc.stderr.read()
    assert stored(bus, "refresh")


def test_a_wrong_pin_on_a_terminal_says_nothing_of_a_touch(cog, bus, pool, pin_key):
    pexpect = pytest.importorskip("pexpect")
    assert add(cog, pin_key, "--pin-stdin", input=PIN + "\n").returncode == 0
    sign_out(cog, bus)
    child = pexpect.spawn(cog.binary, ["sign-in", "--method", "passkey", "--authenticator", pin_key.device],
                          env=cog.env, encoding="utf-8", timeout=30)
    child.expect(r"PIN for the security key \(8 tries left\): ")
    child.sendline("000000")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 77 and "PIN is incorrect" in child.before and "Touch" not in child.before, child.before


def test_a_pin_needed_without_a_terminal_names_the_flag(cog, bus, pool, pin_key):
    result = no_terminal(cog, "passkey", "add", "--authenticator", pin_key.device)
    assert result.returncode == 64 and "--pin-stdin" in result.stderr, result.stderr
    assert key_uses(pin_key) == ["ClientPIN.getRetries"] and pin_key.credentials == []


def test_a_blocked_pin_is_said_without_asking(cog, bus, pool, tmp_path):
    with SoftAuthenticator(tmp_path, pin=PIN, pin_retries=0) as blocked:
        result = add(cog, blocked, "--pin-stdin", input=PIN + "\n")
    assert result.returncode == 77 and "PIN is blocked" in result.stderr, result.stderr
    assert blocked.credentials == []


def test_a_key_that_verifies_by_itself_needs_no_pin(cog, bus, pool, tmp_path):
    pool.configure(webauthn_user_verification="required")
    with SoftAuthenticator(tmp_path, builtin_uv=True) as fingerprint:
        assert add(cog, fingerprint, input="").returncode == 0
        sign_out(cog, bus)
        result = passkey_sign_in(cog, fingerprint, input="")
    assert result.returncode == 0, result.stderr
    assert not [c for c in fingerprint.commands if c.startswith("ClientPIN")]
    # CTAP2's options member: 7 in MakeCredential, 5 in GetAssertion.
    options = [params.get({"MakeCredential": 7, "GetAssertion": 5}[name]) or {} for name, params in fingerprint.requests
               if name in ("MakeCredential", "GetAssertion")]
    assert len(options) >= 2 and all(o.get("uv") is True for o in options)


def test_verification_required_from_a_key_without_a_pin(cog, bus, pool, key):
    pool.configure(webauthn_user_verification="required")
    result = add(cog, key)
    assert result.returncode == 77 and "no PIN" in result.stderr, result.stderr
    assert key_uses(key) == []


# --- The person at the key ------------------------------------------------------

def test_the_touch_is_asked_for_while_the_key_waits(cog, bus, registered):
    registered.presence = "wait"
    proc = subprocess.Popen([cog.binary, "sign-in", "--method", "passkey", "--authenticator", registered.device],
                            env=cog.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    # Said before the key blocks, and while it waits.
    assert "Touch your security key" in line
    assert registered.waiting_for_touch.wait(20)
    registered.touch()
    assert proc.wait(timeout=30) == 0, proc.stderr.read()
    assert stored(bus, "refresh")


def test_the_time_at_the_key_is_not_the_networks(cog, bus, registered, double):
    """--command-timeout bounds what Cognito takes, not the person: a touch
    that comes after the whole limit still leaves the answer its time."""
    configure_on_double(cog, double.url, "--command-timeout", "1")
    registered.presence = "wait"
    proc = subprocess.Popen([cog.binary, "sign-in", "--method", "passkey", "--authenticator", registered.device],
                            env=cog.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert registered.waiting_for_touch.wait(20)
    # Past the command's whole limit: counted from the start, the next call would have none left.
    time.sleep(1.5)
    registered.touch()
    assert proc.wait(timeout=30) == 0, proc.stderr.read()
    assert stored(bus, "refresh")


def test_a_declined_key_stores_nothing(cog, bus, registered):
    registered.presence = "deny"
    result = passkey_sign_in(cog, registered)
    assert result.returncode == 77 and "declined" in result.stderr, result.stderr
    assert nothing_stored(bus)


def test_a_touch_that_never_comes_ends_at_the_options_timeout(cog, bus, registered, double):
    double.configure(session_lifetime=2)
    registered.presence = "never"
    result = passkey_sign_in(cog, registered)
    assert result.returncode == 77 and "not touched within 2 s" in result.stderr, result.stderr
    assert nothing_stored(bus)


def test_a_key_that_never_answers_is_given_up_at_the_options_timeout(cog, bus, registered, double, tmp_path):
    """Opening a key is itself an exchange with it (CTAPHID INIT): a key
    that takes the connection and never answers is given up after the
    options' timeout, not waited for past every deadline."""
    double.configure(session_lifetime=2)
    path = tmp_path / "silent.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
        silent.bind(str(path))
        silent.listen(1)  # connections wait in the backlog: accepted by the kernel, never answered
        result = cog.run("sign-in", "--method", "passkey", "--authenticator", f"unix:{path}", timeout=30)
    assert result.returncode == 69 and "did not answer within 2 s" in result.stderr, result.stderr
    assert nothing_stored(bus)


def test_a_key_without_this_users_passkey(cog, bus, registered, tmp_path):
    with SoftAuthenticator(tmp_path) as other:
        result = passkey_sign_in(cog, other)
    assert result.returncode == 77 and "holds no passkey" in result.stderr, result.stderr
    assert nothing_stored(bus)


def test_a_key_that_holds_one_already_says_so(cog, bus, pool, key):
    assert add(cog, key).returncode == 0
    again = add(cog, key)
    assert again.returncode == 77 and "already" in again.stderr, again.stderr
    assert len(key.credentials) == 1 and len(passkeys(pool)) == 1


def test_one_key_among_the_users_several(cog, bus, pool, key, tmp_path):
    """Cognito lists every passkey of the user's, on other keys too; a key
    takes one credential a list (CTAP 2.0): it is asked, without a touch,
    which it holds, then signs with that one."""
    with SoftAuthenticator(tmp_path) as first:
        assert add(cog, first).returncode == 0
    assert add(cog, key).returncode == 0
    sign_out(cog, bus)
    result = passkey_sign_in(cog, key)
    assert result.returncode == 0, result.stderr
    assertions = [params for name, params in key.requests if name == "GetAssertion"]
    silent = [p for p in assertions if (p.get(5) or {}).get("up") is False]
    touched = [p for p in assertions if (p.get(5) or {}).get("up") is not False]
    assert len(silent) == 2 and all(len(p[3]) == 1 for p in silent)
    [signed] = touched
    assert [d["id"] for d in signed[3]] == [key.credentials[0].credential_id]


def test_no_key_there(cog, bus, pool, tmp_path):
    missing = f"unix:{tmp_path}/no-such-key.sock"
    result = cog.run("passkey", "add", "--authenticator", missing)
    assert result.returncode == 69 and missing in result.stderr and "no virtual key serves" in result.stderr, result.stderr


# --- Management --------------------------------------------------------------------

def test_removing_a_passkey(cog, bus, pool, key):
    assert add(cog, key).returncode == 0
    [made] = key.credentials
    unknown = cog.run("passkey", "remove", "AAAAAAAAAAAAAAAAAAAAAA")
    assert unknown.returncode == 65 and "no passkey with that id" in unknown.stderr, unknown.stderr
    cog.ok("passkey", "remove", b64url(made.credential_id))
    assert passkeys(pool) == [] and json.loads(cog.ok("passkey", "list", "--json").stdout) == []
    sign_out(cog, bus)
    # The key still holds it; Cognito no longer offers a passkey to this user:
    # one line saying how to add one (#50).
    result = passkey_sign_in(cog, key)
    assert result.returncode == 77, result.stderr
    assert result.stderr.startswith("cog-cred: error: Cognito offers this user no passkey (it offers "), result.stderr
    assert result.stderr.endswith("): sign in another way, then add one on your security key with cog-cred passkey add\n")
    assert len(result.stderr.splitlines()) == 1
    assert key_uses(key) == ["MakeCredential"] and nothing_stored(bus)


def test_every_page_is_listed(cog, bus, pool, tmp_path):
    # 21 keys, 21 passkeys: more than one page of ListWebAuthnCredentials (20 a page).
    for n in range(21):
        with SoftAuthenticator(tmp_path) as one:
            assert add(cog, one).returncode == 0
    listed = json.loads(cog.ok("passkey", "list", "--json").stdout)
    assert len(listed) == 21 == len({p["id"] for p in listed})
    assert len([r for r in pool.stats()["requests"] if r.get("action") == "ListWebAuthnCredentials"]) >= 2


def test_a_browser_sessions_token_without_the_admin_scope_says_so(cog, bus, domain):
    """The managed login asks openid email profile unless told otherwise:
    such a token cannot manage passkeys, and the error names the scope and
    --scopes."""
    sign_in_by_pasting(cog)
    result = cog.run("passkey", "list")
    assert result.returncode == 77, result.stderr
    assert "aws.cognito.signin.user.admin" in result.stderr and "--scopes" in result.stderr


def test_a_bad_id_is_a_usage_error(cog, bus, pool):
    result = cog.run("passkey", "remove", "not/an id")
    assert result.returncode == 64 and "not a passkey id" in result.stderr
    for extra in (["AAAA"], ["A" * 22, "B" * 22], []):
        result = cog.run("passkey", "remove", *extra)
        assert result.returncode == 64 and len(result.stderr.splitlines()) == 1, result.stderr


@pytest.mark.parametrize("before", [[], ["--"], ["--yes"]])
def test_an_id_that_begins_with_a_dash_is_an_id(cog, bus, pool, key, before):
    """base64url: one id in 64 begins with "-", and is still what passkey
    list printed: it goes to Cognito, where a short option would not."""
    assert add(cog, key).returncode == 0
    result = cog.run("passkey", "remove", *before, "-" + "A" * 21)
    assert result.returncode == 65 and "no passkey with that id" in result.stderr, result.stderr
    assert pool.calls("DeleteWebAuthnCredential") == 1 and len(passkeys(pool)) == 1
    typo = cog.run("passkey", "remove", "--yse")
    assert typo.returncode == 64 and "unknown option '--yse'" in typo.stderr, typo.stderr


@pytest.mark.parametrize("how", ["n", "y", "--yes", "no terminal"])
def test_removing_a_passkey_asks_first_on_a_terminal(cog, bus, pool, key, how):
    assert add(cog, key).returncode == 0
    [made] = key.credentials
    status, said = answered(cog, ["passkey", "remove", b64url(made.credential_id)], how)
    if how == "n":
        assert status == 1 and f"Remove passkey {b64url(made.credential_id)}?" in said and "answered no" in said
        assert len(passkeys(pool)) == 1 and pool.calls("DeleteWebAuthnCredential") == 0
        return
    assert status == 0, said
    assert ("[y/N]" in said) == (how == "y")
    assert passkeys(pool) == []
