"""Faults: the network, the service, the keyring, concurrency and crashes.

Cognito faults come from fault_server.py, a proxy in front of the project's
Cognito test double that answers chosen requests with a chosen fault (a delay
past the timeout, a refused or reset connection, an HTML 500, a 503,
throttling, a truncated or non-JSON body, an error type nobody knows). For
each, every command that talks to Cognito must give its documented exit code
and one line, and leave the stored items byte for byte as they were.
"""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import fault_server
from conftest import Bus, bus_config_without_activation
from support import (all_stored, claims, clear_fault_log, configure_on_double, fault_log, files_under, plan, release,
                     signed_in_on_double, stored, wait_for_request)

PASSWORD = "Fault-Password-1"
NEW_PASSWORD = "Fault-Password-2"
USER = "faye@example.com"


@pytest.fixture
def session(cog, double, proxy, bus):
    """Signed in through the proxy, with short timeouts so faults cost little time."""
    plan(proxy)
    double.add_user(USER, PASSWORD)
    configure_on_double(cog, proxy.url, "--username", USER,
                        "--connect-timeout", "1", "--request-timeout", "1", "--command-timeout", "4")
    cog.remember_secret(PASSWORD, NEW_PASSWORD)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    cog.remember_secret(*all_stored(bus).values())
    return double


# Every command that talks to Cognito, with what it needs on stdin. Those
# that refresh first get an expired token so they must talk to Cognito.
COMMANDS = {
    "sign-in": (["sign-in", "--password-stdin"], PASSWORD + "\n", False),
    "token": (["token"], None, True),
    "get-header": (["get-header"], None, True),
    "refresh": (["refresh"], None, False),
    "exec": (["exec", "--", "true"], None, True),
    "kubectl-credential": (["kubectl-credential"], None, True),
    "git-credential": (["git-credential", "--profile", "default", "get"], "protocol=https\nhost=h\n\n", True),
    "sign-up": (["sign-up", "--username", "new@example.com", "--password-stdin"], PASSWORD + "\n", False),
    "confirm-sign-up": (["confirm-sign-up", "--code", "123456"], None, False),
    "resend-code": (["resend-code"], None, False),
    "forgot-password": (["forgot-password"], None, False),
    "confirm-forgot-password": (["confirm-forgot-password", "--code", "123456", "--password-stdin"],
                                NEW_PASSWORD + "\n", False),
    "change-password": (["change-password", "--password-stdin"], f"{PASSWORD}\n{NEW_PASSWORD}\n", False),
}

FAULTS = {
    "delay": ({"mode": "delay", "seconds": 5}, 75, "did not answer in time"),
    "refuse": ({"mode": "refuse"}, 75, "cannot reach Cognito"),
    "reset_mid_body": ({"mode": "reset_mid_body"}, 75, "cannot reach Cognito"),
    "html_500": ({"mode": "html_500"}, 75, "HTTP 500"),
    "status_503": ({"mode": "status_503"}, 75, "HTTP 503"),
    "throttle": ({"mode": "throttle"}, 75, "TooManyRequestsException"),
    "truncated_json": ({"mode": "truncated_json"}, 75, "cannot be read"),
    "not_json": ({"mode": "not_json"}, 75, "cannot be read"),
    "unknown_error_type": ({"mode": "unknown_error_type"}, 1, "BrandNewException: Something new"),
}


WAIT_LINE = re.compile(r"cog-cred: still waiting for http://127\.0\.0\.1:\d+/ \([A-Za-z]+, attempt (\d)\)")


def said(stderr):
    """The lines of stderr but the wait's: a call that waited two seconds
    or more (its retries included) says so (NetworkReport), and again at
    each retry after that, before the outcome's own line."""
    lines = stderr.splitlines()
    waits = [line for line in lines if line.startswith("cog-cred: still waiting for ")]
    assert all(WAIT_LINE.fullmatch(line) for line in waits), waits
    return "".join(line + "\n" for line in lines if line not in waits)


