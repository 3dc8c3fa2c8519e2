"""Corporate and regulated networks: every request through a real forward
proxy (Debian's tinyproxy: CONNECT and forwarding, with and without Basic
authentication; microsocks for SOCKS5), NO_PROXY as the user sets it, a
proxy's refusal and absence; AWS's FIPS endpoints and GovCloud, checked
against botocore's own endpoint list.

tinyproxy's log is the proof a request went through it: a line per request,
`CONNECT host:port` for HTTPS and the full URL for plain HTTP. microsocks
logs nothing, so a SOCKS test proves its way by the server's refusal of a
wrong password and by the trace."""
import json
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest

import fault_server
from conftest import free_port, listening, wait_until
from support import (DOMAIN_PASSWORD, DOMAIN_USER, PROXY_USER, SOCKS_PASSWORD, configure_on_double, moto_identity_pool,
                     sign_in_by_pasting, sign_in_without_a_browser, stored)

USER, PASSWORD = "net@example.com", "Network-Password-4"
# tinyproxy's configuration takes only a plain password; the SOCKS one
# needs percent-encoding in the URL. Every one starts with "Pr0xy", which
# shows_no_proxy_credentials looks for, in any encoding.
PROXY_PASSWORD = "Pr0xy-Pass_w0rd"
SOCKS_PASSWORD_IN_URL = urllib.request.quote(SOCKS_PASSWORD, safe="")


def shows_no_proxy_credentials(*results):
    for result in results:
        for text in (result.stdout, result.stderr):
            for secret in (PROXY_USER, PROXY_PASSWORD, "Pr0xy"):
                assert secret not in text, (secret, text)


# --- plain HTTP through a forwarding proxy, NO_PROXY ----------------------------------------------

def test_plain_http_goes_through_the_proxy_and_no_proxy_keeps_it_direct(cog, bus, pool, tinyproxy):
    proxy = tinyproxy()
    moto = pool.url.rstrip("/")
    via = {"http_proxy": proxy.url()}
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username)
    cog.remember_secret(pool.password)
    signed = cog.run("sign-in", "--password-stdin", "--debug", input=pool.password + "\n", env=via)
    assert signed.returncode == 0, signed.stderr
    # libcurl's rule: a loopback address is proxied too unless NO_PROXY names it.
    assert proxy.requests() and all(r == f"POST {moto}/" for r in proxy.requests()), proxy.requests()
    assert f"(attempt 1), through the proxy http://{proxy.address} (from http_proxy)" in signed.stderr
    before = len(proxy.requests())
    cog.ok("refresh", env=via)
    assert len(proxy.requests()) > before
    status = cog.ok("status", env=via).stdout
    assert f"network:       through the proxy http://{proxy.address} (from http_proxy)" in status
    assert f"endpoint:      {pool.url}" in status
    as_json = json.loads(cog.ok("status", "--json", env=via).stdout)
    assert as_json["proxy"] == f"http://{proxy.address}" and as_json["proxy_from"] == "http_proxy"
    assert as_json["endpoint"] == pool.url and as_json["fips"] is False

    # NO_PROXY names the host: straight there, in both its spellings.
    counted = len(proxy.requests())
    for variable in ("NO_PROXY", "no_proxy"):
        direct = {**via, variable: "localhost, 127.0.0.0/8"}
        traced = cog.run("refresh", "--debug", env=direct)
        assert traced.returncode == 0, traced.stderr
        assert f"(attempt 1), direct ({variable} names the host)" in traced.stderr
        assert f"direct ({variable} names the host)" in cog.ok("status", "--offline", env=direct).stdout
    assert len(proxy.requests()) == counted
    # HTTP_PROXY is never read (curl's rule: a CGI request's Proxy: header sets it).
    cog.ok("refresh", env={"HTTP_PROXY": proxy.url()})
    assert len(proxy.requests()) == counted


def test_aws_credentials_go_through_the_proxy(cog, bus, pool, tinyproxy):
    proxy = tinyproxy()
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username)
    cog.remember_secret(pool.password)
    cog.ok("sign-in", "--password-stdin", input=pool.password + "\n")
    cog.ok("configure", "--identity-pool-id", moto_identity_pool(pool))
    printed = cog.run("aws-credentials", "--debug", env={"AWS_ENDPOINT_URL": pool.url, "http_proxy": proxy.url()})
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["Version"] == 1
    # GetId and GetCredentialsForIdentity, both through it.
    assert len(proxy.requests()) == 2, proxy.requests()
    assert printed.stderr.count(f"through the proxy http://{proxy.address} (from http_proxy)") == 2


