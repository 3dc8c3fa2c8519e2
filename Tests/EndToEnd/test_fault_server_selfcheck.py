"""Checks of the fault-injecting proxy itself, so the end-to-end tests can trust it.

The Cognito double (upstream) and the fault server both run in-process and are
spoken to with plain Python clients, so these need no built binary and take a
few seconds.
"""
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from cognito_double import DEFAULT_CONFIG, TARGET_PREFIX, start_double
from fault_server import MODES, closed_port, start_fault_server

HERE = Path(__file__).resolve().parent
CLIENT = DEFAULT_CONFIG["client_id"]
USER, PASSWORD = "alice", "Correct-Horse-1"


def post_json(url, path, obj, timeout=5):
    req = urllib.request.Request(url.rstrip("/") + path, data=json.dumps(obj).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def get_json(url, path, timeout=5):
    with urllib.request.urlopen(url.rstrip("/") + path, timeout=timeout) as r:
        return json.loads(r.read())


def cognito_body(action):
    if action == "InitiateAuth":
        return {"AuthFlow": "USER_PASSWORD_AUTH", "ClientId": CLIENT,
                "AuthParameters": {"USERNAME": USER, "PASSWORD": PASSWORD}}
    return {"ClientId": CLIENT, "Username": USER}


def call(url, action="InitiateAuth", body=None, timeout=5, context=None):
    """One Cognito call with http.client: (status, headers dict (lower-case), body bytes)."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request("POST", "/", body=json.dumps(cognito_body(action) if body is None else body).encode(),
                     headers={"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": TARGET_PREFIX + action})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def double():
    server, url = start_double()
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def fault_server(double):
    server, url, ca = start_fault_server(double)
    assert ca is None
    yield server, url
    server.shutdown()
    server.server_close()


@pytest.fixture
def fs(double, fault_server):
    """The fault server's URL, with an empty plan and log and a fresh double with one user."""
    server, url = fault_server
    assert post_json(double, "/_double/reset", {})[0] == 200
    assert post_json(double, "/_double/users", {"username": USER, "password": PASSWORD})[0] == 200
    assert post_json(url, "/_fault/clear", {})[0] == 200
    assert post_json(url, "/_fault/clear_log", {})[0] == 200
    return url


def plan(url, *faults):
    status, answer = post_json(url, "/_fault/plan", {"faults": list(faults)})
    assert status == 200, answer
    return answer


def fault_log(url, connections=False):
    """The log; its "connection" numbers only when asked for (they depend on
    the tests run before)."""
    log = get_json(url, "/_fault/log")
    return log if connections else [{k: v for k, v in entry.items() if k != "connection"} for entry in log]


def upstream_calls(double):
    return get_json(double, "/_double/stats")["calls"]


# ----------------------------------------------------------------- forwarding

def test_forwards_unchanged_when_no_fault_applies(fs, double):
    status, headers, body = call(fs)
    assert status == 200
    assert headers["content-type"] == "application/x-amz-json-1.1"
    assert json.loads(body)["AuthenticationResult"]["TokenType"] == "Bearer"
    # Errors are relayed as they are, with the error-type header.
    status, headers, body = call(fs, body={**cognito_body("InitiateAuth"),
                                           "AuthParameters": {"USERNAME": USER, "PASSWORD": "Wrong-Pass-1"}})
    assert status == 400
    assert json.loads(body)["__type"] == "NotAuthorizedException"
    assert headers["x-amzn-errortype"] == "NotAuthorizedException"
    assert upstream_calls(double) == {"InitiateAuth:USER_PASSWORD_AUTH": 2}
    assert fault_log(fs) == [
        {"action": "InitiateAuth", "mode_applied": "forward", "status": 200, "forwarded": True},
        {"action": "InitiateAuth", "mode_applied": "forward", "status": 400, "forwarded": True}]


def test_the_log_numbers_the_connections_requests_came_on(fs):
    """Two requests on one kept connection share a number; a new connection
    gets the next: what the tests of connection reuse count (#42)."""
    parts = urlsplit(fs)
    kept = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
    try:
        for _ in range(2):
            kept.request("POST", "/", body=json.dumps(cognito_body("InitiateAuth")).encode(),
                         headers={"Content-Type": "application/x-amz-json-1.1",
                                  "X-Amz-Target": TARGET_PREFIX + "InitiateAuth"})
            response = kept.getresponse()
            assert response.status == 200
            response.read()
    finally:
        kept.close()
    call(fs)
    first, second, third = (entry["connection"] for entry in fault_log(fs, connections=True))
    assert first == second and third == first + 1


def test_non_cognito_requests_pass_and_are_not_logged_or_faulted(fs):
    plan(fs, {"mode": "html_500", "times": -1})
    assert get_json(fs, "/_double/config")["client_id"] == CLIENT
    assert fault_log(fs) == []


def test_upstream_down_is_a_502(double):
    server, url, _ = start_fault_server(f"http://127.0.0.1:{closed_port()}/")
    try:
        status, _, body = call(url)
        assert status == 502 and b"upstream" in body
        assert fault_log(url) == [{"action": "InitiateAuth", "mode_applied": "forward", "status": 502,
                                   "forwarded": True}]
    finally:
        server.shutdown()
        server.server_close()


# ----------------------------------------------------------------- the plan

def test_plan_order_times_and_action_filter(fs):
    plan(fs,
         {"mode": "throttle", "times": 2, "actions": ["InitiateAuth"]},
         {"mode": "html_500"},  # times defaults to 1, any action
         {"mode": "not_json", "actions": ["ForgotPassword"], "times": -1})
    assert call(fs, "SignUp")[0] == 500                 # throttle does not match SignUp
    assert call(fs, "InitiateAuth")[0] == 400           # throttle 1/2
    assert call(fs, "InitiateAuth")[0] == 400           # throttle 2/2
    assert call(fs, "InitiateAuth")[0] == 200           # all used up: forwarded
    for _ in range(3):
        assert call(fs, "ForgotPassword")[2] == b"this is not json"  # forever
    assert [(e["action"], e["mode_applied"], e["status"]) for e in fault_log(fs)] == [
        ("SignUp", "html_500", 500), ("InitiateAuth", "throttle", 400), ("InitiateAuth", "throttle", 400),
        ("InitiateAuth", "forward", 200)] + [("ForgotPassword", "not_json", 200)] * 3
    remaining = [f["remaining"] for f in get_json(fs, "/_fault/plan")["faults"]]
    assert remaining == [0, 0, -1]
    # clear empties the plan; a new plan replaces the old one
    assert post_json(fs, "/_fault/clear", {}) == (200, {"faults": []})
    call(fs, "ForgotPassword")
    assert fault_log(fs)[-1]["mode_applied"] == "forward"
    # a new plan replaces the old one
    plan(fs, {"mode": "status_503", "times": -1})
    plan(fs, {"mode": "not_json"})
    assert call(fs)[0] == 200 and call(fs)[0] == 200


def test_action_filter_can_name_the_auth_flow(fs):
    plan(fs, {"mode": "status_503", "actions": ["InitiateAuth:REFRESH_TOKEN_AUTH"], "times": -1})
    status, _, body = call(fs)
    assert status == 200
    refresh = json.loads(body)["AuthenticationResult"]["RefreshToken"]
    status, _, _ = call(fs, body={"AuthFlow": "REFRESH_TOKEN_AUTH", "ClientId": CLIENT,
                                  "AuthParameters": {"REFRESH_TOKEN": refresh}})
    assert status == 503


def test_bad_plans_are_refused(fs):
    for fault in ({"mode": "explode"}, {"mode": "delay", "times": 0}, {"mode": "delay", "seconds": -1},
                  {"mode": "refuse", "actions": "InitiateAuth"}, "refuse"):
        status, answer = post_json(fs, "/_fault/plan", {"faults": [fault]})
        assert status == 400 and answer["error"]
    assert get_json(fs, "/_fault/plan") == {"faults": []}


# ----------------------------------------------------------------- modes

def test_delay_exceeds_client_timeout_and_others_are_served(fs, double):
    plan(fs, {"mode": "delay", "seconds": 1.3})
    started = time.monotonic()
    with pytest.raises((TimeoutError, socket.timeout)):
        call(fs, timeout=1)
    assert 0.9 < time.monotonic() - started < 1.25
    # Still responsive while the delayed request waits.
    assert call(fs, timeout=1)[0] == 200
    assert fault_log(fs)[0]["status"] is None  # the delayed one is still pending
    for _ in range(100):
        if fault_log(fs)[0]["status"] is not None:
            break
        time.sleep(0.02)
    # After the delay it was forwarded, though nobody was listening any more.
    assert fault_log(fs)[0] == {"action": "InitiateAuth", "mode_applied": "delay", "status": 200,
                                "forwarded": True}
    assert upstream_calls(double) == {"InitiateAuth:USER_PASSWORD_AUTH": 2}


def test_hold_keeps_a_request_until_released(fs, double):
    plan(fs, {"mode": "hold", "actions": ["InitiateAuth"]})
    answers = []
    thread = threading.Thread(target=lambda: answers.append(call(fs, timeout=10)))
    thread.start()
    for _ in range(500):  # until the held request has arrived
        if fault_log(fs):
            break
        time.sleep(0.01)
    assert fault_log(fs)[0]["status"] is None and answers == []
    assert upstream_calls(double) == {}   # not forwarded while held
    assert call(fs, "SignUp", timeout=2)[0] != 0  # others are served meanwhile
    assert post_json(fs, "/_fault/release", {}) == (200, {})
    thread.join(timeout=10)
    assert answers[0][0] == 200
    assert fault_log(fs)[0] == {"action": "InitiateAuth", "mode_applied": "hold", "status": 200, "forwarded": True}


def test_short_delay_then_normal_answer(fs):
    plan(fs, {"mode": "delay", "seconds": 0.3})
    started = time.monotonic()
    status, _, body = call(fs, timeout=2)
    assert status == 200 and "AuthenticationResult" in json.loads(body)
    assert time.monotonic() - started >= 0.3


def test_delay_is_cut_short_by_shutdown(double):
    server, url, _ = start_fault_server(double)
    post_json(url, "/_fault/plan", {"faults": [{"mode": "delay"}]})  # 30 s by default
    outcome = []

    def client():
        try:
            outcome.append(call(url, timeout=10))
        except Exception as err:  # noqa: BLE001 - any failure is the expected outcome
            outcome.append(err)

    thread = threading.Thread(target=client)
    thread.start()
    time.sleep(0.2)
    started = time.monotonic()
    server.shutdown()
    server.server_close()
    thread.join(5)
    assert time.monotonic() - started < 2
    assert not thread.is_alive()
    assert isinstance(outcome[0], (ConnectionError, http.client.HTTPException)), outcome


def test_refuse_resets_the_connection(fs, double):
    plan(fs, {"mode": "refuse"})
    with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
        call(fs)
    assert fault_log(fs) == [{"action": "InitiateAuth", "mode_applied": "refuse", "status": None,
                              "forwarded": False}]
    assert upstream_calls(double) == {}
    assert call(fs)[0] == 200  # one use only


def test_restart_acts_answers_nothing_and_refuses_connections_for_a_while(double):
    """The upstream acts on the request; the client gets a reset and no
    answer; a connection made at once is refused (the server stopped
    listening before the reset); then the same port serves again."""
    server, url, _ = start_fault_server(double)
    try:
        assert post_json(double, "/_double/reset", {})[0] == 200
        assert post_json(double, "/_double/users", {"username": USER, "password": PASSWORD})[0] == 200
        plan(url, {"mode": "restart", "seconds": 2})
        with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
            call(url)
        port = urlsplit(url).port
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        assert upstream_calls(double) == {"InitiateAuth:USER_PASSWORD_AUTH": 1}
        # Back on the same port: polled, bounded.
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except ConnectionRefusedError:
                assert time.monotonic() < deadline, "the fault server did not listen again"
                time.sleep(0.05)
        [entry] = fault_log(url)
        assert entry == {"action": "InitiateAuth", "mode_applied": "restart", "status": None, "forwarded": True}
        assert call(url)[0] == 200
    finally:
        server.shutdown()
        server.server_close()


def test_closed_port_refuses_connections(fs):
    for port in (closed_port(), get_json(fs, "/_fault/closed_port")["port"]):
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
    assert get_json(fs, "/_fault/closed_port") == get_json(fs, "/_fault/closed_port")  # stable


def test_reset_mid_body_makes_http_client_raise(fs):
    plan(fs, {"mode": "reset_mid_body"})
    parts = urlsplit(fs)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
    conn.request("POST", "/", body=json.dumps(cognito_body("InitiateAuth")).encode(),
                 headers={"Content-Type": "application/x-amz-json-1.1",
                          "X-Amz-Target": TARGET_PREFIX + "InitiateAuth"})
    response = conn.getresponse()
    assert response.status == 200
    promised = int(response.getheader("Content-Length"))
    with pytest.raises((ConnectionResetError, http.client.IncompleteRead)):
        response.read()
    conn.close()
    # On the wire: a partial body, then a reset (not a clean close).
    plan(fs, {"mode": "reset_mid_body", "pause": 0})
    sock = socket.create_connection((parts.hostname, parts.port), timeout=5)
    body = json.dumps(cognito_body("InitiateAuth")).encode()
    sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.1\r\n"
                 b"X-Amz-Target: " + (TARGET_PREFIX + "InitiateAuth").encode() +
                 b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    received = b""
    with pytest.raises(ConnectionResetError):
        while chunk := sock.recv(65536):
            received += chunk
    sock.close()
    head, _, partial = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    assert 0 < len(partial) < promised
    assert partial.startswith(b'{"AuthenticationResult"')


def test_html_500(fs):
    plan(fs, {"mode": "html_500"})
    status, headers, body = call(fs)
    assert status == 500
    assert headers["content-type"].startswith("text/html")
    assert b"<html>" in body and b"500" in body


def test_status_503(fs):
    plan(fs, {"mode": "status_503"})
    status, headers, body = call(fs)
    assert (status, body, headers["content-length"]) == (503, b"", "0")


def test_throttle(fs):
    plan(fs, {"mode": "throttle"}, {"mode": "throttle", "code": "LimitExceededException"})
    status, headers, body = call(fs)
    assert status == 400
    assert json.loads(body) == {"__type": "TooManyRequestsException", "message": "Rate exceeded"}
    assert headers["x-amzn-errortype"] == "TooManyRequestsException"
    assert headers["content-type"] == "application/x-amz-json-1.1"
    status, headers, body = call(fs)
    assert (status, json.loads(body)["__type"], headers["x-amzn-errortype"]) == (
        400, "LimitExceededException", "LimitExceededException")


def test_truncated_json_is_a_complete_response_with_a_broken_body(fs):
    plan(fs, {"mode": "truncated_json"})
    status, headers, body = call(fs)
    assert status == 200 and headers["content-type"] == "application/x-amz-json-1.1"
    assert int(headers["content-length"]) == len(body) > 0
    with pytest.raises(ValueError):
        json.loads(body)
    assert body.startswith(b'{"AuthenticationResult"')


def test_not_json(fs):
    plan(fs, {"mode": "not_json"})
    status, headers, body = call(fs)
    assert (status, headers["content-type"], body) == (200, "application/x-amz-json-1.1", b"this is not json")


def test_unknown_error_type(fs):
    plan(fs, {"mode": "unknown_error_type"})
    status, _, body = call(fs)
    assert status == 400
    assert json.loads(body) == {"__type": "com.amazonaws.cognito#BrandNewException", "message": "Something new"}


def test_every_mode_is_checked_here():
    checked = {"delay", "hold", "refuse", "restart", "reset_mid_body", "html_500", "status_503", "throttle", "truncated_json",
               "not_json", "unknown_error_type"}
    assert set(MODES) == checked


# ----------------------------------------------------------------- TLS

def test_tls_with_the_ca_and_without(double, tmp_path):
    ca_out = tmp_path / "ca.pem"
    server, url, ca = start_fault_server(double, tls=True, ca_out=str(ca_out))
    try:
        assert url.startswith("https://127.0.0.1:") and ca == str(ca_out) and ca_out.exists()
        post_json(double, "/_double/users", {"username": USER, "password": PASSWORD})
        trusting = ssl.create_default_context(cafile=ca)
        assert call(url, context=trusting)[0] == 200
        # The certificate names localhost too.
        port = urlsplit(url).port
        assert call(f"https://localhost:{port}/", context=trusting)[0] == 200
        with pytest.raises(ssl.SSLCertVerificationError):
            call(url, context=ssl.create_default_context())
        # Faults work over TLS as well, the reset included.
        req = urllib.request.Request(url + "_fault/plan", method="POST",
                                     data=json.dumps({"faults": [{"mode": "reset_mid_body"}]}).encode())
        urllib.request.urlopen(req, timeout=5, context=trusting).read()
        with pytest.raises((ConnectionResetError, http.client.IncompleteRead, ssl.SSLError)):
            call(url, context=trusting)
    finally:
        server.shutdown()
        server.server_close()


def test_the_log_says_whether_a_tls_connection_resumed_a_session(double, tmp_path):
    server, url, ca = start_fault_server(double, tls=True)
    try:
        post_json(double, "/_double/users", {"username": USER, "password": PASSWORD})
        context = ssl.create_default_context(cafile=ca)
        port = urlsplit(url).port
        request = json.dumps(cognito_body("InitiateAuth")).encode()
        head = (f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-amz-json-1.1\r\n"
                f"X-Amz-Target: {TARGET_PREFIX}InitiateAuth\r\nContent-Length: {len(request)}\r\n"
                "Connection: close\r\n\r\n").encode()
        session = None
        for _ in range(2):
            with context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5),
                                     server_hostname="127.0.0.1", session=session) as tls:
                tls.sendall(head + request)
                answer = b""
                while chunk := tls.recv(65536):
                    answer += chunk
                assert answer.startswith(b"HTTP/1.1 200"), answer[:40]
                session = tls.session  # TLS 1.3: the ticket came after the handshake, with the answer
        with urllib.request.urlopen(url + "_fault/log", timeout=5, context=context) as r:
            log = json.loads(r.read())
        assert [entry["tls_resumed"] for entry in log] == [False, True]
    finally:
        server.shutdown()
        server.server_close()


# ----------------------------------------------------------------- CLI

def test_cli_prints_one_line_and_stops_on_sigterm(double, tmp_path):
    ca_out = tmp_path / "cli-ca.pem"
    proc = subprocess.Popen([sys.executable, str(HERE / "fault_server.py"), "--upstream", double, "--tls",
                             "--ca-out", str(ca_out), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={k: v for k, v in os.environ.items() if k != "FAULT_SERVER_VERBOSE"})
    try:
        line = proc.stdout.readline()
        assert line.startswith("LISTENING https://127.0.0.1:") and line.endswith("/\n")
        url = line.split()[1]
        post_json(double, "/_double/users", {"username": USER, "password": PASSWORD})
        assert call(url, context=ssl.create_default_context(cafile=str(ca_out)))[0] == 200
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=5)
        assert proc.returncode == 0
        assert out == "" and err == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_closed_port():
    out = subprocess.run([sys.executable, str(HERE / "fault_server.py"), "--closed-port"],
                         capture_output=True, text=True, timeout=10, check=True).stdout
    assert int(out) > 0
