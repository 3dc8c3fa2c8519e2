"""A URL's credentials are never shown: an endpoint URL with userinfo
(`http://user:secret@host/`, which libcurl sends as Basic authorization) and a
proxy URL with userinfo keep working as they are, and neither the name nor the
password appears in any message, note, error or `--debug` trace, of cog-cred's
or echoed from libcurl's."""
import pytest

import fault_server
from support import configure_on_double, plan

PASSWORD = "Url-Password-1"
USER = "urls@example.com"
NAME, SECRET = "Endp0int-User", "Endp0int-Secret"
PROXY_NAME, PROXY_SECRET = "Pr0xy-User", "Pr0xy-Secret"
CREDENTIALS = (NAME, SECRET, PROXY_NAME, PROXY_SECRET)


def with_userinfo(url, name=NAME, secret=SECRET):
    """http://NAME:SECRET@127.0.0.1:PORT/ for http://127.0.0.1:PORT/."""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{name}:{secret}@{rest}"


def shows_none(result):
    """Neither the name nor the password in anything the command printed."""
    for text in (result.stdout, result.stderr):
        for credential in CREDENTIALS:
            assert credential not in text, (credential, result.stderr)


@pytest.fixture
def signed_in(cog, bus, double):
    """Signed in through an endpoint URL with userinfo, which the double ignores."""
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, with_userinfo(double.url), "--username", USER,
                        "--connect-timeout", "1", "--request-timeout", "1", "--command-timeout", "4")
    for debug in ([], ["--debug"]):
        result = cog.run("sign-in", "--password-stdin", *debug, input=PASSWORD + "\n")
        assert result.returncode == 0, result.stderr
        shows_none(result)
    assert f"{double.url} InitiateAuth (attempt 1): HTTP 200" in result.stderr, result.stderr
    return double


@pytest.mark.parametrize("debug", [[], ["--debug"]])
def test_an_endpoints_credentials_are_in_no_wait_and_no_error(cog, bus, signed_in, proxy, debug):
    endpoint = "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER"
    # Never answered in time: the "still waiting" lines and the error name the URL.
    plan(proxy, {"mode": "delay", "seconds": 5, "times": -1})
    slow = cog.run("refresh", *debug, env={endpoint: with_userinfo(proxy.url)})
    plan(proxy)
    assert slow.returncode == 75, slow.stderr
    assert f"still waiting for {proxy.url} (GetTokensFromRefreshToken, attempt" in slow.stderr, slow.stderr
    assert f"Cognito at {proxy.url} did not answer in time" in slow.stderr, slow.stderr
    shows_none(slow)
    # Nothing listens: the error names the URL.
    closed = f"http://127.0.0.1:{fault_server.closed_port()}/"
    unreachable = cog.run("refresh", *debug, env={endpoint: with_userinfo(closed)})
    assert unreachable.returncode == 75 and f"cannot reach Cognito at {closed} (" in unreachable.stderr, unreachable.stderr
    shows_none(unreachable)
    # AWS_ENDPOINT_URL's note says where the requests went.
    noted = cog.run("refresh", *debug, env={"AWS_ENDPOINT_URL": with_userinfo(signed_in.url)})
    assert noted.returncode == 0, noted.stderr
    assert f"sending Cognito requests to {signed_in.url} (from AWS_ENDPOINT_URL)" in noted.stderr, noted.stderr
    shows_none(noted)
    # Plain HTTP to another machine is refused, naming the URL.
    refused = cog.run("refresh", *debug, env={endpoint: with_userinfo("http://cognito.example.com/")})
    assert refused.returncode == 78 and "http://cognito.example.com/ is plain http://" in refused.stderr, refused.stderr
    shows_none(refused)


@pytest.mark.parametrize("debug", [[], ["--debug"]])
@pytest.mark.parametrize("proxy_url", [
    # Nothing listens there: libcurl names the host and port.
    "http://{name}:{secret}@127.0.0.1:{port}",
    # A setting libcurl cannot read: it echoes the whole of it, in quotes.
    "http://{name}:{secret} x@127.0.0.1:{port}",
    "{name}:{secret} x@127.0.0.1:{port}",
    "http://{name}:{secret}@127.0.0.1:99999",
])
def test_a_proxys_credentials_are_in_no_message(cog, bus, signed_in, debug, proxy_url):
    """http_proxy is read for an http:// endpoint (127.0.0.1 too, as
    NO_PROXY does not name it, by libcurl's rule): a proxy out of reach is
    named without its userinfo, and a setting libcurl could not use is
    refused before anything is sent, without echoing it."""
    port = fault_server.closed_port()
    setting = proxy_url.format(name=PROXY_NAME, secret=PROXY_SECRET, port=port)
    result = cog.run("refresh", *debug, env={"http_proxy": setting})
    if "99999" in setting or " " in setting:
        assert result.returncode == 78 and "invalid http_proxy: " in result.stderr, result.stderr
    else:
        assert result.returncode == 75, result.stderr
        assert f"cannot reach the proxy http://127.0.0.1:{port} (from http_proxy) on the way to Cognito at" in result.stderr
    shows_none(result)

