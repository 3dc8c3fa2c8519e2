"""Self-checks of proxy_upstream.py, the upstream `cog-cred proxy`'s tests
stand behind, driven directly (no proxy, no cog-cred binary) with tokens the
Cognito test double issues: it must admit what verifies and nothing else,
record what it got, and serve each route as test_proxy.py relies on."""
import hashlib
import http.client
import json
import re
import socket
import threading
import urllib.parse

import pytest
import requests

import proxy_upstream
from proxy_upstream import pattern, pattern_sha256, start_upstream
from support import DOUBLE_CLIENT_ID, DoubleClient, poll

USER = "uma@example.com"
PASSWORD = "Upstream-Password-1"
MiB = 1024 * 1024


@pytest.fixture
def pool(server):
    """The in-process double (conftest's `server`), reset, with USER in it."""
    client = DoubleClient(server)
    client.admin("reset", {})
    client.admin("users", {"username": USER, "password": PASSWORD})
    return client


def tokens(pool):
    status, answer = pool.call("InitiateAuth", ClientId=DOUBLE_CLIENT_ID, AuthFlow="USER_PASSWORD_AUTH",
                               AuthParameters={"USERNAME": USER, "PASSWORD": PASSWORD})
    assert status == 200, answer
    return answer["AuthenticationResult"]


@pytest.fixture
def upstreams(pool):
    started = []

    def start(**options):
        server, url = start_upstream(pool.url, **options)
        started.append(server)
        return server, url

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def web():
    session = requests.Session()
    session.trust_env = False  # loopback only, whatever the environment says
    yield session
    session.close()


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def test_a_verified_access_token_is_admitted_and_recorded_without_its_value(pool, upstreams, web):
    server, url = upstreams()
    access = tokens(pool)["AccessToken"]
    answer = web.get(f"{url}/echo/a%20b/c?x=1&y=two+words", headers={**bearer(access), "X-Custom": "kept"})
    assert answer.status_code == 200, answer.text
    echo = answer.json()
    assert (echo["method"], echo["path"], echo["query"]) == ("GET", "/echo/a%20b/c", "x=1&y=two+words")
    headers = {name.lower(): value for name, value in echo["headers"]}
    assert headers["host"] == url.removeprefix("http://")
    assert headers["x-custom"] == "kept" and headers["authorization"] == "<token>"
    [entry] = server.requests()
    assert entry["admitted"] and entry["token_use"] == "access" and entry["username"] == USER
    assert entry["status"] == 200 and entry["body_length"] == 0
    assert access not in json.dumps(server.requests()) and access not in answer.text
    assert server.tokens == {access}


@pytest.mark.parametrize("case", ["none", "basic", "garbage", "id token", "expired", "forged"])
def test_anything_but_a_verified_access_token_gets_401_with_json(pool, upstreams, web, case):
    server, url = upstreams()
    if case == "expired":
        pool.admin("config", {"issued_at_offset": -7200})
    issued = tokens(pool)
    pool.admin("config", {"issued_at_offset": 0})
    access = issued["AccessToken"]
    header, body, signature = access.split(".")
    headers = {"none": {}, "basic": {"Authorization": "Basic dXNlcjpwYXNz"}, "garbage": bearer("not-a-jwt"),
               "id token": bearer(issued["IdToken"]), "expired": bearer(access),
               "forged": bearer(f"{header}.{body}.{signature[:-4]}AAAA")}[case]
    answer = web.post(f"{url}/echo/x", headers=headers, data=b"unread body")
    assert answer.status_code == 401 and "error" in answer.json()
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    [entry] = server.requests()
    assert not entry["admitted"] and entry["reason"], entry
    assert entry["status"] == 401


def test_a_named_header_carries_the_raw_token_and_authorization_is_not_read(pool, upstreams, web):
    server, url = upstreams(header="X-Token")
    access = tokens(pool)["AccessToken"]
    assert web.get(f"{url}/echo/h", headers=bearer(access)).status_code == 401
    assert web.get(f"{url}/echo/h", headers={"X-Token": f"Bearer {access}"}).status_code == 401
    answer = web.get(f"{url}/echo/h", headers={"X-Token": access})
    assert answer.status_code == 200
    assert ["X-Token", "<token>"] in answer.json()["headers"]
    assert [e["admitted"] for e in server.requests()] == [False, False, True]


