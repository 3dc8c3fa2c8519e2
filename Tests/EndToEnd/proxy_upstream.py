"""A real upstream for `cog-cred proxy`'s end-to-end tests (#64): an
HTTP/1.1 server with keep-alive that admits only Cognito tokens whose RS256
signature verifies against the pool's JWKS (git_server.TokenVerifier: the
issuer, token_use, the app client and exp checked too).

The token comes from `Authorization: Bearer TOKEN`, or, for a server made
with `header=NAME` (the proxy's `--header NAME`), raw from that header; an
Authorization header is then not looked at. `token_use="id"` admits ID tokens
instead of access tokens (the proxy's `--id-token`). Anything else is
answered 401 with a JSON body {"error": why} (and the connection closed, the
body unread).

Every request is recorded in `.seen`, in order of arrival, as a dict:
method, path (as sent, percent-encoding kept), query, headers ([name, value]
pairs as received, the token's value replaced by "<token>"), connection
(1, 2, ... numbering the connections this server accepted: requests on one
kept connection share it), thread (the native id of the thread answering,
to see it blocked in a write), admitted, reason (why not), token_use, jti,
username, exp, chunked (the body came chunked), content_length (the header,
or None), and, once the body was read, body_length and body_sha256; once
answered, status; a download's sent/sent_sha256 grow as it is sent. The
tokens themselves are kept apart in `.tokens` (a set), only for tests that
check no token leaked into a log.

Routes (the path after `prefix`, "" unless given):
  /echo/...               200 JSON {method, path, query, headers (Host as
                          received), body_length, body_sha256}; any method;
                          ?hold=K: answered only once release(K) (60 s at
                          most), the request recorded as held meanwhile
  /status/N               status N: a JSON body {"status": N}, none for 204/304
  /upload                 reads the body as it comes (Content-Length or
                          chunked, never held whole), answers JSON {length,
                          sha256}; ?pause_at=BYTES&key=K stops reading after
                          BYTES until release(K) (a test then sees whether
                          the client is held back)
  /download/N?seed=S      N bytes of pattern(N, S), sent in 64 KiB writes
                          with Content-Length; ?pause_at=BYTES&key=K: as above
  /download-chunked/N?seed=S  the same with Transfer-Encoding: chunked
  /events[?key=K]         text/event-stream, chunked: one event ("data: first"),
                          then it waits for release(K) ("default" without a
                          key, 60 s at most) and sends the second ("data:
                          second") and ends the stream
  /once-401/KEY           401 (JSON) the first time KEY is asked for, 200 after
  /simple/, /simple/NAME/ a PyPI simple index (PEP 503 HTML) of the packages
                          add_package() gave; /packages/FILE serves one
Anything else: 404 JSON.

start_upstream(pool, header=None, token_use="access", prefix="", tls_dir=None)
-> (server, url) serves on 127.0.0.1 on a background thread; `pool` is the
Cognito double (conftest's Double, or its URL) or a MotoPool. `url` has no
trailing slash (prefix included). With `tls_dir` it serves HTTPS with a
self-signed certificate for 127.0.0.1 made there (openssl), whose path is
server.certificate. server.stop() ends it.

Only the Python standard library, `cryptography` (through git_server) and,
for HTTPS, the openssl command.
"""
import hashlib
import html
import json
import re
import threading
import urllib.parse
from pathlib import Path

from git_server import Rejected, TokenVerifier, b64url_decode, token_from
from serving import ConnectionCounter, QuietHandler, QuietServer, body_chunks, serve_in_background, serve_tls

CHUNK = 64 * 1024
WAIT_SECONDS = 60  # the longest a paused route waits for release() before going on
DOUBLE_POOL_ID = "us-east-1_double"  # support.DOUBLE_POOL_ID, cognito_double's DEFAULT_CONFIG
DOUBLE_CLIENT_ID = "doubleclient"


# --- the byte stream downloads send and tests upload --------------------------------------------

def pattern(length, seed="0"):
    """`length` deterministic pseudo-random bytes, in pieces of 64 KiB (the
    last one shorter): piece i is the first bytes of SHAKE-256 of "SEED:i"
    (counter blocks), so any size is made and checked without being held whole."""
    index, left = 0, length
    while left > 0:
        size = min(CHUNK, left)
        yield hashlib.shake_256(f"{seed}:{index}".encode()).digest(size)
        index, left = index + 1, left - size


