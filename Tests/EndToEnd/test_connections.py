"""One connection per command and host, whatever the number of requests
(#42): against the project's Cognito test double, which keeps connections
open as Cognito does (HTTP/1.1 keep-alive) and numbers the connections its
requests come on, on its own port and on two more (the identity pool's and
STS's hosts). And what a kept connection that dies under a request does
(fault_server.py's `refuse` reads a request and resets the connection), that
a new one resumes the command's TLS session, and that no kept connection
lives on in the command `exec` runs."""
import json
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

import fault_server
from support import add_authenticator, configure_on_double, fault_log, plan, poll

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


def test_sign_ins_that_remember_and_use_a_device_are_one_connection_each(cog, bus, double):
    double.configure(device_tracking="opt_in")
    totp = double.add_totp_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    before = len(double.stats()["requests"])
    cog.ok("sign-in", "--password-stdin", "--mfa-code", totp.now(), "--remember-device", input=PASSWORD + "\n")
    actions = [r["action"] for r in double.stats()["requests"][before:]]
    assert actions[-2:] == ["ConfirmDevice", "UpdateDeviceStatus"], actions
    connections, requests = connections_since(double, before)
    assert requests == 5 and len(connections) == 1, (requests, connections)
    # The next sign-in proves the remembered device (DEVICE_SRP_AUTH, DEVICE_PASSWORD_VERIFIER).
    before = len(double.stats()["requests"])
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    steps = [r.get("challenge") for r in double.stats()["requests"][before:]]
    assert "DEVICE_PASSWORD_VERIFIER" in steps, steps
    connections, requests = connections_since(double, before)
    assert requests == 4 and len(connections) == 1, (requests, connections)


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


def test_a_new_connection_after_a_pause_resumes_the_tls_session(cog, bus, double, tmp_path):
    """Over HTTPS (the fault server's TLS 1.3, its CA given as AWS_CA_BUNDLE):
    the kept connection carries the first two steps, and the answer after
    the pause goes on a new connection that resumes the TLS session the
    command already has, as libcurl's session cache, kept across requests,
    allows."""
    server, url, ca = fault_server.start_fault_server(double.url, tls=True, ca_out=str(tmp_path / "ca.pem"))
    try:
        totp = double.add_totp_user(USER, PASSWORD)
        cog.remember_secret(PASSWORD)
        configure_on_double(cog, url, "--username", USER)
        cog.env["AWS_CA_BUNDLE"] = ca

        def after_a_pause(_):
            time.sleep(1.5)
            return totp.now()

        status, _, _, err = cog.answer_when_asked("sign-in", "--password-stdin", "--mfa-code", "-",
                                                  first_lines=[PASSWORD], answer=after_a_pause)
        assert status == 0, err
        server.url = url
        trusting = ssl.create_default_context(cafile=ca)
        log = [(e["action"], e["connection"], e["tls_resumed"]) for e in fault_log(server, context=trusting)]
        assert [a for a, _, _ in log] == ["InitiateAuth", "RespondToAuthChallenge", "RespondToAuthChallenge"], log
        (_, first, fresh), (_, second, _), (_, third, resumed) = log
        assert first == second != third and not fresh and resumed, log
    finally:
        server.shutdown()
        server.server_close()


def test_mfa_enable_totp_is_one_connection(cog, bus, double):
    """AssociateSoftwareToken, VerifySoftwareToken, SetUserMFAPreference and
    GetUser: the code is typed in well under the fresh age here."""
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    before = len(double.stats()["requests"])
    status, _, err = add_authenticator(cog)
    assert status == 0, err
    connections, requests = connections_since(double, before)
    assert requests >= 3 and len(connections) == 1, (requests, connections)


def test_aws_credentials_is_one_connection_per_host(cog, bus, double):
    """An expired ID token first refreshed at cognito-idp, then the identity
    pool's basic flow: GetId and GetOpenIdToken at cognito-identity,
    AssumeRoleWithWebIdentity at STS. Three hosts (three ports of the
    double), one connection each."""
    identity_url, sts_url = double.other_urls
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    pool_id = double.admin("config")["identity_pool_id"]
    configure_on_double(cog, double.url, "--username", USER, "--identity-pool-id", pool_id,
                        "--role-arn", "arn:aws:iam::123456789012:role/Cognito_Admin")
    cog.ok("configure", "--basic-flow")
    double.configure(issued_at_offset=-7200)  # the tokens of this sign-in are expired
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    double.configure(issued_at_offset=0)
    before = len(double.stats()["requests"])
    cog.ok("aws-credentials", env={"AWS_ENDPOINT_URL_COGNITO_IDENTITY": identity_url, "AWS_ENDPOINT_URL_STS": sts_url})
    requests = double.stats()["requests"][before:]
    by_host = {}
    for r in requests:
        by_host.setdefault(r["host"], []).append((r["action"], r["connection"]))
    hosts = {urlsplit(url).netloc for url in (double.url, identity_url, sts_url)}
    assert set(by_host) == hosts, by_host
    assert [a for a, _ in by_host[urlsplit(identity_url).netloc]] == ["GetId", "GetOpenIdToken"], by_host
    assert [a for a, _ in by_host[urlsplit(sts_url).netloc]] == ["sts:AssumeRoleWithWebIdentity"], by_host
    for host, calls in by_host.items():
        assert len({connection for _, connection in calls}) == 1, (host, calls)


