"""One connection per command and host, whatever the number of requests
(#42): against the project's Cognito test double, which keeps connections
open as Cognito does (HTTP/1.1 keep-alive) and numbers the connections its
requests come on."""
import time

import pytest

from support import configure_on_double

PASSWORD = "Connection-Password-1"
USER = "conn@example.com"


def connections_since(double, count):
    """The connections the Cognito requests after the first `count` came on."""
    requests = double.stats()["requests"][count:]
    return sorted({r["connection"] for r in requests if r.get("connection")}), len(requests)


def test_an_srp_sign_in_with_an_authenticator_code_is_one_connection(cog, bus, double):
    totp = double.add_totp_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    before = len(double.stats()["requests"])
    cog.ok("sign-in", "--password-stdin", "--mfa-code", totp.now(), input=PASSWORD + "\n")
    connections, requests = connections_since(double, before)
    assert requests == 3 and len(connections) == 1, (requests, connections)


def test_a_first_sign_in_that_remembers_the_device_is_one_connection(cog, bus, double):
    double.configure(device_tracking="always")
    totp = double.add_totp_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    before = len(double.stats()["requests"])
    cog.ok("sign-in", "--password-stdin", "--mfa-code", totp.now(), input=PASSWORD + "\n")
    connections, requests = connections_since(double, before)
    assert requests >= 4 and len(connections) == 1, (requests, connections)


def test_an_answer_after_a_pause_goes_on_a_fresh_connection(cog, bus, double):
    """A challenge's answer must never go out twice, and libcurl re-sends a
    request by itself on a kept connection that died before any answer: after
    a person's pause (longer than CurlTransport.freshAge), the answer gets a
    new connection, and Cognito sees it once."""
    totp = double.add_totp_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    before = len(double.stats()["requests"])

    def after_a_pause(_):
        time.sleep(1.5)  # past the fresh age: the kept connection may not carry the answer
        return totp.now()

    status, _, _, err = cog.answer_when_asked("sign-in", "--password-stdin", "--mfa-code", "-", first_lines=[PASSWORD],
                                              answer=after_a_pause)
    assert status == 0, err
    requests = double.stats()["requests"][before:]
    steps = [(r["action"], r.get("challenge"), r["connection"]) for r in requests]
    assert [s[:2] for s in steps] == [("InitiateAuth", None), ("RespondToAuthChallenge", "PASSWORD_VERIFIER"),
                                      ("RespondToAuthChallenge", "SOFTWARE_TOKEN_MFA")], steps
    # The first two shared a connection; the answer after the pause did not.
    assert steps[0][2] == steps[1][2] != steps[2][2]


def test_mfa_enable_totp_is_one_connection(cog, bus, double):
    """AssociateSoftwareToken, VerifySoftwareToken, SetUserMFAPreference and
    GetUser: the code is typed in well under the fresh age here."""
    from test_mfa_settings import add_authenticator

    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    before = len(double.stats()["requests"])
    status, _, err = add_authenticator(cog)
    assert status == 0, err
    connections, requests = connections_since(double, before)
    assert requests >= 3 and len(connections) == 1, (requests, connections)