def expire_tokens(cog, session, bus):
    """Replace the stored access and ID tokens with expired ones (refresh token kept)."""
    session.configure(issued_at_offset=-7200)
    cog.ok("refresh")
    session.configure(issued_at_offset=0)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_under_every_fault(cog, bus, session, proxy, command, fault):
    args, stdin, needs_refresh = COMMANDS[command]
    spec, code, phrase = FAULTS[fault]
    if needs_refresh:
        expire_tokens(cog, session, bus)
    before = all_stored(bus)
    plan(proxy, {**spec, "times": -1})
    result = cog.run(*args, input=stdin, timeout=60)
    plan(proxy)
    assert result.returncode == code, (command, fault, result.stderr)
    assert said(result.stderr).count("\n") == 1, result.stderr
    assert phrase in result.stderr, result.stderr
    assert result.stdout == ""
    assert all_stored(bus) == before


def inside_the_margin(cog, session):
    """Stored tokens with 300 s of their 3600 left: due for a refresh by the margin alone."""
    session.configure(issued_at_offset=-3300)
    cog.ok("refresh")
    session.configure(issued_at_offset=0)


# The reads, and how each shows the access token it handed out.
READS = {
    "token": (["token"], None, lambda out, access: out == access + "\n"),
    "get-header": (["get-header"], None, lambda out, access: out == f"Authorization: Bearer {access}\n"),
    "exec": (["exec", "--", "sh", "-c", 'printf %s "$COG_CRED_ACCESS_TOKEN"'], None, lambda out, access: out == access),
    "kubectl-credential": (["kubectl-credential"], None, lambda out, access: json.loads(out)["status"]["token"] == access),
    "git-credential": (["git-credential", "--profile", "default", "get"], "protocol=https\nhost=h\n\n",
                       lambda out, access: f"password={access}\n" in out),
    "docker-credential": (["docker-credential", "get"], "registry.example.com\n",
                          lambda out, access: json.loads(out)["Secret"] == access),
}


@pytest.mark.parametrize("fault", ["refuse", "delay", "status_503", "throttle", "truncated_json"])
@pytest.mark.parametrize("command", READS)
def test_a_token_that_still_works_is_handed_out_through_a_network_blip(cog, bus, session, proxy, command, fault):
    args, stdin, shows = READS[command]
    cog.ok("configure", "--docker-registry", "registry.example.com")
    inside_the_margin(cog, session)
    before = all_stored(bus)
    plan(proxy, {**FAULTS[fault][0], "times": -1})
    result = cog.run(*args, input=stdin, timeout=60)
    plan(proxy)
    assert result.returncode == 0, (command, fault, result.stderr)
    assert shows(result.stdout, before["access"]), result.stdout
    # One line (and the wait's): the refresh failed, why, and when the token expires.
    assert said(result.stderr).count("\n") == 1, result.stderr
    assert "warning: could not refresh (" in result.stderr and FAULTS[fault][2] in result.stderr, result.stderr
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(claims(before["access"])["exp"]))
    assert f"it expires at {expires}" in result.stderr, result.stderr
    assert before["access"] not in result.stderr
    assert all_stored(bus) == before


def test_a_refresh_due_only_by_the_margin_holds_no_caller_past_its_short_budget(cog, bus, session, proxy):
    """An endpoint that takes the connection and never answers, with the
    profile's full timeouts (10 s a request, 8 s the command): a token
    inside its margin but still working is handed out after the refresh's
    own 2 s budget, with the warning, by token, get-header and the git
    helper alike. An expired token still gets the command's whole deadline,
    and then nothing."""
    cog.ok("configure", "--connect-timeout", "5", "--request-timeout", "10", "--command-timeout", "8")
    inside_the_margin(cog, session)
    before = all_stored(bus)
    plan(proxy, {"mode": "delay", "seconds": 60, "times": -1})
    for command in ("token", "get-header", "git-credential"):
        args, stdin, shows = READS[command]
        started = time.monotonic()
        result = cog.run(*args, input=stdin, timeout=60)
        elapsed = time.monotonic() - started
        assert result.returncode == 0 and shows(result.stdout, before["access"]), (command, result.stderr)
        assert "warning: could not refresh (Cognito at " in result.stderr and "did not answer in time" in result.stderr, \
            result.stderr
        # The budget and two processes' start-up, on a busy machine; the
        # command's deadline would be 8 s.
        assert elapsed < 3, (command, elapsed, result.stderr)
    plan(proxy)
    expire_tokens(cog, session, bus)
    plan(proxy, {"mode": "delay", "seconds": 60, "times": -1})
    started = time.monotonic()
    expired = cog.run("token", timeout=60)
    elapsed = time.monotonic() - started
    plan(proxy)
    assert expired.returncode == 75 and expired.stdout == "" and "did not answer in time" in expired.stderr, expired.stderr
    assert elapsed > 6, elapsed  # the command's 8 s, not the margin's 2