def pattern_sha256(length, seed="0"):
    digest = hashlib.sha256()
    for piece in pattern(length, seed):
        digest.update(piece)
    return digest.hexdigest()


# --- the server --------------------------------------------------------------------------------

def _normalized(name):
    """A project name as PEP 503 writes it in the index's paths."""
    return re.sub(r"[-_.]+", "-", name).lower()


class Handler(QuietHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cog-cred-test-upstream/1"

    def setup(self):
        super().setup()
        self.connection_number = self.server.connections()

    # Every method goes through one door; CONNECT too, so a proxy that passed
    # one on would be seen doing it.
    def do_GET(self):
        self.dispatch()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_CONNECT = do_TRACE = do_GET

    # ------------------------------------------------------------------ plumbing
    def answer(self, status, body=b"", content_type="application/json", headers=(), length=True):
        """A whole answer; no body after HEAD, nor for 204 and 304 (nor a length)."""
        self.record(status=status)  # before a byte goes: the client may look as soon as it has it
        self.send_response(status)
        bodiless = status in (204, 304) or 100 <= status < 200
        if not bodiless:
            self.send_header("Content-Type", content_type)
            if length:
                self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD" and not bodiless:
            self.wfile.write(body)

    def answer_json(self, status, value, headers=()):
        self.answer(status, json.dumps(value).encode() + b"\n", "application/json", headers)

    def record(self, **fields):
        with self.server.lock:
            self.entry.update(fields)

    # ------------------------------------------------------------------- the door
    def token(self):
        """(the raw token or None, why none)."""
        if self.server.header:
            value = self.headers.get(self.server.header)
            return (value, None) if value else (None, f"no {self.server.header} header")
        scheme, token = token_from(self.headers.get("Authorization"))
        if scheme != "Bearer" or not token:
            return None, "no Bearer token"
        return token, None

    def dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        token, why = self.token()
        headers = [[name, "<token>" if token and token in value else value] for name, value in self.headers.items()]
        length_header = self.headers.get("Content-Length")
        self.entry = {"method": self.command, "path": url.path, "query": url.query, "headers": headers,
                      "connection": self.connection_number, "thread": threading.get_native_id(),
                      "admitted": False, "reason": why, "token_use": None, "jti": None, "username": None, "exp": None,
                      "chunked": "chunked" in self.headers.get("Transfer-Encoding", "").lower(),
                      "content_length": int(length_header) if length_header and length_header.isdigit() else None,
                      "body_length": None, "body_sha256": None, "status": None}
        with self.server.lock:
            self.server.seen.append(self.entry)
        claims = None
        if token is not None:
            with self.server.lock:
                self.server.tokens.add(token)
            try:
                claims = self.server.verifier.verify(token)
            except Rejected as e:
                why = str(e)
                try:  # a well-formed token's kind and jti, to tell what was refused
                    body = json.loads(b64url_decode(token.split(".")[1]))
                    self.record(token_use=body.get("token_use"), jti=body.get("jti"), exp=body.get("exp"))
                except Exception:
                    pass
        if claims is None:
            self.record(reason=why)
            self.close_connection = True  # the body, if any, is left unread
            self.answer_json(401, {"error": why}, headers=[("WWW-Authenticate", 'Bearer realm="cog-cred-test"'),
                                                           ("Connection", "close")])
            return
        self.record(admitted=True, reason=None, token_use=claims.get("token_use"), jti=claims.get("jti"),
                    username=claims.get("username") or claims.get("cognito:username"), exp=claims.get("exp"))
        route = url.path
        if self.server.prefix:
            if not (route == self.server.prefix or route.startswith(self.server.prefix + "/")):
                self.drain()
                self.answer_json(404, {"error": f"outside {self.server.prefix}"})
                return
            route = route[len(self.server.prefix):]
        query = urllib.parse.parse_qs(url.query)
        try:
            if route == "/upload":
                self.upload(query)
                return
            self.drain()
            if route.startswith("/echo/") or route == "/echo":
                self.echo(url)
            elif m := re.fullmatch(r"/status/(\d{3})", route):
                self.status(int(m.group(1)))
            elif m := re.fullmatch(r"/download(-chunked)?/(\d+)", route):
                self.download(int(m.group(2)), query, chunked=bool(m.group(1)))
            elif route == "/events":
                self.events(query.get("key", ["default"])[0])
            elif m := re.fullmatch(r"/once-401/([^/]+)", route):
                self.once_401(m.group(1))
            elif route == "/simple" or route.startswith("/simple/"):
                self.simple(route)
            elif route.startswith("/packages/"):
                self.package(urllib.parse.unquote(route[len("/packages/"):]))
            else:
                self.answer_json(404, {"error": f"no route {route}"})
        except ValueError as e:  # a body cut short
            self.close_connection = True
            self.record(reason=f"bad body: {e}")

    def drain(self):
        """Reads the request body (there may be none), hashing it as it comes."""
        digest, length = hashlib.sha256(), 0
        for piece in body_chunks(self):
            digest.update(piece)
            length += len(piece)
        self.record(body_length=length, body_sha256=digest.hexdigest())

    # ------------------------------------------------------------------- routes
    def echo(self, url):
        hold = urllib.parse.parse_qs(url.query).get("hold")
        if hold:
            self.record(held=True)
            self.server.gate(hold[0]).wait(WAIT_SECONDS)
        headers = [[name, value] for name, value in self.entry["headers"]]
        self.answer_json(200, {"method": self.command, "path": url.path, "query": url.query, "headers": headers,
                               "body_length": self.entry["body_length"], "body_sha256": self.entry["body_sha256"]})

    def status(self, code):
        self.answer_json(code, {"status": code}) if code not in (204, 304) else self.answer(code)

    def upload(self, query):
        pause_at = int(query.get("pause_at", ["-1"])[0])
        key = query.get("key", ["default"])[0]
        digest, length = hashlib.sha256(), 0
        paused = False
        for piece in body_chunks(self):
            digest.update(piece)
            length += len(piece)
            self.entry["received"] = length
            if not paused and 0 <= pause_at <= length:
                paused = True
                self.record(paused=True)
                self.server.gate(key).wait(WAIT_SECONDS)
        self.record(body_length=length, body_sha256=digest.hexdigest())
        self.answer_json(200, {"length": length, "sha256": digest.hexdigest()})

    def download(self, length, query, chunked):
        seed = query.get("seed", ["0"])[0]
        pause_at = int(query.get("pause_at", ["-1"])[0])
        key = query.get("key", ["default"])[0]
        self.record(status=200)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.end_headers()
        if self.command == "HEAD":
            return
        digest, sent, paused = hashlib.sha256(), 0, False
        self.entry.update(sent=0, sent_sha256=None)
        for piece in pattern(length, seed):
            if not paused and 0 <= pause_at <= sent:
                paused = True
                self.record(paused=True)
                self.server.gate(key).wait(WAIT_SECONDS)
            if chunked:
                self.wfile.write(b"%x\r\n%b\r\n" % (len(piece), piece))
            else:
                self.wfile.write(piece)
            digest.update(piece)
            sent += len(piece)
            self.entry["sent"] = sent
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self.record(sent_sha256=digest.hexdigest())

    def events(self, key):
        self.record(status=200)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if self.command == "HEAD":
            return
        for number, data in enumerate((b"data: first\n\n", b"data: second\n\n")):
            if number:
                released = self.server.gate(key).wait(WAIT_SECONDS)
                self.record(released=released)
            self.record(events_sent=number + 1)  # counted before it goes: a client that has it sees it counted
            self.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))
            self.wfile.flush()
        self.record(ended=True)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def once_401(self, key):
        with self.server.lock:
            first = key not in self.server.once
            self.server.once.add(key)
        if first:
            self.answer_json(401, {"error": f"{key}: refused once"},
                             headers=[("WWW-Authenticate", 'Bearer realm="cog-cred-test", error="invalid_token"')])
        else:
            self.answer_json(200, {"key": key, "ok": True})

    def simple(self, route):
        parts = [p for p in route.split("/") if p]
        with self.server.lock:
            packages = {name: dict(files) for name, files in self.server.packages.items()}
        if len(parts) == 1:
            links = "".join(f'<a href="{html.escape(name)}/">{html.escape(name)}</a>\n' for name in sorted(packages))
        elif len(parts) == 2 and _normalized(parts[1]) in packages:
            files = packages[_normalized(parts[1])]
            base = self.server.prefix + "/packages/"
            links = "".join(f'<a href="{base}{urllib.parse.quote(name)}#sha256={hashlib.sha256(data).hexdigest()}">'
                            f'{html.escape(name)}</a>\n' for name, data in sorted(files.items()))
        else:
            self.answer_json(404, {"error": f"no project {'/'.join(parts[1:])}"})
            return
        page = f"<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n".encode()
        self.answer(200, page, "text/html; charset=utf-8")

    def package(self, filename):
        with self.server.lock:
            data = next((files[filename] for files in self.server.packages.values() if filename in files), None)
        if data is None:
            self.answer_json(404, {"error": f"no file {filename}"})
        else:
            self.answer(200, data, "application/octet-stream")


