"""A URL's credentials are never shown: an endpoint URL with userinfo
(`http://user:secret@host/`, which libcurl sends as Basic authorization) and a
proxy URL with userinfo keep working as they are, and neither the name nor the
password appears in any message, note, error or `--debug` trace, of cog-cred's
or echoed from libcurl's."""
import json

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



# --- every character a password may hold (#61) ---------------------------------------------------
# libcurl's own parser decides where a URL's user name and password end
# (LibcurlURL): every printable ASCII character in the password of an
# endpoint URL and of a proxy URL, and no part of the user name or password
# in `status`, `status --json`, the `--debug` trace or an error. A URL
# libcurl reads works as it is and is shown without them; one it cannot
# read (a `#`, `?`, `/`, `@` or space in the password) is refused with 78,
# naming its variable, before anything is sent.

PIECES = ("ZqUser", "Zq1", "Zq2")
PRINTABLE = [chr(code) for code in range(0x20, 0x7F)]


def with_password(url, character):
    scheme, rest = url.split("://", 1)
    return f"{scheme}://ZqUser:Zq1{character}Zq2@{rest}"


def shows_no_piece(character, *results):
    """In any case: a message may have lowered it (as a scheme is)."""
    for result in results:
        for text in (result.stdout.lower(), result.stderr.lower()):
            for piece in PIECES:
                assert piece.lower() not in text, (repr(character), piece, text)


def test_no_part_of_an_endpoints_password_is_shown_whatever_it_holds(cog, bus, signed_in):
    variable = "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER"
    read = set()
    for character in PRINTABLE:
        url = with_password(signed_in.url, character)
        traced = cog.run("status", "--json", "--debug", env={variable: url})
        text = cog.run("status", env={variable: url})
        refused = cog.run("refresh", env={variable: with_password("http://cognito.example.com/", character)})
        shows_no_piece(character, traced, text, refused)
        if traced.returncode == 0:
            read.add(character)
            # Read as libcurl reads it: it went there, and is shown without its userinfo.
            assert json.loads(traced.stdout)["endpoint"] == signed_in.url, (repr(character), traced.stdout)
            assert f"{signed_in.url} GetUser (attempt 1): HTTP 200" in traced.stderr, (repr(character), traced.stderr)
            assert text.returncode == 0 and f"endpoint:      {signed_in.url} (from {variable})" in text.stdout
            assert refused.returncode == 78 and "http://cognito.example.com/ is plain http://" in refused.stderr
        else:
            for result in (traced, text, refused):
                assert result.returncode == 78 and f"invalid {variable}: " in result.stderr, (repr(character), result.stderr)
    # What the old guess cut short is part of libcurl's password; what ends
    # libcurl's authority makes a URL it refuses.
    assert {'"', "'", "\\", "<", ">", "%", ":"} <= read
    assert not {"#", "?", "/", "@", " "} & read


def test_no_part_of_a_proxys_password_is_shown_whatever_it_holds(cog, bus, signed_in, tinyproxy):
    proxy = tinyproxy()
    read = set()
    for character in PRINTABLE:
        setting = with_password(proxy.url(), character)
        before = len(proxy.requests())
        traced = cog.run("status", "--json", "--debug", env={"http_proxy": setting})
        text = cog.run("status", env={"http_proxy": setting})
        shows_no_piece(character, traced, text)
        if traced.returncode == 0:
            read.add(character)
            shown = json.loads(traced.stdout)
            assert (shown["proxy"], shown["proxy_from"]) == (f"http://{proxy.address}", "http_proxy"), shown
            assert f"through the proxy http://{proxy.address} (from http_proxy)" in traced.stderr
            assert f"network:       through the proxy http://{proxy.address} (from http_proxy)" in text.stdout
            # It went through the proxy, as libcurl read the setting.
            assert len(proxy.requests()) > before
        else:
            for result in (traced, text):
                assert result.returncode == 78 and "invalid http_proxy: " in result.stderr, (repr(character), result.stderr)
    assert {'"', "'", "\\", "<", ">", "%", ":"} <= read
    assert not {"#", "?", "/", "@", " "} & read


def test_a_proxy_setting_whose_first_scheme_separator_is_in_the_password_is_refused_unshown(cog, bus, signed_in):
    """No scheme: libcurl reads no scheme in 'bob:hun://...' either, and cannot read the rest."""
    https = {"AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER": "https://cognito-idp.us-east-1.amazonaws.com/",
             "HTTPS_PROXY": "ZqUser:Zq1://Zq2@127.0.0.1:1"}
    for args in (["refresh"], ["refresh", "--debug"], ["status", "--json"], ["status"]):
        result = cog.run(*args, env=https)
        assert "invalid HTTPS_PROXY: " in result.stdout + result.stderr, (args, result.stderr)
        shows_no_piece("://", result)


def test_configure_refuses_a_domain_or_endpoint_with_a_password_without_echoing_it(cog, bus, signed_in):
    before = cog.config_file.read_text()
    for option, value in (("--domain", "ZqUser:Zq1Zq2@auth.example.com"),
                          ("--domain", "https://ZqUser:Zq1#Zq2@auth.example.com"),
                          ("--endpoint-url", "http://ZqUser:Zq1?Zq2@127.0.0.1:1/")):
        result = cog.run("configure", option, value)
        assert result.returncode != 0 and "invalid " in result.stderr and option.lstrip("-") in result.stderr, (value, result.stderr)
        assert result.stderr.count("\n") == 1
        shows_no_piece(value, result)
    assert cog.config_file.read_text() == before