def test_through_a_blip_never_more_than_asked_for_never_after_a_refusal_never_for_refresh(cog, bus, session, proxy):
    inside_the_margin(cog, session)
    before = all_stored(bus)
    plan(proxy, {"mode": "refuse", "times": -1})
    # The caller asked for more life than the token has: nothing.
    asked = cog.run("token", "--min-ttl", "600")
    # `refresh` was asked for by name: it fails as it did.
    named = cog.run("refresh")
    plan(proxy)
    assert asked.returncode == 75 and asked.stdout == "", asked.stderr
    assert named.returncode == 75 and named.stdout == "" and "could not refresh" not in named.stderr, named.stderr
    # Cognito refused the refresh (the session was revoked): 77, nothing on stdout.
    session.revoke(USER)
    refused = cog.run("token")
    assert refused.returncode == 77 and refused.stdout == "", refused.stderr
    assert "warning" not in refused.stderr, refused.stderr
    assert all_stored(bus) == before


def test_offline_sign_out_deletes_locally_and_exits_75(cog, bus, session, proxy):
    plan(proxy, {"mode": "refuse", "times": -1})
    result = cog.run("sign-out")
    plan(proxy)
    assert result.returncode == 75 and result.stderr.count("\n") == 1
    assert all_stored(bus) == {"access": None, "id": None, "refresh": None}


def test_quick_retries_are_quiet_a_long_wait_is_said_and_bounded_by_the_deadline(cog, bus, session, proxy):
    expire_tokens(cog, session, bus)
    plan(proxy, {"mode": "status_503", "times": 2})
    result = cog.ok("token")
    assert result.stderr == ""
    log = [entry["mode_applied"] for entry in fault_log(proxy)]
    assert log[-3:] == ["status_503", "status_503", "forward"] or log[-4:-1].count("status_503") == 2

    # Every answer too slow (3 s, beyond the 1 s request timeout): up to 4
    # attempts of 1 s each and the pauses between them would take over 4 s,
    # so the command's 4 s time limit is what ends the retries.
    expire_tokens(cog, session, bus)
    clear_fault_log(proxy)
    plan(proxy, {"mode": "delay", "seconds": 3, "times": 10})
    started = time.monotonic()
    result = cog.run("token")
    elapsed = time.monotonic() - started
    assert result.returncode == 75, result.stderr
    assert result.stdout == "" and said(result.stderr).count("\n") == 1, result.stderr
    attempts = [entry for entry in fault_log(proxy) if entry["mode_applied"] == "delay"]
    assert len(attempts) >= 2, attempts  # retried
    # Over two seconds of waiting, said once, then again for each retry
    # after that (never silent until the deadline); the error names the URL
    # and the whole wait, not one attempt's second.
    said_attempts = [int(m.group(1)) for m in map(WAIT_LINE.fullmatch, result.stderr.splitlines()) if m]
    assert said_attempts and said_attempts == list(range(said_attempts[0], len(attempts) + 1)), \
        (said_attempts, len(attempts), result.stderr)
    waited = re.search(r"Cognito at http://127\.0\.0\.1:\d+/ did not answer in time \(.*; (\d) attempts over (\d+\.\d) s\)",
                       result.stderr)
    assert waited and int(waited.group(1)) == len(attempts) and float(waited.group(2)) > 1.5, result.stderr
    # The limit, plus the start-up and exit of two processes (front and
    # cog-cred-cli) on a busy machine: a retry past the deadline would add
    # at least another second.
    assert elapsed < 4 + 0.9, elapsed