def test_an_id_token_server_admits_id_tokens_only(pool, upstreams, web):
    server, url = upstreams(token_use="id")
    issued = tokens(pool)
    assert web.get(f"{url}/echo/i", headers=bearer(issued["AccessToken"])).status_code == 401
    assert web.get(f"{url}/echo/i", headers=bearer(issued["IdToken"])).status_code == 200
    assert [(e["admitted"], e["token_use"]) for e in server.requests()] == [(False, "access"), (True, "id")]


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_every_method_is_echoed(pool, upstreams, web, method):
    server, url = upstreams()
    body = b"a body of some bytes" if method in ("POST", "PUT", "PATCH") else None
    answer = web.request(method, f"{url}/echo/m?k=v", headers=bearer(tokens(pool)["AccessToken"]), data=body)
    assert answer.status_code == 200
    [entry] = server.requests()
    assert entry["method"] == method and entry["admitted"]
    assert entry["body_length"] == len(body or b"")
    if method == "HEAD":
        assert answer.content == b"" and int(answer.headers["Content-Length"]) > 0
    else:
        echo = answer.json()
        assert (echo["method"], echo["query"], echo["body_length"]) == (method, "k=v", len(body or b""))
        assert echo["body_sha256"] == hashlib.sha256(body or b"").hexdigest()


@pytest.mark.parametrize("code", [201, 204, 404, 500, 401])
def test_status_routes(pool, upstreams, web, code):
    server, url = upstreams()
    answer = web.get(f"{url}/status/{code}", headers=bearer(tokens(pool)["AccessToken"]))
    assert answer.status_code == code
    if code == 204:
        assert answer.content == b"" and "Content-Length" not in answer.headers
    else:
        assert answer.json() == {"status": code}
    assert server.requests()[0]["admitted"]