# --- HTTPS through CONNECT, Basic authentication ---------------------------------------------------

@pytest.fixture
def tls_endpoint(double, tmp_path):
    """The double behind an HTTPS endpoint of its own (a private CA)."""
    server, url, ca = fault_server.start_fault_server(double.url, tls=True, ca_out=str(tmp_path / "ca.pem"))
    double.add_user(USER, PASSWORD)
    yield url, ca
    server.shutdown()
    server.server_close()


def test_https_goes_through_connect_with_basic_authentication(cog, bus, double, tls_endpoint, tinyproxy):
    url, ca = tls_endpoint
    proxy = tinyproxy(basic_auth=(PROXY_USER, PROXY_PASSWORD))
    cog.remember_secret(PASSWORD, PROXY_PASSWORD)
    configure_on_double(cog, url, "--username", USER, "--ca-bundle", ca, "--connect-timeout", "2",
                        "--command-timeout", "10")
    good = {"HTTPS_PROXY": proxy.url(PROXY_USER, PROXY_PASSWORD)}
    signed = cog.run("sign-in", "--password-stdin", "--debug", input=PASSWORD + "\n", env=good)
    assert signed.returncode == 0, signed.stderr
    tunnel = f"CONNECT {url.split('://')[1].rstrip('/')}"
    assert proxy.requests() and set(proxy.requests()) == {tunnel}, proxy.requests()
    assert f"through the proxy http://{proxy.address} (from HTTPS_PROXY)" in signed.stderr
    refreshed = cog.run("refresh", "--debug", env=good)
    status = cog.run("status", env=good)
    assert refreshed.returncode == 0 and status.returncode == 0, (refreshed.stderr, status.stderr)
    assert f"through the proxy http://{proxy.address} (from HTTPS_PROXY)" in status.stdout
    shows_no_proxy_credentials(signed, refreshed, status)

    # A wrong password, and none: 78, naming the proxy without its credentials.
    before = {kind: stored(bus, kind) for kind in ("access", "id", "refresh")}
    for setting, said in ((proxy.url(PROXY_USER, "wrong"), "refused the user name and password HTTPS_PROXY gives"),
                          (proxy.url(), "asks for a user name and password, and HTTPS_PROXY gives none")):
        for debug in ([], ["--debug"]):
            refused = cog.run("refresh", *debug, env={"HTTPS_PROXY": setting})
            assert refused.returncode == 78, refused.stderr
            assert f"the proxy http://{proxy.address} (from HTTPS_PROXY) {said}" in refused.stderr
            assert "check the proxy URL in HTTPS_PROXY" in refused.stderr
            assert refused.stderr.count("cog-cred: error:") == 1
            assert "wrong" not in refused.stderr
            shows_no_proxy_credentials(refused)
    assert {kind: stored(bus, kind) for kind in ("access", "id", "refresh")} == before


def test_a_forwarding_proxys_407_is_78_too(cog, bus, pool, tinyproxy):
    """Plain HTTP forwarded without the credentials the proxy wants: its 407
    is the answer. A GET, the pool's keys for `status --verify`: tinyproxy
    closes before reading a POST's body, which shows as a reset (75, naming
    the proxy), and answers wrong credentials with 401."""
    proxy = tinyproxy(basic_auth=(PROXY_USER, PROXY_PASSWORD))
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username)
    cog.remember_secret(pool.password)
    cog.ok("sign-in", "--password-stdin", input=pool.password + "\n")
    refused = cog.run("status", "--verify", "--debug", env={"http_proxy": proxy.url()})
    assert refused.returncode == 78, refused.stderr
    assert f"the proxy http://{proxy.address} (from http_proxy) asks for a user name and password, and http_proxy gives none" \
        in refused.stderr
    assert "GET" in refused.stderr and f"through the proxy http://{proxy.address}" in refused.stderr
    shows_no_proxy_credentials(refused)
    # Refused once, not retried: a missing password does not appear.
    assert proxy.requests() == [f"GET {pool.url}{pool.pool_id}/.well-known/jwks.json"], proxy.requests()
    # With them, the keys come through it. (moto's tokens name AWS's issuer,
    # not moto's URL, so the check itself then fails: 77, keys in hand.)
    verified = cog.run("status", "--verify", env={"http_proxy": proxy.url(PROXY_USER, PROXY_PASSWORD)})
    assert verified.returncode == 77 and "whose keys were checked" in verified.stderr, verified.stderr
    # The keys, then the session's check (GetUser): both through it.
    assert proxy.requests()[1:] == [f"GET {pool.url}{pool.pool_id}/.well-known/jwks.json", f"POST {pool.url}"], \
        proxy.requests()
    shows_no_proxy_credentials(verified)