def test_https_with_a_private_ca(cog, bus, double, tmp_path):
    """AWS_CA_BUNDLE over the profile's --ca-bundle over the system's, each
    way round: status, --debug and a TLS failure name the bundle in use and
    what chose it, and the advice never asks for what is already set."""
    server, url, ca = fault_server.start_fault_server(double.url, tls=True, ca_out=str(tmp_path / "ca.pem"))
    wrong = str(tmp_path / "other-ca.pem")  # a bundle without the private CA: the system's
    shutil.copy("/etc/ssl/certs/ca-certificates.crt", wrong)
    ask_for_a_bundle = "set AWS_CA_BUNDLE or cog-cred configure --ca-bundle FILE"

    def bundle(env=None):
        said = json.loads(cog.run("status", "--offline", "--json", env=env).stdout)
        return said["ca_bundle"], said["ca_bundle_from"]

    try:
        double.add_user(USER, PASSWORD)
        cog.remember_secret(PASSWORD)
        configure_on_double(cog, url, "--username", USER)
        untrusted = cog.run("sign-in", "--password-stdin", input=PASSWORD + "\n")
        assert untrusted.returncode == 75
        assert "certificate" in untrusted.stderr and "the system's CA certificates" in untrusted.stderr
        assert ask_for_a_bundle in untrusted.stderr
        assert bundle() == (None, "system")
        cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n", env={"AWS_CA_BUNDLE": ca})
        assert bundle({"AWS_CA_BUNDLE": ca}) == (ca, "AWS_CA_BUNDLE")
        traced = cog.ok("refresh", "--debug", env={"AWS_CA_BUNDLE": ca})
        assert f"trusting AWS_CA_BUNDLE's {ca}" in traced.stderr, traced.stderr

        # The profile's bundle is the wrong one: AWS_CA_BUNDLE overrides it.
        cog.ok("configure", "--ca-bundle", wrong)
        cog.ok("refresh", env={"AWS_CA_BUNDLE": ca})
        failed = cog.run("refresh")
        assert failed.returncode == 75
        assert f"checked against the profile's {wrong} (configure --ca-bundle)" in failed.stderr, failed.stderr
        assert ask_for_a_bundle not in failed.stderr
        text = cog.ok("status", "--offline").stdout
        assert f"ca bundle:     the profile's {wrong} (configure --ca-bundle)" in text.splitlines(), text

        # The other way round: the profile's is right, AWS_CA_BUNDLE wrong.
        cog.ok("configure", "--ca-bundle", ca)
        cog.ok("refresh")
        assert bundle() == (ca, "profile")
        failed = cog.run("refresh", env={"AWS_CA_BUNDLE": wrong})
        assert failed.returncode == 75
        assert f"checked against AWS_CA_BUNDLE's {wrong} (over the profile's {ca})" in failed.stderr, failed.stderr
        assert "unset AWS_CA_BUNDLE" in failed.stderr and ask_for_a_bundle not in failed.stderr
        assert json.loads(cog.config_file.read_text())["profiles"]["default"]["ca-bundle"] == ca
    finally:
        server.shutdown()
        server.server_close()


# --- many callers at once ---------------------------------------------------------------