@pytest.fixture
def proxy_in_front(double):
    """fault_server.py in front of the double, with its own numbering of the
    client's connections."""
    server, url, _ = fault_server.start_fault_server(double.url)
    server.url = url
    yield server
    server.shutdown()
    server.server_close()


def test_an_answer_whose_kept_connection_dies_is_not_sent_again(cog, bus, double, proxy_in_front):
    """libcurl sends a request again by itself when a reused connection dies
    before any answer. An authenticator code must not go out twice: the
    sign-in stops, says so, and stores nothing."""
    totp = double.add_totp_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, proxy_in_front.url, "--username", USER)
    plan(proxy_in_front, {"mode": "refuse", "actions": ["RespondToAuthChallenge:SOFTWARE_TOKEN_MFA"]})
    failed = cog.run("sign-in", "--password-stdin", "--mfa-code", totp.now(), input=PASSWORD + "\n")
    assert failed.returncode == 75, failed.stderr
    assert "the request may have arrived, so it is not sent again" in failed.stderr
    log = fault_log(proxy_in_front)
    assert [e["action"] for e in log] == ["InitiateAuth", "RespondToAuthChallenge", "RespondToAuthChallenge"]
    assert [e["mode_applied"] for e in log] == ["forward", "forward", "refuse"]
    assert len({e["connection"] for e in log}) == 1  # the code went on the kept connection, once
    assert double.calls("RespondToAuthChallenge:SOFTWARE_TOKEN_MFA") == 0
    assert json.loads(cog.run("status", "--offline", "--json").stdout)["signed_in"] is False


def listening(server):
    """Whether the server accepts connections (again, after a restart)."""
    try:
        socket.create_connection(("127.0.0.1", urlsplit(server.url).port), timeout=5).close()
        return True
    except ConnectionRefusedError:
        return False


def test_an_answer_taken_by_a_server_that_then_restarts_is_not_sent_again(cog, bus, double, proxy_in_front):
    """The server takes the code on the kept connection, acts on it, and
    goes away for 0.35 s: libcurl's own reconnect is refused. A refusal
    after a sending is not "nothing sent": the code is never sent again
    (not by libcurl, not by a retry once the server is back), the sign-in
    exits 75 saying the request may have arrived, and nothing is stored."""
    totp = double.add_totp_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, proxy_in_front.url, "--username", USER)
    plan(proxy_in_front, {"mode": "restart", "seconds": 0.35, "actions": ["RespondToAuthChallenge:SOFTWARE_TOKEN_MFA"]})
    before = proxy_in_front.next_connection()  # the numbers the proxy gave so far, this one included
    failed = cog.run("sign-in", "--password-stdin", "--mfa-code", totp.now(), input=PASSWORD + "\n")
    assert failed.returncode == 75, failed.stderr
    assert "the request may have arrived, so it is not sent again" in failed.stderr, failed.stderr
    # libcurl's reconnect was refused, not let in and stopped: the proxy
    # accepted the sign-in's one connection and no other.
    assert proxy_in_front.next_connection() == before + 2
    assert double.calls("RespondToAuthChallenge:SOFTWARE_TOKEN_MFA") == 1  # the double took it, once
    log = poll(lambda: listening(proxy_in_front) and fault_log(proxy_in_front), "the proxy back")
    assert [(e["action"], e["mode_applied"]) for e in log] == [
        ("InitiateAuth", "forward"), ("RespondToAuthChallenge", "forward"), ("RespondToAuthChallenge", "restart")]
    assert json.loads(cog.run("status", "--offline", "--json").stdout)["signed_in"] is False