def test_a_proxy_out_of_reach_is_75_naming_it_and_its_variable(cog, bus, pool):
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username, "--command-timeout", "3")
    cog.remember_secret(pool.password)
    port = fault_server.closed_port()
    result = cog.run("sign-in", "--password-stdin", input=pool.password + "\n",
                     env={"ALL_PROXY": f"http://{PROXY_USER}:{PROXY_PASSWORD}@127.0.0.1:{port}"})
    assert result.returncode == 75, result.stderr
    assert f"cannot reach the proxy http://127.0.0.1:{port} (from ALL_PROXY) on the way to Cognito at {pool.url}" \
        in result.stderr
    shows_no_proxy_credentials(result)
    # A setting libcurl could not use: 78 before anything is sent, the
    # stored session as it was.
    cog.ok("sign-in", "--password-stdin", input=pool.password + "\n")
    before = {kind: stored(bus, kind) for kind in ("access", "id", "refresh")}
    for setting in ("gopher://127.0.0.1:70", f"http://{PROXY_USER}:{PROXY_PASSWORD}@127.0.0.1:99999",
                    f"http://{PROXY_USER}:{PROXY_PASSWORD} x@127.0.0.1:{port}"):
        bad = cog.run("refresh", env={"http_proxy": setting})
        assert bad.returncode == 78 and "invalid http_proxy:" in bad.stderr, bad.stderr
        shows_no_proxy_credentials(bad)
    assert {kind: stored(bus, kind) for kind in ("access", "id", "refresh")} == before


# --- SOCKS5 ----------------------------------------------------------------------------------------

def test_socks5h_with_a_user_and_password(cog, bus, pool, microsocks):
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username)
    cog.remember_secret(pool.password, SOCKS_PASSWORD, SOCKS_PASSWORD_IN_URL)
    # The password percent-encoded, as in any URL: microsocks gets it decoded.
    socks = f"socks5h://{PROXY_USER}:{SOCKS_PASSWORD_IN_URL}@127.0.0.1:{microsocks}"
    signed = cog.run("sign-in", "--password-stdin", "--debug", input=pool.password + "\n", env={"ALL_PROXY": socks})
    assert signed.returncode == 0, signed.stderr
    assert f"through the proxy socks5h://127.0.0.1:{microsocks} (from ALL_PROXY)" in signed.stderr
    refreshed = cog.run("refresh", env={"all_proxy": socks})
    assert refreshed.returncode == 0, refreshed.stderr
    # The server itself is asked: it refuses another password.
    wrong = cog.run("refresh", env={"ALL_PROXY": f"socks5h://{PROXY_USER}:nope@127.0.0.1:{microsocks}"})
    assert wrong.returncode == 78, wrong.stderr
    assert f"the proxy socks5h://127.0.0.1:{microsocks} (from ALL_PROXY) refused the user name and password ALL_PROXY gives" \
        in wrong.stderr
    shows_no_proxy_credentials(signed, refreshed, wrong)


# --- the browser sign-in ---------------------------------------------------------------------------

