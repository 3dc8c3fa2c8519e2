"""Remembered devices end to end, against the project's Cognito test double
(moto has no device tracking): MFA asked on a machine's first sign-in and
not after, the pool's two settings (always, the user's choice), refreshes
that carry the device key, `devices` and `devices forget`, a device
forgotten elsewhere, sign-out keeping the device, a deleted or re-pointed
profile losing it, another user never offered it, and the device's secret
on no command line, in no environment, file, log or stderr.

The double keeps each device's SRP verifier and checks the device's proof
against it (its arithmetic cross-checked with pycognito in
test_double_selfcheck.py), and refuses a device-bound refresh token without
its device key, as Cognito does.
"""
import json
import re
import socket
import subprocess
from pathlib import Path

import pytest

from support import answered, configure_on_double, on_terminal, stored

PASSWORD = "Device-Password-1"
USER = "erin@example.com"
OTHER = "fred@example.com"


@pytest.fixture
def pool(cog, double):
    """A profile of a pool whose user has an authenticator app (TOTP MFA)."""
    double.totp = double.add_totp_user(USER, PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    cog.remember_secret(PASSWORD)
    return double


def sign_in(cog, pool, *flags, profile="default", code=True):
    """A scripted sign-in (no terminal), with the authenticator's code when `code`."""
    mfa = ["--mfa-code", pool.totp.now()] if code else []
    return subprocess.run([cog.binary, "sign-in", "-p", profile, "--password-stdin", *mfa, *flags], env=cog.env,
                          input=PASSWORD + "\n", capture_output=True, text=True, start_new_session=True, timeout=60)


def device_item(bus, profile="default"):
    """The profile's device item: its attributes and its JSON, or None."""
    found = [i for i in bus.items(service="cog-cred", profile=profile, kind="device")]
    assert len(found) <= 1
    return {"attributes": found[0]["attributes"], **json.loads(found[0]["secret"])} if found else None


def devices_of(pool, username=USER):
    return pool.admin("devices?username=" + username)["devices"]


def mfa_asked(pool):
    return pool.calls("RespondToAuthChallenge:SOFTWARE_TOKEN_MFA")


def device_proofs(pool):
    return pool.calls("RespondToAuthChallenge:DEVICE_PASSWORD_VERIFIER")


def sign_in_requests(pool):
    return [r for r in pool.stats()["requests"] if r["action"] in ("InitiateAuth", "RespondToAuthChallenge")
            and r.get("auth_flow") != "REFRESH_TOKEN_AUTH"]


# --- the pool remembers every device ----------------------------------------------------

def test_mfa_on_the_first_sign_in_and_not_on_the_second(cog, bus, pool):
    pool.configure(device_tracking="always")
    first = sign_in(cog, pool)
    assert first.returncode == 0, first.stderr
    assert mfa_asked(pool) == 1
    assert "now a remembered device" in first.stderr
    item = device_item(bus)
    assert item["attributes"]["user-pool-id"] == "us-east-1_double"
    assert item["attributes"]["client-id"] == "doubleclient"
    assert item["confirmed"] and item["username"] == USER
    [device] = devices_of(pool)
    assert device["device_key"] == item["device_key"] and device["device_group_key"] == item["device_group_key"]
    assert device["confirmed"] and device["remembered"]
    assert device["name"] == socket.gethostname()

    # No code given, no terminal: a device that had to answer MFA would fail here.
    second = sign_in(cog, pool, code=False)
    assert second.returncode == 0, second.stderr
    assert mfa_asked(pool) == 1
    assert device_proofs(pool) == 1
    assert "remembered device: no MFA was asked" in second.stderr
    assert device_item(bus) == item
    # Every step of that sign-in named the device.
    assert all("DEVICE_KEY" in r["parameter_names"] for r in sign_in_requests(pool)[-4:])


def test_the_device_name_is_the_users_choice(cog, bus, pool):
    pool.configure(device_tracking="always")
    assert sign_in(cog, pool, "--device-name", "work laptop").returncode == 0
    assert [d["name"] for d in devices_of(pool)] == ["work laptop"]
    bad = cog.run("sign-in", "--device-name", "", "--password-stdin", input=PASSWORD + "\n")
    assert bad.returncode == 64 and "--device-name" in bad.stderr


def test_a_pool_without_device_tracking_changes_nothing(cog, bus, pool):
    for _ in range(2):
        assert sign_in(cog, pool).returncode == 0
    assert mfa_asked(pool) == 2
    assert device_item(bus) is None
    assert pool.calls("ConfirmDevice") == 0
    assert cog.ok("devices").stdout == ""
    assert json.loads(cog.ok("devices", "--json").stdout) == []


# --- the user chooses ---------------------------------------------------------------------

def test_opt_in_without_remember_device_asks_mfa_again(cog, bus, pool):
    pool.configure(device_tracking="opt_in")
    first = sign_in(cog, pool)
    assert first.returncode == 0, first.stderr
    assert "not remembered" in first.stderr
    [device] = devices_of(pool)
    assert device["confirmed"] and not device["remembered"]

    missing = sign_in(cog, pool, code=False)
    assert missing.returncode == 77 and "--mfa-code" in missing.stderr
    again = sign_in(cog, pool)
    assert again.returncode == 0, again.stderr
    assert mfa_asked(pool) == 2 and device_proofs(pool) == 0
    # The same device all along: its key was sent, and no new one was made.
    assert [d["device_key"] for d in devices_of(pool)] == [device["device_key"]]
    assert device_item(bus)["device_key"] == device["device_key"]

    # --remember-device on a later sign-in remembers it.
    later = sign_in(cog, pool, "--remember-device")
    assert later.returncode == 0, later.stderr
    assert devices_of(pool)[0]["remembered"]
    assert sign_in(cog, pool, code=False).returncode == 0
    assert device_proofs(pool) == 1


def test_opt_in_with_remember_device_skips_mfa_next_time(cog, bus, pool):
    pool.configure(device_tracking="opt_in")
    assert sign_in(cog, pool, "--remember-device").returncode == 0
    assert devices_of(pool)[0]["remembered"]
    assert sign_in(cog, pool, code=False).returncode == 0
    assert mfa_asked(pool) == 1 and device_proofs(pool) == 1


def test_no_remember_device_says_no_without_asking(cog, bus, pool):
    pool.configure(device_tracking="opt_in")
    shown = on_terminal(cog, ["sign-in", "--no-remember-device"], ("Password for", PASSWORD),
                        ("authenticator app: ", pool.totp.now))
    assert "Remember this device" not in shown
    assert not devices_of(pool)[0]["remembered"]


@pytest.mark.parametrize("answer, remembered", [("y", True), ("n", False), ("", False)])
def test_on_a_terminal_the_user_is_asked(cog, bus, pool, answer, remembered):
    pool.configure(device_tracking="opt_in")
    on_terminal(cog, ["sign-in", "--device-name", "desk"], ("Password for", PASSWORD),
                ("authenticator app: ", pool.totp.now),
                (re.escape("Remember this device ('desk') so that signing in here skips MFA? [y/N] "), answer))
    assert devices_of(pool)[0]["remembered"] == remembered


# --- a user the pool asks for no MFA ---------------------------------------------------------

@pytest.mark.parametrize("tracking", ["opt_in", "always"])
def test_a_user_without_mfa_is_neither_asked_nor_told_about_it(cog, bus, pool, tracking):
    """A remembered device only skips MFA: a user without MFA gets no question
    about remembering it and no note of it, and the device is still confirmed."""
    pool.configure(device_tracking=tracking)
    pool.add_user(OTHER, PASSWORD)
    cog.ok("configure", "--username", OTHER)
    for _ in range(2):  # the second sign-in offers the device (and with "always" proves it)
        shown = on_terminal(cog, ["sign-in"], ("Password for", PASSWORD))
        assert "Signed in as" in shown
        assert "Remember this device" not in shown and "MFA" not in shown and "device" not in shown, shown
    assert pool.calls("ConfirmDevice") == 1
    [device] = devices_of(pool, OTHER)
    assert device["confirmed"] and device["remembered"] == (tracking == "always")
    assert pool.calls("RespondToAuthChallenge:DEVICE_PASSWORD_VERIFIER") == (1 if tracking == "always" else 0)


def test_a_user_with_mfa_is_still_asked_on_a_terminal(cog, bus, pool):
    pool.configure(device_tracking="opt_in")
    shown = on_terminal(cog, ["sign-in", "--device-name", "desk"], ("Password for", PASSWORD),
                        ("authenticator app: ", pool.totp.now),
                        (re.escape("Remember this device ('desk') so that signing in here skips MFA? [y/N] "), "y"))
    assert "now a remembered device ('desk'): signing in here skips MFA" in shown
    # Proved by the device the next time: told so, since this user has MFA.
    again = sign_in(cog, pool, code=False)
    assert again.returncode == 0 and "remembered device: no MFA was asked" in again.stderr, again.stderr


# --- refreshes -----------------------------------------------------------------------------

def test_refreshes_send_the_device_key_and_fail_without_it(cog, bus, pool):
    pool.configure(device_tracking="always")
    assert sign_in(cog, pool).returncode == 0
    cog.ok("refresh")
    [modern] = [r for r in pool.stats()["requests"] if r["action"] == "GetTokensFromRefreshToken"]
    assert modern["device_key_sent"] and modern["status"] == 200

    # Where GetTokensFromRefreshToken is missing: REFRESH_TOKEN_AUTH with DEVICE_KEY.
    pool.configure(get_tokens_from_refresh_token=False)
    cog.ok("refresh")
    legacy = [r for r in pool.stats()["requests"] if r.get("auth_flow") == "REFRESH_TOKEN_AUTH"]
    assert legacy[-1]["status"] == 200 and "DEVICE_KEY" in legacy[-1]["parameter_names"]

    # The pool refuses this session's refresh token without its device.
    bus.secret_tool("clear", "service", "cog-cred", "kind", "device")
    refused = cog.run("refresh")
    assert refused.returncode == 77 and "sign in again" in refused.stderr


# --- devices and devices forget ----------------------------------------------------------

def test_devices_lists_every_device_and_marks_this_one(cog, bus, pool):
    pool.configure(device_tracking="always")
    configure_on_double(cog, pool.url, "--username", USER, profile="laptop")
    assert sign_in(cog, pool, "--device-name", "desktop").returncode == 0
    assert sign_in(cog, pool, "--device-name", "laptop", profile="laptop").returncode == 0
    this = device_item(bus)["device_key"]

    listed = json.loads(cog.ok("devices", "--json").stdout)
    assert sorted(d["name"] for d in listed) == ["desktop", "laptop"]
    assert [d["key"] for d in listed if d["current"]] == [this]
    for device in listed:
        assert set(device) == {"key", "name", "last_seen", "remembered", "current"}
        assert device["remembered"] is True
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", device["last_seen"])
    lines = cog.ok("devices").stdout.splitlines()
    assert len(lines) == 2
    [marked] = [line for line in lines if line.startswith("*")]
    assert this in marked and "desktop" in marked and "remembered" in marked
    assert cog.ok("devices", "list").stdout == cog.ok("devices").stdout
    # The other profile sees itself as current.
    other = json.loads(cog.ok("devices", "--json", "-p", "laptop").stdout)
    assert [d["name"] for d in other if d["current"]] == ["laptop"]


def test_devices_lists_past_one_page(cog, bus, pool):
    pool.configure(device_tracking="always")
    for n in range(12):  # the double's pages hold 10 unless asked for more; cog-cred asks for 60
        name = f"p{n}"
        configure_on_double(cog, pool.url, "--username", USER, profile=name)
        assert sign_in(cog, pool, profile=name).returncode == 0
    assert len(json.loads(cog.ok("devices", "--json", "-p", "p0").stdout)) == 12


def test_forgetting_this_machine_asks_mfa_at_the_next_sign_in(cog, bus, pool):
    pool.configure(device_tracking="always")
    assert sign_in(cog, pool).returncode == 0
    key = device_item(bus)["device_key"]
    forgot = cog.ok("devices", "forget")
    assert key in forgot.stderr and forgot.stdout == ""
    assert device_item(bus) is None
    assert devices_of(pool) == []
    # Cognito refuses a forgotten device's refresh tokens: the session ends with its access token.
    assert cog.ok("token").stdout.strip() == stored(bus, "access")
    assert cog.run("refresh").returncode == 77
    missing = sign_in(cog, pool, code=False)
    assert missing.returncode == 77 and "--mfa-code" in missing.stderr
    assert sign_in(cog, pool).returncode == 0
    assert device_item(bus)["device_key"] != key
    nothing = cog.run("devices", "forget", "us-east-1_no-such-device")
    assert nothing.returncode == 65 and "cog-cred devices" in nothing.stderr


def test_forgetting_another_device_keeps_this_one(cog, bus, pool):
    pool.configure(device_tracking="always")
    configure_on_double(cog, pool.url, "--username", USER, profile="laptop")
    assert sign_in(cog, pool).returncode == 0
    assert sign_in(cog, pool, profile="laptop").returncode == 0
    other = device_item(bus, "laptop")["device_key"]
    cog.ok("devices", "forget", other)
    assert device_item(bus) is not None and device_item(bus, "laptop") is not None  # only Cognito's record went
    assert [d["device_key"] for d in devices_of(pool)] == [device_item(bus)["device_key"]]
    asked, proofs = mfa_asked(pool), device_proofs(pool)
    assert sign_in(cog, pool, code=False).returncode == 0
    # This machine still skips MFA: its device proved, no code asked.
    assert mfa_asked(pool) == asked and device_proofs(pool) == proofs + 1


def test_forget_without_a_device_or_with_a_bad_key_says_so(cog, bus, pool):
    assert sign_in(cog, pool).returncode == 0
    none = cog.run("devices", "forget")
    assert none.returncode == 64 and "not one of the user's devices" in none.stderr
    bad = cog.run("devices", "forget", "nonsense")
    assert bad.returncode == 64 and "not a device key" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_a_device_forgotten_elsewhere_is_dropped_and_mfa_asked(cog, bus, pool):
    pool.configure(device_tracking="always")
    assert sign_in(cog, pool).returncode == 0
    key = device_item(bus)["device_key"]
    pool.admin("forget_device", {"username": USER, "device_key": key})
    again = sign_in(cog, pool)
    assert again.returncode == 0, again.stderr
    assert "no longer knows this machine" in again.stderr
    assert mfa_asked(pool) == 2
    new = device_item(bus)["device_key"]
    assert new != key and [d["device_key"] for d in devices_of(pool)] == [new]
    # Without a code and no terminal, the retry would need one: it says so, and stores nothing of the old device.
    pool.admin("forget_device", {"username": USER, "device_key": new})
    stuck = sign_in(cog, pool, code=False)
    assert stuck.returncode == 77 and "--mfa-code" in stuck.stderr
    assert device_item(bus) is None


def test_a_device_failing_its_proof_is_dropped_and_mfa_asked(cog, bus, pool):
    pool.configure(device_tracking="always")
    assert sign_in(cog, pool).returncode == 0
    item = device_item(bus)
    # The keyring holds another password than the one Cognito has the verifier of.
    attributes = {k: v for k, v in item["attributes"].items() if k != "xdg:schema"}
    tampered = {k: v for k, v in item.items() if k != "attributes"}
    tampered["device_password"] = "A" * 56
    bus.secret_tool("clear", "service", "cog-cred", "kind", "device")
    bus.store(attributes, json.dumps(tampered))
    again = sign_in(cog, pool)
    assert again.returncode == 0, again.stderr
    assert "no longer knows this machine" in again.stderr
    refused = [r for r in pool.stats()["requests"] if r.get("challenge") == "DEVICE_PASSWORD_VERIFIER"]
    assert [r["status"] for r in refused] == [400]
    assert mfa_asked(pool) == 2
    assert device_item(bus)["device_key"] != item["device_key"]


# --- what keeps the device and what deletes it -------------------------------------------

@pytest.mark.parametrize("how", [[], ["--global"], ["--local"]])
def test_sign_out_keeps_the_device(cog, bus, pool, how):
    pool.configure(device_tracking="always")
    assert sign_in(cog, pool).returncode == 0
    item = device_item(bus)
    cog.ok("sign-out", *how)
    assert stored(bus, "refresh") is None
    assert device_item(bus) == item
    assert sign_in(cog, pool, code=False).returncode == 0
    assert mfa_asked(pool) == 1


def test_configure_delete_and_another_client_delete_the_device(cog, bus, pool):
    pool.configure(device_tracking="always")
    assert sign_in(cog, pool).returncode == 0
    cog.ok("configure", "--client-id", "otherclient")
    assert device_item(bus) is None
    cog.ok("configure", "--client-id", "doubleclient")
    assert sign_in(cog, pool).returncode == 0
    assert device_item(bus) is not None
    cog.ok("configure", "--delete")
    assert device_item(bus) is None
    assert bus.items(service="cog-cred") == []


def test_another_user_is_never_offered_the_device(cog, bus, pool):
    pool.configure(device_tracking="always")
    assert sign_in(cog, pool).returncode == 0
    erins = device_item(bus)["device_key"]
    pool.totp = pool.add_totp_user(OTHER, PASSWORD)
    before = len(sign_in_requests(pool))
    fred = subprocess.run([cog.binary, "sign-in", "--username", OTHER, "--password-stdin", "--mfa-code", pool.totp.now()],
                          env=cog.env, input=PASSWORD + "\n", capture_output=True, text=True, start_new_session=True,
                          timeout=60)
    assert fred.returncode == 0, fred.stderr
    assert all("DEVICE_KEY" not in r["parameter_names"] for r in sign_in_requests(pool)[before:])
    item = device_item(bus)
    assert item["username"] == OTHER and item["device_key"] != erins
    assert [d["device_key"] for d in devices_of(pool, OTHER)] == [item["device_key"]]


# --- the device's secret stays in the keyring ----------------------------------------------

def test_the_device_secret_is_in_no_argv_environment_file_or_stderr(cog, bus, pool, tmp_path):
    pool.configure(device_tracking="opt_in")
    first = sign_in(cog, pool)  # not remembered: the next sign-in asks for MFA, and waits for it
    assert first.returncode == 0
    secret = device_item(bus)["device_password"]
    assert len(secret) == 56  # 40 random bytes, base64
    cog.remember_secret(secret)  # every later cog.run checks its stderr

    # A sign-in waiting for the MFA code has the device's secret in memory: not in its argv or environment.
    proc = subprocess.Popen([cog.binary, "sign-in", "--password-stdin", "--mfa-code", "-"], env=cog.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    proc.stdin.write(PASSWORD + "\n")
    proc.stdin.flush()
    said = proc.stderr.readline()
    assert "authenticator app" in said
    seen = [Path(f"/proc/{proc.pid}/{part}").read_bytes() for part in ("cmdline", "environ")]
    proc.stdin.write(pool.totp.now() + "\n")
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    rest = proc.stderr.read()
    assert all(secret.encode() not in part for part in seen)
    assert secret not in said + rest + proc.stdout.read()

    # exec's command gets tokens, never the device.
    child = cog.ok("exec", "--", "sh", "-c", 'cat /proc/$$/environ; cat /proc/$$/cmdline')
    assert secret not in child.stdout
    for command in (["status"], ["devices"], ["refresh"], ["sign-out"]):
        result = cog.ok(*command)
        assert secret not in result.stdout
    # Remembered, then used: the device's SRP, and a device forgotten elsewhere (cog.run checks stderr).
    cog.ok("sign-in", "--password-stdin", "--remember-device", "--mfa-code", pool.totp.now(), input=PASSWORD + "\n")
    assert secret not in cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n").stdout
    assert device_proofs(pool) == 1
    pool.admin("forget_device", {"username": USER, "device_key": device_item(bus)["device_key"]})
    cog.ok("sign-in", "--password-stdin", "--mfa-code", pool.totp.now(), input=PASSWORD + "\n")
    # Nothing under the home, config or state directories holds it, nor what the double logged.
    for root in (tmp_path,):
        for path in Path(root).rglob("*"):
            if path.is_file() and not path.is_symlink():
                assert secret.encode() not in path.read_bytes(), path
    assert secret not in json.dumps(pool.stats())


# --- asked before forgetting (#63) ---------------------------------------------------------

@pytest.mark.parametrize("how", ["n", "y", "--yes", "no terminal"])
def test_forgetting_this_machine_asks_first_on_a_terminal(cog, bus, pool, how):
    pool.configure(device_tracking="always")
    assert sign_in(cog, pool).returncode == 0
    key = device_item(bus)["device_key"]
    status, said = answered(cog, ["devices", "forget"], how)
    if how == "n":
        assert status == 1 and f"Forget this machine ({key})?" in said and "answered no" in said
        assert device_item(bus)["device_key"] == key and [d["device_key"] for d in devices_of(pool)] == [key]
        assert pool.calls("ForgetDevice") == 0
        return
    assert status == 0, said
    assert ("[y/N]" in said) == (how == "y")
    assert device_item(bus) is None and devices_of(pool) == []