def test_a_repeatable_request_whose_kept_connection_dies_goes_again_on_a_new_one(cog, bus, double, proxy_in_front):
    """GetCredentialsForIdentity may go out twice (it changes nothing):
    libcurl's own second sending, on a new connection, is let through, in
    one attempt of the command's."""
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER,
                        "--identity-pool-id", double.admin("config")["identity_pool_id"])
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    plan(proxy_in_front, {"mode": "refuse", "actions": ["GetCredentialsForIdentity"]})
    fetched = cog.run("aws-credentials", "--debug", env={"AWS_ENDPOINT_URL_COGNITO_IDENTITY": proxy_in_front.url})
    assert fetched.returncode == 0, fetched.stderr
    assert json.loads(fetched.stdout)["Version"] == 1
    log = fault_log(proxy_in_front)
    assert [(e["action"], e["mode_applied"]) for e in log] == [
        ("GetId", "forward"), ("GetCredentialsForIdentity", "refuse"), ("GetCredentialsForIdentity", "forward")]
    assert log[0]["connection"] == log[1]["connection"] != log[2]["connection"]
    assert "GetCredentialsForIdentity (attempt 1): HTTP 200" in fetched.stderr
    assert "(attempt 2)" not in fetched.stderr


class ProxyThatClosesAfterEachAnswer(ThreadingHTTPServer):
    """A proxy forwarding plain HTTP (what http_proxy names) that answers one
    request a connection and closes it a moment later without saying so, as
    a CI run through tinyproxy met once: a request sent on the connection meanwhile is
    read and never answered (`unanswered`: each one's X-Amz-Target)."""
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), self.Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.lock, self.connections, self.unanswered = threading.Lock(), 0, []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self):
        self.shutdown()
        self.server_close()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def handle(self):
            with self.server.lock:
                self.server.connections += 1
            self.handle_one_request()
            # The close comes a second later: what is sent before it is read, unanswered.
            self.connection.settimeout(1)
            try:
                self.raw_requestline = self.rfile.readline(65537)
                if self.raw_requestline and self.parse_request():
                    with self.server.lock:
                        self.server.unanswered.append(self.headers.get("X-Amz-Target", self.requestline))
            except OSError:
                pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            headers = {name: value for name, value in self.headers.items()
                       if name.lower() not in ("host", "content-length", "connection", "proxy-connection")}
            direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            try:
                with direct.open(urllib.request.Request(self.path, data=body, headers=headers), timeout=30) as answer:
                    status, kind, data = answer.status, answer.headers.get("Content-Type"), answer.read()
            except urllib.error.HTTPError as refused:
                status, kind, data = refused.code, refused.headers.get("Content-Type"), refused.read()
            self.send_response(status)
            if kind:
                self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)


def test_an_answer_through_a_proxy_that_closes_after_each_answer_goes_on_a_new_connection(cog, bus, double):
    """Plain HTTP through a forwarding proxy: a request that must not go out
    twice never takes a kept connection, which the proxy may be closing as
    it is sent (what test_agent.py met through tinyproxy once: "the request may
    have arrived, so it is not sent again", 75)."""
    proxy = ProxyThatClosesAfterEachAnswer()
    try:
        double.add_user(USER, PASSWORD)
        cog.remember_secret(PASSWORD)
        configure_on_double(cog, double.url, "--username", USER)
        signed = cog.run("sign-in", "--password-stdin", input=PASSWORD + "\n", env={"http_proxy": proxy.url})
        assert signed.returncode == 0, signed.stderr
        assert not any("RespondToAuthChallenge" in target for target in proxy.unanswered), proxy.unanswered
        assert proxy.connections >= 2
        assert double.calls("RespondToAuthChallenge:PASSWORD_VERIFIER") == 1
    finally:
        proxy.stop()


def test_kept_connections_do_not_live_on_in_the_command_exec_runs(cog, bus, double):
    """`exec` refreshes an expired token (and with --aws fetches
    credentials at cognito-identity) on kept connections, then becomes its
    command: that command gets no descriptor of cog-cred's (the connections,
    libcurl's socket pair, the Secret Service's), only 0, 1 and 2."""
    identity_url, _ = double.other_urls
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER,
                        "--identity-pool-id", double.admin("config")["identity_pool_id"])
    show_descriptors = ["sh", "-c", 'for f in /proc/$$/fd/*; do readlink "$f"; done; true']
    for extra in ([], ["--aws"]):
        double.configure(issued_at_offset=-7200)  # the tokens of this sign-in are expired
        cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
        double.configure(issued_at_offset=0)
        before = len(double.stats()["requests"])
        ran = cog.ok("exec", *extra, "--", *show_descriptors, env={"AWS_ENDPOINT_URL_COGNITO_IDENTITY": identity_url})
        made = [r["action"] for r in double.stats()["requests"][before:]]
        assert made[0] == "GetTokensFromRefreshToken" and ("GetCredentialsForIdentity" in made) == bool(extra), made
        # 0, 1 and 2 only (the glob's own directory is closed by the time readlink looks).
        assert len(ran.stdout.splitlines()) == 3 and "socket:" not in ran.stdout, ran.stdout
