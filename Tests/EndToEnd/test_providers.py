"""The whole sequence against each Secret Service users run: gnome-keyring
KeePassXC and KWallet, each the real program from
Debian, headless, on a private session bus (keepassxc_provider.py,
kwallet_provider.py say how each is started).

For each: configure, sign in, `token` equal to what `secret-tool lookup`
finds, get-header, git's protocol, a refresh, sign-out and `token` 77
after it; and while the keyring is locked, exit 69 and never a token. A
running `cog-cred proxy` follows the keyring the same way.
"""
import json
import shutil
import signal
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import Bus, CogCred, wait_until
from proxy_upstream import start_upstream
from support import claims, configure_on_double, lock_collection, poll, read_line
from keepassxc_provider import KeePassXC
from kwallet_provider import KWallet

USER = "pat@example.com"
PASSWORD = "Provider-Password-5"
GIT_HOST = "git.example.com"


class GnomeKeyring:
    """gnome-keyring on a private bus (conftest's Bus), in the same shape."""

    def __init__(self, root):
        self.bus = Bus(root)
        self.env = self.bus.env

    def secret_tool(self, *args, input=None):
        return self.bus.secret_tool(*args, input=input)

    def lock(self):
        lock_collection(self.bus)

    def unlock(self):
        # Headless there is no dialog to type the password into: a new daemon
        # takes over (--replace) and unlocks the keyring with it.
        self.bus.keyring.terminate()
        self.bus.keyring.wait(timeout=10)
        wait_until(lambda: not self.bus.has_secret_service(), "the old gnome-keyring to leave")
        self.bus.start_keyring()

    def stop(self):
        self.bus.stop()


def started(kind, tmp_path):
    if kind == "gnome-keyring":
        return GnomeKeyring(tmp_path / "gnome-keyring")
    if kind == "keepassxc":
        if not shutil.which("keepassxc"):
            pytest.skip("keepassxc is not installed (scripts/install-deps installs it)")
        return KeePassXC(tmp_path / "keepassxc").start()
    if not shutil.which("kwalletd5"):
        pytest.skip("kwalletd5 is not installed (scripts/install-deps installs it)")
    return KWallet(tmp_path / "kwallet").start()


@pytest.fixture(params=["gnome-keyring", "keepassxc", "kwallet"])
def provider(request, binary, double, tmp_path):
    keyring = started(request.param, tmp_path)
    keyring.secret_tool("clear", "service", "cog-cred")
    home = tmp_path / "home"
    home.mkdir()
    cog = CogCred(binary, {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "config"),
                           "LANG": "C.UTF-8", **keyring.env}, home)
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER, "--git-url", f"https://{GIT_HOST}/")
    yield request.param, keyring, cog
    keyring.stop()


def lookup(keyring, kind):
    """secret-tool's answer; asked up to three times, since libsecret's
    encrypted session with KWallet fails silently about once in a hundred
    (kwallet_provider.py): the test's own reader must not make it flaky."""
    for _ in range(3):
        found = keyring.secret_tool("lookup", "service", "cog-cred", "profile", "default", "kind", kind)
        if found.returncode == 0:
            return found.stdout
    return None


def item_paths(keyring, kind):
    """The D-Bus paths of the profile's items of `kind` (asked up to three
    times, as `lookup` is)."""
    for _ in range(3):
        found = keyring.secret_tool("search", "--all", "service", "cog-cred", "profile", "default", "kind", kind)
        if found.returncode == 0 or not found.stderr:
            return sorted(line.strip("[]") for line in found.stdout.splitlines() if line.startswith("[/"))
    return None


def test_sign_in_hand_out_refresh_and_sign_out(provider, double):
    name, keyring, cog = provider
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    token = cog.ok("token").stdout.strip()
    cog.remember_secret(token)
    assert token == lookup(keyring, "access"), name
    assert cog.ok("get-header").stdout == f"Authorization: Bearer {token}\n"
    git = cog.ok("git-credential", "get", input=f"protocol=https\nhost={GIT_HOST}\n\n").stdout
    assert f"password={token}\n" in git
    # A refresh stores the new access token where the next read finds it:
    # one item, gnome-keyring's and KWallet's updated in place (CreateItem's
    # replace), KeePassXC's a new item with the old one deleted (it answers a
    # replace with a dialog).
    before = item_paths(keyring, "access")
    cog.ok("refresh")
    refreshed = cog.ok("token").stdout.strip()
    cog.remember_secret(refreshed)
    assert refreshed == lookup(keyring, "access") and double.calls("GetTokensFromRefreshToken") == 1
    after = item_paths(keyring, "access")
    assert len(before) == 1 and len(after) == 1, (name, before, after)
    assert (after == before) == (name in ("gnome-keyring", "kwallet")), (name, before, after)
    # Signed out: the items are gone, and nothing is handed out.
    cog.ok("sign-out", "--local")
    assert all(lookup(keyring, kind) is None for kind in ("access", "id", "refresh"))
    signed_out = cog.run("token")
    assert signed_out.returncode == 77 and signed_out.stdout == ""