class UpstreamServer(QuietServer):
    def __init__(self, verifier, header=None, prefix="", tls_dir=None):
        super().__init__(("127.0.0.1", 0), Handler)
        self.verifier = verifier
        self.header = header
        self.prefix = prefix.rstrip("/")
        self.lock = threading.Lock()
        self.seen = []
        self.tokens = set()
        self.once = set()
        self.packages = {}
        self.gates = {}
        self.connections = ConnectionCounter()
        self.certificate = None
        scheme = "http"
        if tls_dir is not None:
            self.certificate = self._serve_tls(Path(tls_dir))
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.server_address[1]}{self.prefix}"

    def _serve_tls(self, directory):
        """HTTPS with a self-signed certificate for 127.0.0.1 made for the run; its path (a client's CA bundle)."""
        return serve_tls(self, directory)

    def gate(self, key="default"):
        """The event a paused route (events, a paused upload or download) waits on."""
        with self.lock:
            return self.gates.setdefault(key, threading.Event())

    def release(self, key="default"):
        self.gate(key).set()

    def add_package(self, project, filename, data):
        """A file of `project` in the simple index, served at /packages/FILENAME."""
        with self.lock:
            self.packages.setdefault(_normalized(project), {})[filename] = bytes(data)

    def requests(self, path=None):
        """A copy of what was seen (whose path starts with `path`, when given)."""
        with self.lock:
            return [dict(e) for e in self.seen if path is None or e["path"].startswith(path)]

    def admitted(self):
        return [e for e in self.requests() if e["admitted"]]

    def stop(self):
        for gate in list(self.gates.values()):
            gate.set()  # no handler waits past the end
        self.shutdown()
        self.server_close()


