"""`--debug` and COG_CRED_DEBUG=1: a trace on stderr of each call to
Cognito (action, URL, attempt, HTTP status, time) and each keyring step
(kind, profile, found or not, time), never a secret or any part of one,
checked against every secret the session stored and the password."""
import re

import pytest

from support import all_stored, configure_on_double

USER = "dee@example.com"
PASSWORD = "Debug-Trace-Password-7"
CALL = re.compile(r"cog-cred: debug: POST http://127\.0\.0\.1:\d+/ (\w+) \(attempt 1\): HTTP (\d+) in \d+ ms")


def leaks(text, secrets, width=12):
    """Any run of `width` characters of a secret found in `text`."""
    return [s[i:i + width] for s in secrets for i in range(0, max(1, len(s) - width + 1)) if s[i:i + width] in text]


@pytest.fixture
def traced(cog, double):
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    return double


def test_the_trace_names_every_call_and_keyring_step_and_no_secret(cog, bus, traced):
    signed_in = cog.ok("sign-in", "--debug", "--password-stdin", input=PASSWORD + "\n")
    secrets = [PASSWORD, *(v for v in all_stored(bus).values() if v)]
    cog.remember_secret(*secrets)
    calls = [m.groups() for m in map(CALL.fullmatch, signed_in.stderr.splitlines()) if m]
    assert ("InitiateAuth", "200") in calls and ("RespondToAuthChallenge", "200") in calls, signed_in.stderr
    assert re.search(r"cog-cred: debug: keyring: write refresh of profile 'default': stored in \d+ ms", signed_in.stderr)

    # The variable, on a read the front would answer: handed to cog-cred-cli, traced there.
    read = cog.ok("token", env={"COG_CRED_DEBUG": "1"})
    assert read.stdout.strip() == all_stored(bus)["access"]
    assert re.search(r"keyring: read access of profile 'default': access found in \d+ ms", read.stderr), read.stderr
    refreshed = cog.ok("refresh", env={"COG_CRED_DEBUG": "1"})
    assert ("GetTokensFromRefreshToken", "200") in [m.groups() for m in map(CALL.fullmatch, refreshed.stderr.splitlines()) if m]
    secrets += [v for v in all_stored(bus).values() if v]
    cog.remember_secret(*secrets)
    # A refusal is traced with its status too.
    traced.revoke(USER)
    refused = cog.run("refresh", "--debug")
    assert refused.returncode == 77
    assert ("GetTokensFromRefreshToken", "400") in [m.groups() for m in map(CALL.fullmatch, refused.stderr.splitlines()) if m]

    for result in (signed_in, read, refreshed, refused):
        assert leaks(result.stderr, secrets) == [], result.stderr
    # Off by default, and with COG_CRED_DEBUG=0.
    assert "debug:" not in cog.run("status", env={"COG_CRED_DEBUG": "0"}).stderr
    assert "debug:" not in cog.run("status").stderr


def test_debug_after_exec_terminator_is_the_commands_own(cog, bus, traced):
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    cog.remember_secret(*(v for v in all_stored(bus).values() if v))
    result = cog.ok("exec", "--", "sh", "-c", 'printf "%s\\n" "$@"', "sh", "--debug")
    assert result.stdout == "--debug\n" and "debug:" not in result.stderr