def raw_upload(url, token, length, seed, chunked, path="/upload"):
    """Streams pattern(length, seed) to `url`+`path` with http.client; the JSON answer."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    connection.putrequest("POST", parts.path + path)
    connection.putheader("Authorization", f"Bearer {token}")
    connection.putheader("Transfer-Encoding" if chunked else "Content-Length", "chunked" if chunked else str(length))
    connection.endheaders()
    for piece in pattern(length, seed):
        connection.send(b"%x\r\n%b\r\n" % (len(piece), piece) if chunked else piece)
    if chunked:
        connection.send(b"0\r\n\r\n")
    answer = connection.getresponse()
    value = (answer.status, json.loads(answer.read()))
    connection.close()
    return value


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_uploads_are_hashed_as_they_come(pool, upstreams, chunked):
    server, url = upstreams()
    length = 8 * MiB + 123
    status, answer = raw_upload(url, tokens(pool)["AccessToken"], length, "up", chunked)
    assert status == 200 and answer == {"length": length, "sha256": pattern_sha256(length, "up")}
    [entry] = server.requests()
    assert entry["chunked"] == chunked and entry["content_length"] == (None if chunked else length)
    assert (entry["body_length"], entry["body_sha256"]) == (length, answer["sha256"])


def test_a_paused_upload_holds_its_client_back_until_released(pool, upstreams):
    server, url = upstreams()
    token, length = tokens(pool)["AccessToken"], 64 * MiB
    sent, result = [0], {}
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)

    def send():
        connection.putrequest("POST", f"/upload?pause_at={MiB}&key=up")
        connection.putheader("Authorization", f"Bearer {token}")
        connection.putheader("Content-Length", str(length))
        connection.endheaders()
        for piece in pattern(length, "p"):
            connection.send(piece)
            sent[0] += len(piece)
        answer = connection.getresponse()
        result["answer"] = json.loads(answer.read())

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    poll(lambda: server.requests() and server.requests()[0].get("paused"), "the upload to pause")
    # Held back: the kernel's buffers take a few MiB, never the 64.
    assert sent[0] < 32 * MiB
    server.release("up")
    sender.join(60)
    assert result["answer"] == {"length": length, "sha256": pattern_sha256(length, "p")}


@pytest.mark.parametrize("route", ["download", "download-chunked"])
def test_downloads_stream_the_pattern(pool, upstreams, route):
    server, url = upstreams()
    length = 8 * MiB + 5
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    connection.request("GET", f"/{route}/{length}?seed=s1", headers=bearer(tokens(pool)["AccessToken"]))
    answer = connection.getresponse()
    if route == "download":
        assert answer.getheader("Content-Length") == str(length)
    else:
        assert answer.getheader("Transfer-Encoding") == "chunked" and answer.getheader("Content-Length") is None
    digest, got = hashlib.sha256(), 0
    while piece := answer.read(65536):
        digest.update(piece)
        got += len(piece)
    assert (got, digest.hexdigest()) == (length, pattern_sha256(length, "s1"))
    assert poll(lambda: server.requests()[0].get("sent_sha256"), "the download's record") == digest.hexdigest()
    # The connection is still good for another request (the answer ended where it said).
    connection.request("GET", "/status/201", headers=bearer(tokens(pool)["AccessToken"]))
    assert connection.getresponse().status == 201
    assert len({e["connection"] for e in server.requests()}) == 1


def test_events_send_the_first_and_wait_for_release(pool, upstreams):
    server, url = upstreams()
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    connection.request("GET", "/events?key=e1", headers=bearer(tokens(pool)["AccessToken"]))
    answer = connection.getresponse()
    assert answer.getheader("Content-Type") == "text/event-stream"
    first = b""
    while not first.endswith(b"\n\n"):
        first += answer.read1(65536)
    assert first == b"data: first\n\n"
    assert server.requests()[0].get("events_sent") == 1 and not server.requests()[0].get("ended")
    server.release("e1")
    assert answer.read() == b"data: second\n\n"
    assert poll(lambda: server.requests()[0].get("ended"), "the stream's end")


def test_once_401_refuses_a_key_once(pool, upstreams, web):
    server, url = upstreams()
    access = tokens(pool)["AccessToken"]
    codes = [web.get(f"{url}/once-401/{key}", headers=bearer(access)).status_code for key in ("a", "a", "b", "a")]
    assert codes == [401, 200, 401, 200]
    assert all(e["admitted"] for e in server.requests())


def test_the_simple_index_serves_a_package(pool, upstreams, web):
    server, url = upstreams()
    data = b"PK not really a wheel"
    server.add_package("Tiny_Pkg", "tiny_pkg-1.0-py3-none-any.whl", data)
    access = tokens(pool)["AccessToken"]
    assert "tiny-pkg/" in web.get(f"{url}/simple/", headers=bearer(access)).text
    page = web.get(f"{url}/simple/tiny-pkg/", headers=bearer(access))
    assert page.headers["Content-Type"].startswith("text/html")
    href = re.search(r'href="([^"]+)"', page.text).group(1)
    path, _, fragment = href.partition("#")
    assert fragment == f"sha256={hashlib.sha256(data).hexdigest()}"
    assert web.get(f"{url}{path}", headers=bearer(access)).content == data
    assert web.get(f"{url}/simple/other/", headers=bearer(access)).status_code == 404


def test_a_prefix_is_required_and_kept(pool, upstreams, web):
    server, url = upstreams(prefix="/api/v1")
    access = tokens(pool)["AccessToken"]
    assert url.endswith("/api/v1")
    assert web.get(f"{url}/echo/p", headers=bearer(access)).json()["path"] == "/api/v1/echo/p"
    assert web.get(url.removesuffix("/api/v1") + "/echo/p", headers=bearer(access)).status_code == 404


def test_https_with_a_certificate_made_for_the_run(pool, upstreams, web, tmp_path):
    server, url = upstreams(tls_dir=tmp_path / "tls")
    assert url.startswith("https://127.0.0.1:") and server.certificate.exists()
    answer = web.get(f"{url}/echo/tls", headers=bearer(tokens(pool)["AccessToken"]), verify=str(server.certificate))
    assert answer.status_code == 200 and answer.json()["path"] == "/echo/tls"
    with pytest.raises(requests.exceptions.SSLError):
        web.get(f"{url}/echo/untrusted", headers=bearer(tokens(pool)["AccessToken"]))
    assert [e["path"] for e in server.requests()] == ["/echo/tls"]


def test_requests_on_one_kept_connection_share_its_number(pool, upstreams):
    server, url = upstreams()
    access = tokens(pool)["AccessToken"]
    parts = urllib.parse.urlsplit(url)
    for _ in range(2):
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        for _ in range(3):
            connection.request("GET", "/echo/k", headers=bearer(access))
            assert connection.getresponse().read()
        connection.close()
    numbers = [e["connection"] for e in server.requests()]
    assert numbers[:3] == [numbers[0]] * 3 and numbers[3:] == [numbers[3]] * 3 and numbers[0] != numbers[3]


def test_a_body_cut_short_is_noted(pool, upstreams):
    server, url = upstreams()
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as s:
        s.sendall(f"POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tokens(pool)['AccessToken']}\r\n"
                  "Content-Length: 100\r\n\r\nonly this".encode())
        s.shutdown(socket.SHUT_WR)
        assert s.recv(100) == b""  # closed, no answer
    assert poll(lambda: (server.requests()[0].get("reason") or "").startswith("bad body"), "the note")


def test_the_pattern_is_deterministic_and_sized():
    assert b"".join(pattern(100_000, "x")) == b"".join(pattern(100_000, "x"))
    assert b"".join(pattern(10, "x")) != b"".join(pattern(10, "y"))
    assert [len(p) for p in pattern(65536 * 2 + 1, "x")] == [65536, 65536, 1]
    assert pattern_sha256(0) == hashlib.sha256(b"").hexdigest()
    assert proxy_upstream._normalized("Tiny_Pkg.x") == "tiny-pkg-x"