def verifier_for(pool, token_use="access"):
    """A TokenVerifier of `pool`: the double (its URL, or an object with .url
    and no .pool_id) or a MotoPool (.url, .pool_id, .client_id)."""
    url = pool if isinstance(pool, str) else pool.url
    pool_id = getattr(pool, "pool_id", None)
    if pool_id is None:  # the double: its issuer is its own URL and the pool's id
        return TokenVerifier(f"{url}{DOUBLE_POOL_ID}/.well-known/jwks.json", [f"{url}{DOUBLE_POOL_ID}"],
                             DOUBLE_CLIENT_ID, token_use=token_use)
    return TokenVerifier(f"{url}{pool_id}/.well-known/jwks.json",
                         [f"https://cognito-idp.us-east-1.amazonaws.com/{pool_id}"], pool.client_id,
                         token_use=token_use)


def start_upstream(pool, header=None, token_use="access", prefix="", tls_dir=None):
    """(server, url): the upstream for `pool`'s tokens, serving on a background
    thread; over HTTPS with `tls_dir` (its certificate in server.certificate)."""
    server = UpstreamServer(verifier_for(pool, token_use), header=header, prefix=prefix, tls_dir=tls_dir)
    serve_in_background(server, "proxy-upstream", poll_interval=0.05)  # stop() waits for one poll
    return server, server.url


if __name__ == "__main__":
    import sys

    sys.exit("a module for test_proxy.py, not a program")
