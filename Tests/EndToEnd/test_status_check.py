"""`status` asks Cognito whether the stored session still stands: what is
stored cannot tell (a sign-out everywhere from another machine leaves the
keyring as it was). GetUser for the API's tokens, a refresh for tokens it
cannot ask about; refused: 77, "sign in again", the stored items untouched;
Cognito unreachable: 75, "could not check"; --offline: what is stored alone.
(The managed login's userInfo way: test_managed_login.py.)"""
import json

import pytest

from support import all_stored, configure_on_double, signed_in_on_double

USER = "sam@example.com"
PASSWORD = "Status-Check-Password-1"


@pytest.fixture
def session(cog, double):
    signed_in_on_double(cog, double.url, double, USER, PASSWORD)
    return double


def sign_out_everywhere_from_another_machine(cog, double):
    """The same user, signed in under another profile (another machine's
    keyring in all that matters), signs out of every device."""
    configure_on_double(cog, double.url, "--username", USER, profile="laptop")
    cog.ok("sign-in", "--profile", "laptop", "--password-stdin", input=PASSWORD + "\n")
    cog.ok("sign-out", "--profile", "laptop", "--global")


def test_a_sign_out_everywhere_elsewhere_is_seen_by_status(cog, bus, session):
    text = cog.ok("status").stdout
    assert "signed in:     yes" in text and "session:       stands (Cognito answered GetUser)" in text
    assert session.calls("GetUser") == 1
    assert json.loads(cog.ok("status", "--json").stdout)["session_checked_by"] == "GetUser"

    sign_out_everywhere_from_another_machine(cog, session)
    before = all_stored(bus)
    refused = cog.run("status")
    assert refused.returncode == 77, refused.stderr
    assert "signed in:     no" in refused.stdout and "session:       refused by Cognito" in refused.stdout
    assert "expired or was revoked; sign in again: cog-cred sign-in" in refused.stderr
    assert refused.stderr.count("\n") == 1
    # An endpoint's answer never deletes a session: signing in again replaces it.
    assert all_stored(bus) == before and before["refresh"]
    as_json = cog.run("status", "--json")
    assert as_json.returncode == 77 and json.loads(as_json.stdout)["session"] == "refused"
    assert json.loads(as_json.stdout)["signed_in"] is False

    # --offline: the stored state alone, as status said before it asked.
    offline = cog.run("status", "--offline")
    assert offline.returncode == 0, offline.stderr
    assert "signed in:     yes" in offline.stdout and "session:       not checked (--offline)" in offline.stdout
    calls = session.calls("GetUser")
    cog.ok("status", "--offline", "--json")
    assert session.calls("GetUser") == calls


def test_tokens_it_cannot_ask_about_are_checked_with_a_refresh(cog, bus, double):
    # An access token too near its end to ask about (30 s): a refresh asks,
    # and its new tokens are kept.
    double.configure(token_lifetime=30)
    signed_in_on_double(cog, double.url, double, USER, PASSWORD)
    old_access = all_stored(bus)["access"]
    text = cog.ok("status").stdout
    assert "session:       stands (Cognito refreshed the tokens)" in text
    assert double.calls("GetTokensFromRefreshToken") == 1 and double.calls("GetUser") == 0
    assert all_stored(bus)["access"] != old_access

    sign_out_everywhere_from_another_machine(cog, double)
    refused = cog.run("status")
    assert refused.returncode == 77 and "sign in again" in refused.stderr


def test_when_cognito_cannot_be_asked_status_says_it_could_not_check(cog, bus, session):
    before = all_stored(bus)
    # Nothing listens on the discard port: the connection is refused.
    away = {"AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER": "http://127.0.0.1:9/"}
    result = cog.run("status", env=away)
    assert result.returncode == 75
    assert "signed in:     yes" in result.stdout and "session:       not checked" in result.stdout
    assert result.stderr.startswith("cog-cred: error: could not check the session with Cognito: cannot reach Cognito at "
                                    "http://127.0.0.1:9/ ("), result.stderr
    assert "cog-cred status --offline" in result.stderr and result.stderr.count("\n") == 1
    assert json.loads(cog.run("status", "--json", env=away).stdout)["session"] == "not-checked"
    assert all_stored(bus) == before
    assert cog.run("status", "--offline", env=away).returncode == 0
