"""One connection per command and host, whatever the number of requests
(#42): against the project's Cognito test double, which keeps connections
open as Cognito does (HTTP/1.1 keep-alive) and numbers the connections its
requests come on."""
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
