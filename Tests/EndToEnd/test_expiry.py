"""Expiry and refresh decisions, against the project's Cognito test double.

moto's tokens always live 3600 s and cannot be made to expire on demand, so
these tests use a server we control (cognito_double/): it issues tokens
with a chosen lifetime and issue time, counts every call, and can revoke
refresh tokens or answer with faults. cog-cred's own clock is the real one.
"""
import time

import pytest

from support import all_stored, claims, configure_on_double, stored

PASSWORD = "Double-Password-1"
# One refresh operation: the double offers GetTokensFromRefreshToken, as Cognito does.
REFRESH = "GetTokensFromRefreshToken"
USER = "carol@example.com"


@pytest.fixture
def session(cog, double, bus):
    """Signed in on the double with tokens that expired an hour ago."""
    double.add_user(USER, PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    cog.remember_secret(PASSWORD)
    double.configure(issued_at_offset=-7200, token_lifetime=3600)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    double.configure(issued_at_offset=0)
    return double


def test_an_expired_access_token_is_refreshed_before_it_is_printed(cog, bus, session):
    before = all_stored(bus)
    assert claims(before["access"])["exp"] < time.time()
    printed = cog.ok("token").stdout.strip()
    assert session.calls(REFRESH) == 1
    assert claims(printed)["exp"] > time.time() + 3000
    after = all_stored(bus)
    assert after["access"] == printed
    assert after["id"] != before["id"]
    assert after["refresh"] == before["refresh"]  # the answer had none: the old one stays
    # Now fresh: handed out again without another refresh.
    assert cog.ok("get-header").stdout == f"Authorization: Bearer {printed}\n"
    assert session.calls(REFRESH) == 1


def test_a_token_inside_the_margin_is_refreshed_and_one_outside_is_not(cog, bus, session):
    # 3600 s tokens: margin 360 s. Issued 3300 s ago -> 300 s left -> refresh.
    session.configure(issued_at_offset=-3300)
    cog.ok("refresh")
    session.configure(issued_at_offset=0)
    count = session.calls(REFRESH)
    cog.ok("token")
    assert session.calls(REFRESH) == count + 1
    # Issued 3000 s ago -> 600 s left -> kept.
    session.configure(issued_at_offset=-3000)
    cog.ok("refresh")
    count = session.calls(REFRESH)
    cog.ok("token")
    assert session.calls(REFRESH) == count
    # ... unless --min-ttl asks for more than that.
    cog.ok("token", "--min-ttl", "900")
    assert session.calls(REFRESH) == count + 1


def test_a_token_living_less_than_the_margin_is_refreshed_once_per_call(cog, bus, session):
    session.configure(token_lifetime=30)
    for expected in (1, 2, 3):
        printed = cog.ok("token").stdout.strip()
        assert session.calls(REFRESH) == expected
        assert claims(printed)["exp"] > time.time()
        assert printed == stored(bus, "access")


def test_a_fresh_token_that_is_already_expired_is_never_printed(cog, bus, session):
    session.configure(issued_at_offset=-7200)
    result = cog.run("token")
    assert result.returncode == 75
    assert result.stdout == ""
    assert "clock" in result.stderr
    assert session.calls(REFRESH) == 1


def test_a_rotated_refresh_token_is_stored(cog, bus, session):
    session.configure(rotate_refresh_tokens=True)
    old = stored(bus, "refresh")
    cog.ok("token")
    new = stored(bus, "refresh")
    assert new and new != old
    cog.ok("refresh")  # the new one works
    assert stored(bus, "refresh") not in (old, new)


def test_a_revoked_session_exits_77_and_leaves_the_items(cog, bus, session):
    session.revoke(USER)
    before = all_stored(bus)
    for command in (["token"], ["get-header"], ["refresh"]):
        result = cog.run(*command)
        assert result.returncode == 77, command
        assert "sign in again" in result.stderr
        assert result.stdout == ""
    assert all_stored(bus) == before


# Unreadable 200s are never retried; 5xx and throttling are retried with
# backoff (count 10 outlasts every attempt). A non-JSON 5xx to
# GetTokensFromRefreshToken is also how a service without that action
# answers, so cog-cred then tries InitiateAuth, which the fault hits too.
@pytest.mark.parametrize("status, body, content_type, count", [
    (500, "<html><body>Internal Server Error</body></html>", "text/html", 10),
    (503, "", "text/plain", 10),
    (200, '{"AuthenticationResult": {"AccessTok', "application/x-amz-json-1.1", 1),
    (200, "garbage", "application/x-amz-json-1.1", 1),
    (400, '{"__type": "TooManyRequestsException", "message": "Rate exceeded"}', "application/x-amz-json-1.1", 10),
    (500, '{"__type": "InternalErrorException", "message": "boom"}', "application/x-amz-json-1.1", 10),
])
def test_unreadable_or_temporary_answers_exit_75_and_change_nothing(cog, bus, session, status, body, content_type,
                                                                   count):
    before = all_stored(bus)
    session.configure(fail_next={"status": status, "body": body, "content_type": content_type, "count": count})
    result = cog.run("token")
    assert result.returncode == 75, result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert all_stored(bus) == before
    session.configure(fail_next=None)
    # A failed fallback is not remembered: the next refresh asks GetTokensFromRefreshToken again.
    calls = session.calls(REFRESH)
    cog.ok("token")
    assert session.calls(REFRESH) == calls + 1


def test_one_throttled_answer_is_retried_quietly(cog, bus, session):
    session.configure(fail_next={"status": 400, "content_type": "application/x-amz-json-1.1",
                                 "body": '{"__type": "TooManyRequestsException", "message": "Rate exceeded"}'})
    result = cog.ok("token")
    assert result.stderr == ""  # nothing printed per retry
    assert session.calls(REFRESH) == 2


def test_an_html_500_once_is_survived_through_initiate_auth(cog, bus, session):
    session.configure(fail_next={"status": 500, "body": "<html>proxy error</html>", "content_type": "text/html",
                                 "count": 1})
    printed = cog.ok("token").stdout.strip()
    assert printed == stored(bus, "access")
    assert session.calls("InitiateAuth:REFRESH_TOKEN_AUTH") == 1


def test_requests_carry_exactly_cognitos_headers(cog, session):
    cog.ok("refresh")
    requests = session.stats()["requests"]
    assert requests, "no request recorded"
    for request in requests:
        headers = request["headers"]
        assert headers["content-type"] == "application/x-amz-json-1.1"
        assert headers["x-amz-target"] == "AWSCognitoIdentityProviderService." + request["action"]
        assert "authorization" not in headers