def test_signing_in_again_and_again_keeps_one_item_of_each_kind(provider, double):
    """Each sign-in replaces the profile's items: KWallet, given a new item
    beside the old one (the same label) and the old one deleted, lost the
    new refresh token about one time in three, so the refresh after it said
    "not signed in". Ten rounds make a miss of that unlikely (0.7^10)."""
    name, keyring, cog = provider
    for round in range(10):
        cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
        refreshed = cog.run("refresh")
        assert refreshed.returncode == 0, (name, round, refreshed.stderr)
    assert [len(item_paths(keyring, kind)) for kind in ("access", "id", "refresh")] == [1, 1, 1], name


def test_a_remembered_device_with_real_git_then_taken_away(provider, double, tmp_path):
    """A pool that remembers devices: the device item on each provider, MFA
    once, a refresh for real git that carries the device key; then the
    keyring locked (a sign-in says 69 and changes nothing) and the item
    deleted by another program (the next refresh is refused, as Cognito
    refuses a device's session without it)."""
    name, keyring, cog = provider
    double.configure(device_tracking="always")
    totp = double.add_totp_user(USER, PASSWORD)

    def sign_in(*flags):
        return subprocess.run([cog.binary, "sign-in", "--password-stdin", *flags], env=cog.env, input=PASSWORD + "\n",
                              capture_output=True, text=True, start_new_session=True, timeout=60)

    first = sign_in("--mfa-code", totp.now())
    assert first.returncode == 0, (name, first.stderr)
    device = json.loads(lookup(keyring, "device"))
    cog.remember_secret(device["device_password"])
    assert device["confirmed"], name
    second = sign_in()  # no code, no terminal: only a remembered device gets through
    assert second.returncode == 0, (name, second.stderr)
    assert double.calls("RespondToAuthChallenge:DEVICE_PASSWORD_VERIFIER") == 1
    assert double.calls("RespondToAuthChallenge:SOFTWARE_TOKEN_MFA") == 1

    # Real git asks the helper; the token is made old first, so the helper refreshes.
    links = tmp_path / "bin"
    links.mkdir()
    (links / "git-credential-cog-cred").symlink_to(cog.binary)
    double.configure(issued_at_offset=-7200, token_lifetime=3600)
    cog.ok("refresh")
    double.configure(issued_at_offset=0)
    git = subprocess.run(["git", "-c", "credential.helper=cog-cred", "credential", "fill"],
                         input=f"protocol=https\nhost={GIT_HOST}\n\n", capture_output=True, text=True, timeout=60,
                         env={**cog.env, "PATH": f"{links}:/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1",
                              "GIT_TERMINAL_PROMPT": "0", "HOME": str(cog.home)})
    assert git.returncode == 0, (name, git.stderr)
    token = lookup(keyring, "access")
    cog.remember_secret(token)
    assert f"password={token}\n" in git.stdout, name
    refreshes = [r for r in double.stats()["requests"] if r["action"] == "GetTokensFromRefreshToken"]
    assert len(refreshes) == 2 and all(r["device_key_sent"] and r["status"] == 200 for r in refreshes), name

    keyring.lock()
    locked = sign_in("--no-prompt")
    assert locked.returncode == 69 and "locked" in locked.stderr, (name, locked.stderr)
    keyring.unlock()
    assert json.loads(lookup(keyring, "device")) == device, name

    keyring.secret_tool("clear", "service", "cog-cred", "kind", "device")
    refused = cog.run("refresh")
    assert refused.returncode == 77 and "sign in again" in refused.stderr, (name, refused.stderr)


def test_locked_is_69_and_never_a_token(provider):
    name, keyring, cog = provider
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    keyring.lock()
    for args in (["token"], ["get-header"], ["token", "--min-ttl", "86400"]):
        result = cog.run(*args, "--no-prompt")
        assert result.returncode == 69 and result.stdout == "", (name, args, result.stderr)
        assert "locked" in result.stderr
    keyring.unlock()
    assert cog.ok("token").stdout.strip() == lookup(keyring, "access")