def test_a_browser_sign_in_goes_through_the_proxy_and_its_listener_never_does(cog, bus, domain, tinyproxy, tmp_path):
    proxy = tinyproxy()
    via = {**cog.env, "http_proxy": proxy.url()}
    # Without a browser: the token exchange goes through the proxy.
    sign_in_by_pasting(cog, env=via)
    assert stored(bus, "refresh")
    assert f"POST {domain.url}oauth2/token" in proxy.requests(), proxy.requests()
    # With one: curl as the browser, which reads http_proxy as any text
    # browser does, is started with the listener named in no_proxy.
    cog.ok("sign-out")
    browser = tmp_path / "browser.sh"
    browser.write_text('#!/bin/sh\nenv | grep -i "^no_proxy=" > "$0.env"\n'
                       'curl -s -o /dev/null -D "$0.start" "$1" &\n')
    browser.chmod(0o755)
    run = subprocess.Popen([cog.binary, "sign-in"], env={**via, "BROWSER": str(browser)}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    wait_until(lambda: Path(f"{browser}.start").exists() and "Location:" in Path(f"{browser}.start").read_text(),
               "the browser's start request", attempts=1500)
    authorize = re.search(r"[Ll]ocation: (\S+)", Path(f"{browser}.start").read_text()).group(1)
    callback = sign_in_without_a_browser(authorize, DOMAIN_USER, DOMAIN_PASSWORD)
    with urllib.request.urlopen(callback, timeout=10) as page:  # urllib: direct, no proxy variable here
        assert page.status == 200
    out, err = run.communicate(timeout=30)
    assert run.returncode == 0, err
    port = domain.callback.split(":")[2].split("/")[0]
    assert Path(f"{browser}.env").read_text().strip().lower().startswith("no_proxy="), Path(f"{browser}.env").read_text()
    assert "localhost" in Path(f"{browser}.env").read_text()
    assert not [r for r in proxy.requests() if f"localhost:{port}" in r], proxy.requests()
    assert f"POST {domain.url}oauth2/token" in proxy.requests()[-1:], proxy.requests()


# --- FIPS and GovCloud -----------------------------------------------------------------------------

def status_json(cog, pool_id, env=None, *options):
    cog.ok("configure", "--user-pool-id", pool_id, "--client-id", "fipsclient0123456789abcdef", *options)
    result = cog.run("status", "--offline", "--json", env=env)
    return result, (json.loads(result.stdout) if result.stdout else None)


def botocore_hosts():
    """{(service, region): FIPS host or None} from botocore's endpoints.json."""
    import botocore

    data = json.loads((Path(botocore.__file__).parent / "data" / "endpoints.json").read_text())
    hosts = {}
    for partition in data["partitions"]:
        if partition["partition"] not in ("aws", "aws-us-gov"):
            continue
        for service in ("cognito-idp", "cognito-identity", "sts"):
            for region, entry in partition["services"].get(service, {}).get("endpoints", {}).items():
                if region not in partition["regions"]:
                    continue  # fips-us-east-1 and the like: aliases
                fips = [v["hostname"] for v in entry.get("variants", []) if v.get("tags") == ["fips"]]
                hosts[(service, region)] = fips[0] if fips else None
    return hosts


def test_the_fips_table_agrees_with_botocores_endpoint_list(cog, bus):
    hosts = botocore_hosts()
    regions = sorted(region for service, region in hosts if service == "cognito-idp")
    assert "us-east-1" in regions and "eu-west-1" in regions and "us-gov-west-1" in regions
    for region in regions:
        expected = hosts[("cognito-idp", region)]
        result, shown = status_json(cog, f"{region}_Fips123", {"AWS_USE_FIPS_ENDPOINT": "true"})
        if region == "us-gov-east-1":
            # AWS's GovCloud guide: Cognito is FIPS only there too; botocore
            # lists no FIPS host for it yet.
            assert expected is None and shown["endpoint"] == "https://cognito-idp-fips.us-gov-east-1.amazonaws.com/"
        elif expected:
            assert shown["endpoint"] == f"https://{expected}/" and shown["fips"] is True, region
        else:
            assert "endpoint" not in shown, region
            assert "AWS_USE_FIPS_ENDPOINT asks for FIPS endpoints" in shown["network_problem"], region
    # STS's and the identity pool's: the same rule (unit tests check the
    # URLs); here that each region botocore gives a FIPS host has ours.
    for (service, region), host in hosts.items():
        if service != "cognito-idp" and host:
            assert region in ("us-east-1", "us-east-2", "us-west-1", "us-west-2") or region.startswith("us-gov-"), (service, region)


def test_configure_fips_is_refused_where_there_is_none_and_changes_nothing(cog, bus):
    cog.ok("configure", "--user-pool-id", "eu-west-1_Fips123", "--client-id", "fipsclient0123456789abcdef")
    before = cog.config_file.read_text()
    refused = cog.run("configure", "--fips")
    assert refused.returncode == 78, refused.stderr
    assert refused.stderr.count("\n") == 1
    assert "the profile's use-fips-endpoint (configure --fips) asks for FIPS endpoints, and AWS has no FIPS endpoint " \
        "for cognito-idp in eu-west-1" in refused.stderr
    assert cog.config_file.read_text() == before
    # In a region with them: every AWS endpoint the profile calls is FIPS.
    cog.ok("configure", "--user-pool-id", "us-east-1_Fips123", "--fips", "--domain", "my-app")
    shown = json.loads(cog.ok("configure", "--show", "--json").stdout)
    assert shown["use-fips-endpoint"] is True and shown["domain"] == "https://my-app.auth-fips.us-east-1.amazoncognito.com"
    result, status = status_json(cog, "us-east-1_Fips123", {"AWS_USE_FIPS_ENDPOINT": "false"})
    assert status["endpoint"] == "https://cognito-idp-fips.us-east-1.amazonaws.com/" and status["fips"] is True
    assert "cognito-idp-fips.us-east-1.amazonaws.com/ (FIPS)" in cog.run("status", "--offline").stdout
    # --no-fips: the ordinary endpoints, the domain too.
    cog.ok("configure", "--no-fips")
    shown = json.loads(cog.ok("configure", "--show", "--json").stdout)
    assert "use-fips-endpoint" not in shown and shown["domain"] == "https://my-app.auth.us-east-1.amazoncognito.com"


def test_fips_from_the_environment_where_there_is_none_sends_nothing(cog, bus, tinyproxy, tmp_path):
    proxy = tinyproxy()
    cog.ok("configure", "--user-pool-id", "eu-west-1_Fips123", "--client-id", "fipsclient0123456789abcdef",
           "--identity-pool-id", "eu-west-1:0a1b2c3d-0000-4000-8000-000000000001")
    cog.remember_secret(PASSWORD)
    # Everything public would go through the proxy: its log shows nothing was sent.
    aws_config = tmp_path / "aws-config"
    aws_config.write_text("[profile gov]\nuse_fips_endpoint = true\n")
    for env, setting in (({"AWS_USE_FIPS_ENDPOINT": "true"}, "AWS_USE_FIPS_ENDPOINT"),
                         ({"AWS_CONFIG_FILE": str(aws_config), "AWS_PROFILE": "gov"},
                          f"use_fips_endpoint in {aws_config} [profile gov]")):
        for command in (["sign-in", "--password-stdin"], ["aws-credentials"]):
            result = cog.run(*command, "--username", USER, input=PASSWORD + "\n",
                             env={"HTTPS_PROXY": proxy.url(), **env}) if command[0] == "sign-in" else \
                cog.run(*command, env={"HTTPS_PROXY": proxy.url(), **env})
            assert result.returncode in (78, 77), (command, result.stderr)
            if command[0] == "sign-in":
                assert result.returncode == 78
                assert f"{setting} asks for FIPS endpoints, and AWS has no FIPS endpoint for cognito-idp in eu-west-1" \
                    in result.stderr, result.stderr
    assert proxy.requests() == []
    bad = cog.run("sign-in", "--password-stdin", "--username", USER, input=PASSWORD + "\n",
                  env={"AWS_USE_FIPS_ENDPOINT": "yes"})
    assert bad.returncode == 78 and "AWS_USE_FIPS_ENDPOINT" in bad.stderr and "neither true nor false" in bad.stderr


def test_a_govcloud_pool_needs_only_its_ids_and_domain_prefix(cog, bus):
    cog.ok("configure", "--user-pool-id", "us-gov-west-1_Agency1", "--client-id", "govclient0123456789abcdefg",
           "--domain", "agency")
    shown = json.loads(cog.ok("configure", "--show", "--json").stdout)
    assert shown["domain"] == "https://agency.auth-fips.us-gov-west-1.amazoncognito.com"
    assert "use-fips-endpoint" not in shown
    # FIPS switched off still never reaches a non-FIPS host: GovCloud has none.
    for env in ({}, {"AWS_USE_FIPS_ENDPOINT": "false"}):
        result = cog.run("status", "--offline", "--json", env=env)
        status = json.loads(result.stdout)
        assert status["endpoint"] == "https://cognito-idp-fips.us-gov-west-1.amazonaws.com/" and status["fips"] is True
    text = cog.run("status", "--offline").stdout
    assert "endpoint:      https://cognito-idp-fips.us-gov-west-1.amazonaws.com/ (FIPS)" in text
    assert "network:       direct" in text
