"""How secrets travel to the Secret Service.

On a Unix-socket session bus cog-cred opens the spec's "plain" session (every
party that can see that traffic is the user's own process, which could ask the
Secret Service directly); on any other transport it opens
dh-ietf1024-sha256-aes128-cbc-pkcs7, as libsecret does. Both are checked by
watching the bus with dbus-monitor, and the encrypted one against
gnome-keyring's own implementation: what cog-cred stores encrypted,
secret-tool (libsecret, its own session) reads back, and the other way round.
"""
import json
import subprocess
import time

import pytest

from conftest import Bus, wait_until
from support import claims, configure_on_double, stored

USER = "transport@example.com"
PASSWORD = "Transport-Password-7"


def tcp_bus_config(path):
    """A session bus on 127.0.0.1 (DBUS_COOKIE_SHA1 authentication) that lets a
    monitor see everything."""
    path.write_text("""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>tcp:host=127.0.0.1,bind=127.0.0.1,port=0</listen>
<auth>DBUS_COOKIE_SHA1</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>""")
    return path


class Monitor:
    """dbus-monitor on a bus, its output kept in a file."""

    def __init__(self, env, path):
        self.path = path
        self.file = open(path, "w")
        self.proc = subprocess.Popen(["dbus-monitor", "--session"], env=env, stdout=self.file,
                                     stderr=subprocess.DEVNULL)
        # It is listening once its own NameAcquired signal is written.
        wait_until(lambda: "NameAcquired" in path.read_text(), "dbus-monitor")

    def text(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.file.close()
        return self.path.read_text()


def sign_in(cog, double, env):
    double.add_user(USER, PASSWORD)
    configure_on_double(cog, double.url, "--username", USER, env=env)
    cog.remember_secret(PASSWORD)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n", env=env)


def test_on_a_unix_socket_bus_reads_are_plain_and_libsecrets_writes_encrypted(cog, bus, double, tmp_path):
    # Writes go through libsecret (cog-cred-cli), which always asks for the
    # encrypted session first; the reads of both binaries use plain there.
    monitor = Monitor({**cog.env, **bus.env}, tmp_path / "monitor.log")
    sign_in(cog, double, {})
    writes = monitor.text()
    assert 'string "dh-ietf1024-sha256-aes128-cbc-pkcs7"' in writes
    monitor = Monitor({**cog.env, **bus.env}, tmp_path / "monitor-reads.log")
    for command in (["token"], ["get-header"], ["status"]):
        cog.ok(*command)
    reads = monitor.text()
    assert 'string "plain"' in reads and "dh-ietf1024" not in reads


def test_an_address_list_that_also_names_tcp_is_not_plain(cog, bus, double, tmp_path):
    # The same Unix-socket bus, but the address list falls through to TCP:
    # whether the traffic could cross a network depends on which address
    # answers, so only an all-Unix list gets the plain session. The reads go
    # to cog-cred-cli (the front has no encryption) and must still answer.
    mixed = {"DBUS_SESSION_BUS_ADDRESS": bus.address + ";tcp:host=127.0.0.1,port=9"}
    sign_in(cog, double, {})
    monitor = Monitor({**cog.env, **bus.env}, tmp_path / "monitor.log")
    for command in (["token"], ["get-header"], ["exec", "--", "true"]):
        cog.ok(*command, env=mixed)
    traffic = monitor.text()
    assert 'string "dh-ietf1024-sha256-aes128-cbc-pkcs7"' in traffic and 'string "plain"' not in traffic


def test_on_any_other_bus_secrets_travel_encrypted(cog, double, tmp_path, monkeypatch):
    # Cookie authentication keeps its secret under $HOME, which the daemon,
    # the keyring and cog-cred must share.
    monkeypatch.setenv("HOME", str(cog.home))
    private = Bus(tmp_path / "bus", config_file=tcp_bus_config(tmp_path / "bus.conf"))
    try:
        assert private.address.startswith("tcp:")
        env = {**private.env, "HOME": str(cog.home)}
        monitor = Monitor({**cog.env, **env}, tmp_path / "monitor.log")
        sign_in(cog, double, env)
        token = cog.ok("token", env=env).stdout.strip()
        traffic = monitor.text()
        assert 'string "dh-ietf1024-sha256-aes128-cbc-pkcs7"' in traffic and 'string "plain"' not in traffic
        # Neither the token nor any part of it crossed the bus readable.
        assert token[-40:] not in traffic
        # gnome-keyring decrypted what cog-cred sent: libsecret reads it back.
        stored = subprocess.run(["secret-tool", "lookup", "service", "cog-cred", "profile", "default", "kind", "access"],
                                env={**cog.env, **env}, capture_output=True, text=True)
        assert stored.stdout == token
        # And cog-cred decrypts what gnome-keyring sends: the access token as
        # libsecret wrote it (with the same attributes), read by `status`.
        secret_tool = lambda *args, **kw: subprocess.run(["secret-tool", *args], env={**cog.env, **env},
                                                         capture_output=True, text=True, **kw)
        (item,) = private.items(service="cog-cred", profile="default", kind="access")
        secret_tool("clear", "service", "cog-cred", "profile", "default", "kind", "access")
        assert json.loads(cog.run("status", "--json", env=env).stdout).get("access_token_expires_at") is None
        secret_tool("store", "--label=x", *[a for pair in item["attributes"].items() for a in pair], input=token)
        status = json.loads(cog.ok("status", "--json", env=env).stdout)
        exp = claims(token)["exp"]
        assert status["access_token_expires_at"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(exp))
    finally:
        private.stop()



@pytest.mark.parametrize("method", ["OpenSession", "CreateItem", "Delete"])
def test_a_session_the_provider_refuses_once_is_opened_again(cog, bus, locked_service, method):
    """KWallet refuses about one libsecret session in a hundred (kwallet_provider.py).
    A write or a delete that meets it opens a new connection and session
    once and goes on; here against a stand-in that refuses the first such
    call every time."""
    start, calls = locked_service
    old = stored(bus, "access")
    start("unlock", unlocked=True, fail_once=[method])
    result = cog.run("refresh")
    assert result.returncode == 0, result.stderr
    records = calls(details=True)
    # The call failed once, then went through on the new session.
    failed = [record for record in records if record.get("failed")]
    assert [record["call"] for record in failed] == [method]
    later = [record["call"] for record in records[records.index(failed[0]) + 1:]]
    assert ("CreateItem" if method == "OpenSession" else method) in later
    # Each new item replaced exactly one old one, and the next read finds the new token.
    created = [record for record in records if record["call"] == "CreateItem" and not record.get("failed")]
    deleted = [record for record in records if record["call"] == "Delete" and not record.get("failed")]
    assert len(created) == len(deleted) >= 2
    fresh = cog.ok("token").stdout.strip()
    cog.remember_secret(fresh)
    assert fresh and fresh != old


def test_a_search_that_finds_nothing_asks_whether_locked_only_a_provider_that_hides_items(cog, bus, double, locked_service,
                                                                                          tmp_path):
    """A delete that finds nothing must not pass for "nothing stored" on a
    locked provider that hides its items (KeePassXC: test_providers exits
    69 there), so cog-cred asks whether the collection is locked. gnome-keyring
    lists a locked collection's items as locked, so there it is not asked:
    a sign-out's deletes of items that are not there (the identity pool's, a
    remembered device: none here) cost no round trip. The stand-in, another
    program, is asked."""
    sign_in(cog, double, {})
    monitor = Monitor({**cog.env, **bus.env}, tmp_path / "gnome-keyring.log")
    cog.ok("sign-out", "--local")
    assert 'string "Locked"' not in monitor.text()
    start, _ = locked_service
    private = start("unlock", unlocked=True)
    monitor = Monitor({**cog.env, **private.env}, tmp_path / "stand-in.log")
    cog.ok("sign-out", "--local")
    assert 'string "Locked"' in monitor.text()