def test_a_running_proxy_follows_the_keyring(provider, double):
    """The proxy sends the keyring's token; items deleted by another tool,
    401; signed in again, served; locked, 503: each within the second it
    may hold a token (polled for 3 s, room for a loaded machine), and
    nothing sent once refused."""
    name, keyring, cog = provider
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    token = lookup(keyring, "access").strip()
    cog.remember_secret(token)
    upstream, url = start_upstream(double)
    proxy = subprocess.Popen([cog.binary, "proxy", "--upstream", url], env=cog.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)

    def status(path):
        try:
            with urllib.request.urlopen(f"{address}{path}", timeout=30) as answer:
                return answer.status
        except urllib.error.HTTPError as refused:
            return refused.code

    def answered(path, expected):
        poll(lambda: status(path) == expected, f"{name}: the proxy to answer {expected}", seconds=3)

    try:
        address = read_line(proxy.stdout.fileno(), 30).strip()
        assert address.startswith("http://127.0.0.1:"), (name, address, proxy.poll())
        assert status("/echo/first") == 200, name
        assert [e["jti"] for e in upstream.requests()] == [claims(token)["jti"]], name
        keyring.secret_tool("clear", "service", "cog-cred")
        answered("/echo/deleted", 401)
        seen = len(upstream.requests())
        assert status("/echo/after") == 401 and len(upstream.requests()) == seen, name
        # Signed in again: served again. Then locked: 503, and nothing sent.
        cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
        cog.remember_secret(lookup(keyring, "access").strip())
        answered("/echo/again", 200)
        keyring.lock()
        answered("/echo/locked", 503)
        seen = len(upstream.requests())
        assert status("/echo/still-locked") == 503 and len(upstream.requests()) == seen, name
    finally:
        proxy.send_signal(signal.SIGTERM)
        assert proxy.wait(timeout=15) == 0, (name, proxy.stderr.read())
        said = proxy.stderr.read().decode()
        proxy.stdout.close()
        proxy.stderr.close()
        upstream.shutdown()
        upstream.server_close()
    assert token not in said


def test_unlock_by_password_is_gnome_keyrings_alone(provider):
    """`cog-cred unlock` unlocks gnome-keyring with its password; KeePassXC
    and KWallet have no such call, and are refused (69) by name before
    any password is sent to them."""
    name, keyring, cog = provider
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    keyring.lock()
    cog.remember_secret("test-keyring-password")
    result = cog.run("unlock", "--password-stdin", input="test-keyring-password\n")
    if name == "gnome-keyring":
        assert (result.returncode, result.stderr) == (0, "Keyring unlocked.\n"), result.stderr
        assert cog.ok("token").stdout.strip() == lookup(keyring, "access")
        return
    assert result.returncode == 69 and result.stderr.count("\n") == 1, (name, result.stderr)
    said = {"keepassxc": "KeePassXC", "kwallet": "KWallet"}[name]
    assert f"the Secret Service here is {said}, not gnome-keyring" in result.stderr
    assert "docs/headless.md" in result.stderr


def signed_in_cog(binary, double, keyring, tmp_path):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    cog = CogCred(binary, {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "config"),
                           "LANG": "C.UTF-8", **keyring.env}, home)
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    return cog


def test_keepassxc_with_its_defaults_and_no_display_names_the_setting(binary, double, tmp_path):
    """KeePassXC confirms each client's access to an entry by default: with
    no display to confirm on, 69 at once, saying which setting lets
    command-line tools read."""
    if not shutil.which("keepassxc"):
        pytest.skip("keepassxc is not installed (scripts/install-deps installs it)")
    keyring = KeePassXC(tmp_path / "keepassxc", confirm_access=True, confirm_delete=True, unlock_before_search=True).start()
    try:
        cog = signed_in_cog(binary, double, keyring, tmp_path)  # writes need no confirmation
        for args in (["token"], ["get-header"]):
            result = cog.run(*args)
            assert result.returncode == 69 and result.stdout == "", result.stderr
            assert "KeePassXC" in result.stderr and "ConfirmAccessItem" in result.stderr
    finally:
        keyring.stop()


def test_a_locked_keepassxc_database_is_named_not_called_stuck(binary, double, tmp_path):
    """A locked database with "unlock before search" (the default) holds every
    search while it shows its own unlock dialog: cog-cred gives up and says so."""
    if not shutil.which("keepassxc"):
        pytest.skip("keepassxc is not installed (scripts/install-deps installs it)")
    keyring = KeePassXC(tmp_path / "keepassxc", unlock_before_search=True).start()
    try:
        cog = signed_in_cog(binary, double, keyring, tmp_path)
        keyring.lock()
        result = cog.run("token")
        assert result.returncode == 69 and result.stdout == ""
        assert "KeePassXC" in result.stderr and "stuck" not in result.stderr and "gnome-keyring" not in result.stderr
    finally:
        keyring.stop()


def test_kwallet_not_yet_opened_for_clients_is_named(binary, double, tmp_path):
    """kwalletd counts the wallet as locked for Secret Service clients until
    one asks (after an SSH login nothing has): 69, saying what to do."""
    if not shutil.which("kwalletd5"):
        pytest.skip("kwalletd5 is not installed (scripts/install-deps installs it)")
    keyring = KWallet(tmp_path / "kwallet").start()
    try:
        cog = signed_in_cog(binary, double, keyring, tmp_path)
        keyring.restart()  # as after a new login: open, but locked for the Secret Service
        result = cog.run("token")
        assert result.returncode == 69 and result.stdout == ""
        assert "KWallet" in result.stderr and "gnome-keyring" not in result.stderr
        keyring.unlock_for_secret_service()
        assert cog.ok("token").stdout.strip() == lookup(keyring, "access")
    finally:
        keyring.stop()