def test_64_concurrent_callers_on_an_expired_token_make_one_refresh(cog, bus, session, proxy):
    expire_tokens(cog, session, bus)
    refreshes = session.calls("GetTokensFromRefreshToken")
    # Hold the refresh (inside the 1 s request timeout), so the callers pile up on the lock.
    plan(proxy, {"mode": "delay", "seconds": 0.6, "actions": ["GetTokensFromRefreshToken"]})
    env = {**cog.env}
    procs = [subprocess.Popen([cog.binary, "token"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(64)]
    results = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]
    plan(proxy)
    assert [r[0] for r in results] == [0] * 64, [r[2] for r in results if r[0]]
    printed = {r[1] for r in results}
    assert len(printed) == 1
    token = printed.pop().strip()
    assert token == stored(bus, "access")
    assert claims(token)["exp"] > time.time()
    assert session.calls("GetTokensFromRefreshToken") == refreshes + 1


def test_concurrent_callers_with_rotation_never_lose_the_session(cog, bus, session, proxy):
    session.configure(rotate_refresh_tokens=True, reuse_detection=True)
    expire_tokens(cog, session, bus)
    procs = [subprocess.Popen([cog.binary, "token", "--min-ttl", "4000"], env=cog.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(16)]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes == [0] * 16, [p.stderr.read() for p in procs]
    cog.ok("refresh")  # the stored refresh token is the live one


# --- kill -9 --------------------------------------------------------------------------------

def killed_midway(cog, args, stdin, delay):
    proc = subprocess.Popen([cog.binary, *args], env=cog.env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    if stdin:
        proc.stdin.write(stdin.encode())
    proc.stdin.close()
    time.sleep(delay)  # a random moment: the point is that any moment must be safe
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def test_kill_9_during_refresh_100_times(cog, bus, session, proxy):
    # With rotation, a kill after Cognito rotated but before the new refresh
    # token was stored leaves only the old one: Cognito's grace period (up to
    # 60 s) is what keeps it working, so the pool here has one (docs/security.md).
    session.configure(rotate_refresh_tokens=True, rotation_grace_seconds=60)
    rng = random.Random(6)
    # Stretch each refresh so the kills land inside it as often as around it.
    plan(proxy, {"mode": "delay", "seconds": 0.03, "times": -1, "actions": ["GetTokensFromRefreshToken"]})
    for trial in range(100):
        killed_midway(cog, ["refresh"], None, rng.uniform(0, 0.12))
        token = cog.run("token", timeout=30)
        assert token.returncode == 0, (trial, token.stderr)
        again = cog.run("refresh", timeout=30)
        assert again.returncode == 0, (trial, again.stderr)
    plan(proxy)


def test_kill_9_during_first_sign_in_100_times(cog, bus, session, proxy):
    rng = random.Random(9)
    plan(proxy, {"mode": "delay", "seconds": 0.02, "times": -1})
    for trial in range(100):
        cog.ok("sign-out", "--local")
        killed_midway(cog, ["sign-in", "--password-stdin"], PASSWORD + "\n", rng.uniform(0, 0.15))
        token = cog.run("token", timeout=30)
        if token.returncode != 0:
            # Interrupted before anything usable was stored: a clean "not signed in".
            assert token.returncode == 77 and "not signed in" in token.stderr, (trial, token.stderr)
        else:
            assert cog.run("refresh", timeout=30).returncode == 0, trial
    plan(proxy)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")


# --- the keyring going away ---------------------------------------------------------------------

def keyring_killed_during_refresh(cog, proxy, private, command, fault):
    """Runs `cog-cred command` on the `private` bus with `fault` planned for
    its refresh request, and kills that bus's keyring daemon once the request
    has reached the proxy (so the keyring has been read); returns the process."""
    plan(proxy, {**fault, "actions": ["GetTokensFromRefreshToken"]})
    clear_fault_log(proxy)
    proc = subprocess.Popen([cog.binary, command], env={**cog.env, **private.env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_for_request(proxy, "GetTokensFromRefreshToken")
    private.keyring.kill()
    private.keyring.wait(timeout=10)
    return proc


def test_a_keyring_daemon_killed_mid_command(cog, bus, session, proxy, tmp_path):
    # On a bus that restarts nothing on demand, with the session copied over.
    private = Bus(tmp_path / "bus", config_file=bus_config_without_activation(tmp_path / "bus.conf"))
    try:
        for item in bus.items(service="cog-cred", profile="default"):
            private.store(item["attributes"], item["secret"])
        env = {**cog.env, **private.env}
        # Expired, so the command must refresh and then store.
        session.configure(issued_at_offset=-7200)
        expired = cog.run("refresh", env=env)
        session.configure(issued_at_offset=0)
        assert expired.returncode == 0
        refresh_token = stored(private, "refresh")
        # Killed while the refresh request is in flight (the keyring has been read).
        proc = keyring_killed_during_refresh(cog, proxy, private, "token", {"mode": "delay", "seconds": 0.8})
        code = proc.wait(timeout=20)
        plan(proxy)
        error = proc.stderr.read()
        assert code == 69, error
        assert "Secret Service" in error and error.count("\n") == 1
        assert proc.stdout.read() == ""
        # The daemon comes back: the session is as it was before the command.
        private.start_keyring()
        assert stored(private, "refresh") == refresh_token
        assert cog.run("token", env=env).returncode == 0
    finally:
        plan(proxy)
        private.stop()


def test_a_keyring_restarted_while_a_rotated_refresh_token_is_on_its_way_gets_it(cog, double, session, proxy,
                                                                                  tmp_path):
    """The rotated refresh token is the only copy of the session: when the
    keyring daemon restarts while Cognito is answering, the session this
    process opened is gone, and only a new connection reaches the new daemon."""
    private = Bus(tmp_path / "bus", config_file=bus_config_without_activation(tmp_path / "bus.conf"))
    try:
        env = {**cog.env, **private.env}
        double.configure(rotate_refresh_tokens=True)
        cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n", env=env)
        before = stored(private, "refresh")
        # The refresh has read the keyring and its request is held: restart the daemon now.
        proc = keyring_killed_during_refresh(cog, proxy, private, "refresh", {"mode": "hold"})
        private.start_keyring()
        release(proxy)
        _, error = proc.communicate(timeout=30)
        assert proc.returncode == 0, error
        assert "could not be stored" not in error
        # The new refresh token landed: the old one is rotated out, and the session goes on.
        after = stored(private, "refresh")
        assert after and after != before
        assert cog.run("refresh", env=env).returncode == 0
    finally:
        plan(proxy)
        private.stop()


def test_a_hung_keyring_daemon_fails_fast_instead_of_hanging(cog, bus, session):
    bus.keyring.send_signal(signal.SIGSTOP)
    try:
        started = time.monotonic()
        result = cog.run("refresh", timeout=20)  # GLib's own default would wait 25 s per call
        elapsed = time.monotonic() - started
        assert result.returncode == 69, result.stderr
        assert "Secret Service" in result.stderr
    finally:
        bus.keyring.send_signal(signal.SIGCONT)
    assert elapsed < 20


# --- secret hygiene -----------------------------------------------------------------------------------

CLIENT_SECRET = "hygiene-client-secret-5f2b8c"


def test_secrets_never_reach_files_stderr_or_a_childs_argv(cog, bus, double, proxy, tmp_path):
    plan(proxy)
    double.configure(client_secret=CLIENT_SECRET, username_attributes=None)
    double.add_user(USER, PASSWORD)
    state = tmp_path / "state"
    cog.env["XDG_STATE_HOME"] = str(state)
    fake_bin = tmp_path / "fakebin"
    fake_bin.mkdir()
    argv_log = tmp_path / "qrencode-argv"
    fds_log = tmp_path / "qrencode-fds"
    (fake_bin / "qrencode").write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {argv_log}\n'
                                       f'for f in /proc/$$/fd/*; do readlink "$f"; done >> {fds_log}\ncat > /dev/null\n')
    (fake_bin / "qrencode").chmod(0o755)
    cog.env["PATH"] = f"{fake_bin}:{cog.env['PATH']}"
    cog.remember_secret(PASSWORD, NEW_PASSWORD, CLIENT_SECRET)

    configure_on_double(cog, proxy.url, "--username", USER, "--client-secret-stdin", input=CLIENT_SECRET + "\n")
    # Failures and successes of every kind, all checked for leaks by cog.run.
    cog.run("sign-in", "--password-stdin", input="Wrong-Password-1\n")
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    secrets = [PASSWORD, NEW_PASSWORD, CLIENT_SECRET, *[v for v in all_stored(bus).values() if v]]
    cog.remember_secret(*secrets)
    for args, stdin in [(["token"], None), (["get-header"], None), (["refresh"], None), (["status", "--json"], None),
                        (["status", "--verify"], None), (["token", "--format", "env"], None),
                        (["exec", "--", "true"], None), (["kubectl-credential"], None),
                        (["change-password", "--password-stdin"], f"{PASSWORD}\n{NEW_PASSWORD}\n"),
                        (["forgot-password"], None), (["confirm-sign-up", "--code", "12345"], None),
                        (["git-credential", "--profile", "default", "get"], "protocol=https\nhost=h\n\n")]:
        cog.run(*args, input=stdin)
    plan(proxy, {"mode": "html_500", "times": -1})
    cog.run("refresh")
    plan(proxy)
    # The set-up of an authenticator hands the otpauth URI (a secret) to qrencode:
    # on stdin, never as an argument.
    double.admin("users", {"username": USER, "password": NEW_PASSWORD, "mfa": "setup"})
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(cog.binary, ["sign-in", "--password-stdin"], env=cog.env, encoding="utf-8", timeout=30)
    child.sendline(NEW_PASSWORD)
    child.expect("Enter the code the app shows: ")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert argv_log.exists(), "qrencode was not run"
    assert "otpauth" not in argv_log.read_text()
    # Started after AssociateSoftwareToken: no socket of cog-cred's (the kept connection) reaches it.
    assert "socket:" not in fds_log.read_text()

    config_root = tmp_path / "config"
    runtime = bus.env["XDG_RUNTIME_DIR"]
    for path in files_under(config_root, state, cog.home, runtime):
        try:
            content = open(path, "rb").read()
        except OSError:
            continue
        for secret in secrets:
            assert secret.encode() not in content, f"a secret is in {path}"
    # The keyring's own file holds them encrypted, never in the clear.
    for path in files_under(os.path.join(bus.env["XDG_DATA_HOME"], "keyrings")):
        content = open(path, "rb").read()
        for secret in secrets:
            assert secret.encode() not in content


def test_no_core_dumps_and_private_files(cog, bus, signed_in, tmp_path):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(cog.binary, ["sign-in"], env=cog.env, encoding="utf-8", timeout=30)
    child.expect("Password for")
    limits = open(f"/proc/{child.pid}/limits").read()
    child.sendintr()
    child.expect(pexpect.EOF)
    core = [line for line in limits.splitlines() if line.startswith("Max core file size")][0]
    assert core.split()[4:6] == ["0", "0"], core
    assert oct(os.stat(cog.config_file).st_mode & 0o777) == "0o600"
    assert oct(os.stat(cog.config_file.parent).st_mode & 0o777) == "0o700"
    lock_dir = cog.home / ".local" / "state" / "cog-cred" / "locks"
    cog.ok("refresh")
    assert oct(os.stat(lock_dir).st_mode & 0o777) == "0o700"


def test_without_a_runtime_directory_locks_live_in_the_state_directory(cog, bus, signed_in):
    # cron and `su -` have no XDG_RUNTIME_DIR. The old fallback was
    # /tmp/cog-cred-<uid>, which another user could create first: made here
    # as someone else's, world-writable, it must not matter.
    squatted = Path(f"/tmp/cog-cred-{os.getuid()}")
    made = False
    if not squatted.exists() and os.getuid() == 0:
        squatted.mkdir(mode=0o777)
        os.chmod(squatted, 0o777)
        os.chown(squatted, 65534, 65534)
        made = True
    try:
        no_runtime = {"XDG_RUNTIME_DIR": None}
        cog.ok("refresh", env=no_runtime)
        locks = cog.home / ".local" / "state" / "cog-cred" / "locks"
        assert (locks / "default.lock").is_file()
        assert oct(os.stat(locks).st_mode & 0o777) == "0o700"
        assert os.stat(locks).st_uid == os.getuid()
        # The front takes the same lock when it hands a refresh over.
        assert cog.run("token", "--min-ttl", "86400", env=no_runtime).returncode == 0
        state = Path(cog.home) / "elsewhere"
        cog.ok("refresh", env={**no_runtime, "XDG_STATE_HOME": str(state)})
        assert (state / "cog-cred" / "locks" / "default.lock").is_file()
    finally:
        if made:
            squatted.rmdir()


def test_a_config_others_can_write_is_refused(cog, signed_in):
    os.chmod(cog.config_file, 0o666)
    for command in (["token"], ["refresh"]):  # the cached fast path refuses it too
        result = cog.run(*command)
        assert result.returncode == 78
        assert "can be written by others" in result.stderr
    os.chmod(cog.config_file, 0o600)
    cog.ok("token")


def test_a_config_under_a_directory_others_can_write_or_behind_a_link_is_refused(cog, signed_in, tmp_path):
    # As ssh's StrictModes: the config's directory and every one above it.
    config_home = Path(cog.env["XDG_CONFIG_HOME"])
    os.chmod(config_home, 0o777)
    for command in (["token"], ["status"]):
        result = cog.run(*command)
        assert result.returncode == 78, result.stderr
        assert f"the directory {config_home} that holds the config can be written by others" in result.stderr
    os.chmod(config_home, 0o700)
    cog.ok("token")
    # A symbolic link in the file's place is not followed.
    real = tmp_path / "dotfiles" / "config.json"
    real.parent.mkdir(mode=0o700)
    real.write_bytes(cog.config_file.read_bytes())
    real.chmod(0o600)
    cog.config_file.unlink()
    cog.config_file.symlink_to(real)
    result = cog.run("token")
    assert result.returncode == 78
    assert "is a symbolic link" in result.stderr and result.stdout == ""


def test_a_wait_is_said_while_it_lasts(cog, bus, double, proxy):
    """A call held at the proxy: after about two seconds one line names the
    endpoint, the action and the attempt, while the call goes on (read as
    it comes: no sleeping); the call then succeeds with nothing more said."""
    plan(proxy)
    signed_in_on_double(cog, proxy.url, double, USER, PASSWORD)
    cog.remember_secret(*all_stored(bus).values())
    plan(proxy, {"mode": "hold", "seconds": 60, "actions": ["GetTokensFromRefreshToken"]})
    proc = subprocess.Popen([cog.binary, "refresh"], env=cog.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stderr.readline().rstrip("\n")
    finally:
        release(proxy)
        out, rest = proc.communicate(timeout=60)
        plan(proxy)
    assert WAIT_LINE.fullmatch(line) and line.endswith("(GetTokensFromRefreshToken, attempt 1)"), line
    assert proc.returncode == 0 and rest.startswith("Refreshed (profile 'default')") and rest.count("\n") == 1, rest


@pytest.mark.parametrize("fault", ["status_503", "throttle"])
def test_answers_to_try_later_name_the_url_and_the_whole_wait(cog, bus, session, proxy, fault):
    """Not only a wait for no answer: a call answered 503 or throttled at
    every attempt says where, and how long all the attempts took."""
    before = all_stored(bus)
    clear_fault_log(proxy)
    plan(proxy, {**FAULTS[fault][0], "times": -1})
    result = cog.run("refresh")
    plan(proxy)
    # The last call's attempts (a 503 to GetTokensFromRefreshToken is that
    # action missing, as on moto: the refresh goes on with InitiateAuth).
    log = [entry for entry in fault_log(proxy) if entry["mode_applied"] == FAULTS[fault][0]["mode"]]
    attempts = len([entry for entry in log if entry["action"] == log[-1]["action"]])
    assert result.returncode == 75 and FAULTS[fault][2] in result.stderr, result.stderr
    assert re.search(rf"\({re.escape(proxy.url)}: {attempts} attempts over \d+\.\d s\)$", said(result.stderr).strip()), \
        (attempts, result.stderr)
    assert all_stored(bus) == before
