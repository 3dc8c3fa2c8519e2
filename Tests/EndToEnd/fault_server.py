#!/usr/bin/env python3
"""A fault-injecting proxy in front of a Cognito-like server, for end-to-end tests.

cog-cred must cope with the network and the service misbehaving: timeouts,
resets, proxies answering HTML, throttling, broken bodies, error types it has
never heard of. This server sits between the binary and an upstream that
speaks Cognito's JSON API (the project's cognito_double/, or moto) and, on
request, makes exactly one of those things happen.

By default every request is forwarded unchanged (method, path, body and the
end-to-end headers, among them Content-Type and X-Amz-Target) and the upstream's
answer relayed (status, Content-Type, x-amzn-* headers, body). A request is a
*Cognito request* when it has an X-Amz-Target header; only those are logged
and only those can be faulted. Everything else (e.g. the double's /_double/
admin API or a JWKS fetch) is always forwarded.

Admin API (JSON in and out, never forwarded; 400 for a bad request):
  POST /_fault/plan  {"faults": [fault, ...]}   replace the plan; answers the plan
  GET  /_fault/plan                             the plan, with "remaining" uses
  POST /_fault/clear                            empty the plan
  POST /_fault/release                          let every request held by `hold` go on
  GET  /_fault/log                              [{action, mode_applied, status,
                                                  forwarded, connection}, ...] one per
                                                Cognito request, oldest first;
                                                "connection" numbers the client's
                                                connection it came on (1, 2, ...);
                                                over TLS, "tls_resumed" says whether
                                                that connection resumed an earlier
                                                TLS session
  POST /_fault/clear_log                        empty the log
  GET  /_fault/closed_port                      {"port": n, "url": ...}: a loopback
                                                port reserved (bound, not listening)
                                                for this server's lifetime: connecting
                                                to it is refused
A fault is {"mode": M, "times": N (default 1; -1 = forever),
"actions": ["InitiateAuth", ...] (default: every action)} plus the mode's own
fields. An action entry may be qualified as "InitiateAuth:REFRESH_TOKEN_AUTH"
or "RespondToAuthChallenge:PASSWORD_VERIFIER" (matched against the body's
AuthFlow / ChallengeName, the keys the double's stats use). Each Cognito request
uses up one use of the first fault in the plan that matches it and has uses
left; when none does, it is forwarded ("mode_applied": "forward").

Modes:
  delay              wait `seconds` (default 30), then forward normally. The wait
                     ends early when the server shuts down (the connection is then
                     reset, nothing forwarded). Other connections are served meanwhile.
  hold               like delay, but until POST /_fault/release (or `seconds`,
                     default 30): a test does something while a request is
                     surely in flight, then lets it go on.
  refuse             read the request, answer nothing, reset the connection (RST).
  restart            a server restarting under a request: forward it (the upstream
                     acts on it), send nothing back, stop listening, reset the
                     connection (RST), and listen again on the same port after
                     `seconds` (default 0.35); connections meanwhile are refused.
  reset_mid_body     200 and headers promising more body than is sent, part of a
                     JSON body, then an RST (SO_LINGER 0) after `pause` (default 0.1) s.
  html_500           500, text/html, an HTML error page.
  status_503         503 with an empty body (no Content-Type).
  throttle           400 {"__type": code, "message": "Rate exceeded"} with
                     x-amzn-ErrorType: code; `code` defaults to TooManyRequestsException.
  truncated_json     200, application/x-amz-json-1.1, a JSON body cut in the middle;
                     Content-Length matches what is sent (a complete HTTP response).
  not_json           200, application/x-amz-json-1.1, body `this is not json`.
  unknown_error_type 400 {"__type": "com.amazonaws.cognito#BrandNewException",
                     "message": "Something new"} (x-amzn-ErrorType: BrandNewException).
In the log, "status" is the status line sent or being sent (null when none was:
refuse, a delay still waiting or cut short by shutdown); "forwarded" says whether
the request went on to the upstream (after a delay it does, even if the client
has given up by then, as a slow real server would still have acted on it).

TLS: with --tls (or tls=True) it serves HTTPS with a certificate for 127.0.0.1
(IP SAN) and localhost, signed by a throw-away CA made at start; --ca-out PATH
writes that CA's PEM for the client's CA bundle.

Run: python3 fault_server.py --upstream URL [--tls [--ca-out PATH]] [--port 0]
  -> prints one line `LISTENING http(s)://127.0.0.1:<port>/`, serves until SIGTERM/SIGINT.
     python3 fault_server.py --closed-port  -> prints a loopback port nothing listens on.
Or in-process: server, base_url, ca_path = start_fault_server(upstream, tls=False)
               ...; server.shutdown(); server.server_close()
Quiet unless FAULT_SERVER_VERBOSE=1. Listens on 127.0.0.1 only. Only the Python
standard library and `cryptography` are used.
"""
import argparse
import copy
import datetime
import fcntl
import http.client
import io
import ipaddress
import json
import os
import shutil
import socket
import ssl
import struct
import sys
import tempfile
import termios
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from serving import ConnectionCounter, QuietServer, read_body, run_until_signalled

HOST = "127.0.0.1"
AMZ_JSON = "application/x-amz-json-1.1"
ADMIN_PREFIX = "/_fault/"
VERBOSE = os.environ.get("FAULT_SERVER_VERBOSE") == "1"
MODES = ("delay", "hold", "refuse", "restart", "reset_mid_body", "html_500", "status_503", "throttle",
         "truncated_json", "not_json", "unknown_error_type")
# A mode's fields when the plan leaves them out.
DEFAULTS = {("delay", "seconds"): 30.0, ("hold", "seconds"): 30.0, ("restart", "seconds"): 0.35,
            ("reset_mid_body", "pause"): 0.1}
UPSTREAM_TIMEOUT = 60.0

# Request headers never passed on: hop-by-hop ones, the ones http.client sets
# itself, and Accept-Encoding (we relay bodies as they are, without decoding).
DROP_REQUEST_HEADERS = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te",
                        "trailer", "transfer-encoding", "upgrade", "host", "content-length",
                        "accept-encoding", "expect"}
# Response headers relayed besides Content-Type (Content-Length is recomputed).
RELAY_RESPONSE_PREFIXES = ("x-amzn-", "x-amz-", "retry-after")

# A plausible Cognito answer, for the modes that send a broken one.
SAMPLE_BODY = json.dumps({
    "AuthenticationResult": {
        "AccessToken": "eyJraWQiOiJkb3VibGUta2V5IiwiYWxnIjoiUlMyNTYifQ." + "A" * 120 + "." + "B" * 86,
        "ExpiresIn": 3600,
        "IdToken": "eyJraWQiOiJkb3VibGUta2V5IiwiYWxnIjoiUlMyNTYifQ." + "C" * 160 + "." + "D" * 86,
        "RefreshToken": "eyJjdHkiOiJKV1QiLCJlbmMiOiJBMjU2R0NNIiwiYWxnIjoiUlNBLU9BRVAifQ." + "E" * 200,
        "TokenType": "Bearer",
    },
    "ChallengeParameters": {},
}).encode()
HTML_500_BODY = (b"<!DOCTYPE html>\n<html>\n<head><title>500 Internal Server Error</title></head>\n"
                 b"<body>\n<center><h1>500 Internal Server Error</h1></center>\n"
                 b"<hr><center>nginx</center>\n</body>\n</html>\n")
NOT_JSON_BODY = b"this is not json"
UNKNOWN_ERROR = {"__type": "com.amazonaws.cognito#BrandNewException", "message": "Something new"}


def log(text: str) -> None:
    if VERBOSE:
        sys.stderr.write("fault-server: " + text + "\n")


# --- ports that refuse ------------------------------------------------------------------

_reserved_sockets = []
_reserved_lock = threading.Lock()


def closed_port() -> int:
    """A loopback TCP port with nothing listening: a connection to it is refused.
    The port stays bound (but not listening) for the life of this process, so
    nothing else can take it meanwhile. Kernel-wide, a bound socket that is not
    listening answers a SYN with RST, exactly like an unused port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((HOST, 0))
    with _reserved_lock:
        _reserved_sockets.append(sock)
    return sock.getsockname()[1]


# --- TLS --------------------------------------------------------------------------------

def make_tls_material(directory: str, dns_names=("localhost",)):
    """A throw-away CA and a server certificate for 127.0.0.1 and `dns_names`
    signed by it, written into `directory`. Returns (ca_pem_path, cert_path, key_path)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    not_before, not_after = now - datetime.timedelta(hours=1), now + datetime.timedelta(days=2)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cog-cred fault-server test CA")])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca_cert = (x509.CertificateBuilder()
               .subject_name(ca_name).issuer_name(ca_name)
               .public_key(ca_key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                            key_encipherment=False, data_encipherment=False,
                                            key_agreement=False, key_cert_sign=True, crl_sign=True,
                                            encipher_only=False, decipher_only=False), critical=True)
               .add_extension(ca_ski, critical=False)
               .sign(ca_key, hashes.SHA256()))

    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before).not_valid_after(not_after)
            .add_extension(x509.SubjectAlternativeName([
                x509.IPAddress(ipaddress.ip_address(HOST)), *map(x509.DNSName, dns_names)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, key_cert_sign=False, crl_sign=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))

    ca_path = os.path.join(directory, "ca.pem")
    cert_path = os.path.join(directory, "server.pem")
    key_path = os.path.join(directory, "server.key")
    with open(ca_path, "wb") as f:
        f.write(ca_cert.public_bytes(serialization.Encoding.PEM))
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return ca_path, cert_path, key_path


# --- the plan ---------------------------------------------------------------------------

def parse_fault(raw) -> dict:
    if not isinstance(raw, dict):
        raise ValueError("each fault must be a JSON object")
    mode = raw.get("mode")
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
    times = raw.get("times", 1)
    if isinstance(times, bool) or not isinstance(times, int) or (times < 1 and times != -1):
        raise ValueError("times must be a positive integer or -1 (forever)")
    actions = raw.get("actions")
    if actions is not None and (not isinstance(actions, list)
                                or not all(isinstance(a, str) and a for a in actions)):
        raise ValueError("actions must be a list of action names")
    fault = dict(raw)
    fault.update(mode=mode, times=times, actions=actions, remaining=times)
    for field in ("seconds", "pause"):
        if field in raw:
            value = raw[field]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{field} must be a non-negative number")
        elif (mode, field) in DEFAULTS:
            fault[field] = DEFAULTS[(mode, field)]
    if "code" in raw and not (isinstance(raw["code"], str) and raw["code"]):
        raise ValueError("code must be a non-empty string")
    return fault


def action_of(target: str) -> str:
    """"AWSCognitoIdentityProviderService.InitiateAuth" -> "InitiateAuth"."""
    return target.rsplit(".", 1)[-1]


def step_of(action: str, body: bytes):
    """The AuthFlow (InitiateAuth) or ChallengeName (RespondToAuthChallenge), if any."""
    try:
        payload = json.loads(body or b"{}")
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    value = payload.get("ChallengeName" if action == "RespondToAuthChallenge" else "AuthFlow")
    return value if isinstance(value, str) else None


def matches(fault: dict, target: str, action: str, step) -> bool:
    if fault["actions"] is None:
        return True
    for wanted in fault["actions"]:
        name, _, qualifier = wanted.partition(":")
        if name in (action, target) and (not qualifier or qualifier == step):
            return True
    return False


# --- the server -------------------------------------------------------------------------

class Aborted(Exception):
    """The connection was reset on purpose; nothing more is to be sent."""


class FaultHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the real endpoint
    server_version = "FaultServer/1"

    # ------------------------------------------------------------- plumbing
    def setup(self):
        super().setup()
        self.connection_number = self.server.next_connection()
        self.tls_resumed = None  # plain HTTP
        if isinstance(self.connection, ssl.SSLSocket):
            # In this connection's own thread, so a slow or failing handshake
            # never holds up the accept loop.
            self.connection.do_handshake()
            self.tls_resumed = self.connection.session_reused

    def do_GET(self):
        self._dispatch()

    def do_POST(self):
        self._dispatch()

    def do_PUT(self):
        self._dispatch()

    def do_DELETE(self):
        self._dispatch()

    def do_PATCH(self):
        self._dispatch()

    def do_HEAD(self):
        self._dispatch()

    def log_message(self, format, *args):
        log(format % args)

    def _send(self, status: int, content_type, headers: dict, body: bytes, length=None) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for name, value in headers.items():
            self.send_header(name, str(value))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def _json(self, status: int, obj) -> None:
        self._send(status, "application/json", {}, json.dumps(obj).encode())

    def _abort(self) -> None:
        """Reset the connection (RST, not FIN): SO_LINGER 0, then a real close."""
        sock = self.connection
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        for f in (self.rfile, self.wfile):  # the makefile() keeps the fd open otherwise
            try:
                f.close()
            except (OSError, ValueError):
                pass
        try:
            sock.close()
        except OSError:
            pass
        # What the base class still does with them (flush, close) must not fail.
        self.rfile, self.wfile = io.BytesIO(), io.BytesIO()
        self.close_connection = True

    def _wait_sent(self, limit: float = 2.0) -> None:
        """Wait until the peer has acknowledged every byte written, so a
        following RST cannot discard data still in our send queue."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            try:
                unacked = struct.unpack("i", fcntl.ioctl(self.connection.fileno(), termios.TIOCOUTQ,
                                                         struct.pack("i", 0)))[0]
            except OSError:
                return
            if unacked == 0:
                return
            time.sleep(0.005)

    # ------------------------------------------------------------- routing
    def _dispatch(self):
        body = read_body(self)
        path = urlsplit(self.path).path
        if path.startswith(ADMIN_PREFIX):
            return self._admin(path, body)
        target = self.headers.get("X-Amz-Target")
        if target is None:
            log(f"{self.command} {self.path}: not a Cognito request, forwarded")
            self._forward(body, {})
            return
        action = action_of(target)
        fault, entry = self.server.take_fault(target, action, step_of(action, body), self.connection_number)
        if self.tls_resumed is not None:
            entry["tls_resumed"] = self.tls_resumed
        mode = fault["mode"] if fault else None
        try:
            if mode is None:
                self._forward(body, entry)
            else:
                getattr(self, "_mode_" + mode)(fault, body, entry)
        except Aborted:
            pass

    def _admin(self, path: str, body: bytes) -> None:
        server, method = self.server, self.command
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            return self._json(400, {"error": "body is not JSON"})
        routes = {
            ("POST", "/_fault/plan"): lambda: server.set_plan(payload),
            ("GET", "/_fault/plan"): server.get_plan,
            ("POST", "/_fault/clear"): lambda: server.set_plan({"faults": []}),
            ("POST", "/_fault/release"): server.release,
            ("GET", "/_fault/log"): server.get_log,
            ("POST", "/_fault/clear_log"): server.clear_log,
            ("GET", "/_fault/closed_port"): server.get_closed_port,
        }
        route = routes.get((method, path))
        if route is None:
            return self._json(404, {"error": f"no route {method} {path}"})
        try:
            self._json(200, route())
        except (ValueError, TypeError) as err:
            self._json(400, {"error": str(err)})

    # ------------------------------------------------------------- forwarding
    def _forward(self, body: bytes, entry: dict) -> None:
        """Pass the request on and relay the answer, noting both in the log entry
        (the status before it is sent: a client that gave up makes sending fail)."""
        status, content_type, extra, answer = self._ask_upstream(body, entry)
        entry["status"] = status
        self._send(status, content_type, extra, answer)

    def _ask_upstream(self, body: bytes, entry: dict):
        """The upstream's answer to the request: (status, content type, headers to relay, body)."""
        entry["forwarded"] = True
        up = self.server.upstream
        headers = {k: v for k, v in self.headers.items() if k.lower() not in DROP_REQUEST_HEADERS}
        path = up.path.rstrip("/") + self.path
        try:
            if up.scheme == "https":
                conn = http.client.HTTPSConnection(up.hostname, up.port or 443, timeout=UPSTREAM_TIMEOUT,
                                                   context=ssl.create_default_context())
            else:
                conn = http.client.HTTPConnection(up.hostname, up.port or 80, timeout=UPSTREAM_TIMEOUT)
            try:
                conn.request(self.command, path, body=body if body or self.command != "GET" else None,
                             headers=headers)
                response = conn.getresponse()
                answer = response.read()
                status, content_type = response.status, response.getheader("Content-Type")
                extra = {k: v for k, v in response.getheaders()
                         if k.lower().startswith(RELAY_RESPONSE_PREFIXES)}
            finally:
                conn.close()
        except (OSError, http.client.HTTPException) as err:
            log(f"upstream failed: {err!r}")
            status, content_type, extra = 502, "text/plain", {}
            answer = f"fault-server: upstream {self.server.upstream_url} failed: {err}\n".encode()
        return status, content_type, extra, answer

    # ------------------------------------------------------------- modes
    def _mode_delay(self, fault, body, entry):
        if self.server.stopping.wait(fault["seconds"]):
            self._abort()  # shutting down: do not forward to an upstream that may be gone
            return
        self._forward(body, entry)

    def _mode_hold(self, fault, body, entry):
        deadline = time.monotonic() + fault["seconds"]
        while not self.server.released.wait(0.02):
            if self.server.stopping.is_set():
                self._abort()
                return
            if time.monotonic() > deadline:
                break
        self._forward(body, entry)

    def _mode_refuse(self, fault, body, entry):
        self._abort()

    def _mode_restart(self, fault, body, entry):
        self._ask_upstream(body, entry)
        # Not listening before the reset: the client's reconnect is refused.
        self.server.stop_listening(fault["seconds"])
        self._abort()

    def _mode_reset_mid_body(self, fault, body, entry):
        part = SAMPLE_BODY[:len(SAMPLE_BODY) // 2]
        self.send_response(200)
        self.send_header("Content-Type", AMZ_JSON)
        self.send_header("Content-Length", str(len(SAMPLE_BODY)))
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        self.end_headers()
        entry["status"] = 200
        try:
            self.wfile.write(part)
            self.wfile.flush()
        except OSError:
            pass
        self._wait_sent()
        self.server.stopping.wait(fault["pause"])
        self._abort()

    def _mode_html_500(self, fault, body, entry):
        entry["status"] = 500
        self._send(500, "text/html", {}, HTML_500_BODY)

    def _mode_status_503(self, fault, body, entry):
        entry["status"] = 503
        self._send(503, None, {}, b"")

    def _mode_throttle(self, fault, body, entry):
        code = fault.get("code") or "TooManyRequestsException"
        entry["status"] = 400
        self._send(400, AMZ_JSON, {"x-amzn-ErrorType": code, "x-amzn-RequestId": str(uuid.uuid4())},
                   json.dumps({"__type": code, "message": "Rate exceeded"}).encode())

    def _mode_truncated_json(self, fault, body, entry):
        entry["status"] = 200
        self._send(200, AMZ_JSON, {"x-amzn-RequestId": str(uuid.uuid4())}, SAMPLE_BODY[:len(SAMPLE_BODY) // 2])

    def _mode_not_json(self, fault, body, entry):
        entry["status"] = 200
        self._send(200, AMZ_JSON, {"x-amzn-RequestId": str(uuid.uuid4())}, NOT_JSON_BODY)

    def _mode_unknown_error_type(self, fault, body, entry):
        entry["status"] = 400
        self._send(400, AMZ_JSON, {"x-amzn-ErrorType": "BrandNewException", "x-amzn-RequestId": str(uuid.uuid4())},
                   json.dumps(UNKNOWN_ERROR).encode())


class FaultServer(QuietServer):
    verbose = VERBOSE  # clients hanging up, failed handshakes: normal in these tests

    def __init__(self, upstream: str, port: int = 0, tls: bool = False, ca_out=None):
        self.upstream_url = upstream
        self.upstream = urlsplit(upstream)
        if self.upstream.scheme not in ("http", "https") or not self.upstream.hostname:
            raise ValueError(f"upstream must be an http(s) URL, not {upstream!r}")
        self.stopping = threading.Event()
        self.released = threading.Event()  # set by /_fault/release; a new plan holds again
        self.lock = threading.Lock()
        self.plan, self.log = [], []
        self.listening_again_at = None  # set while the `restart` mode refuses connections
        self.next_connection = ConnectionCounter()  # numbers the log's "connection"
        self._closed_port = None
        self.tls_dir = self.ssl_context = self.ca_path = None
        if tls:
            self.tls_dir = tempfile.mkdtemp(prefix="fault-server-tls-")
            ca_path, cert_path, key_path = make_tls_material(self.tls_dir)
            if ca_out:
                shutil.copyfile(ca_path, ca_out)
                ca_path = ca_out
            self.ca_path = ca_path
            self.ssl_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.ssl_context.load_cert_chain(cert_path, key_path)
        super().__init__((HOST, port), FaultHandler)
        scheme = "https" if tls else "http"
        self.base_url = f"{scheme}://{HOST}:{self.server_address[1]}/"

    # --- socket handling
    def stop_listening(self, seconds: float) -> None:
        """Refuse connections for `seconds`, then listen again on the same port
        (the `restart` mode). The listening socket is shut down, which wakes the
        accept loop; get_request then waits and listens anew."""
        with self.lock:
            self.listening_again_at = time.monotonic() + seconds
        self.socket.shutdown(socket.SHUT_RDWR)

    def _listen_again(self) -> None:
        """A new listening socket on the same port, under the old one's descriptor
        number, which the accept loop polls."""
        fresh = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        fresh.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        fresh.bind(self.server_address)
        fresh.listen(self.request_queue_size)
        os.dup2(fresh.fileno(), self.socket.fileno())
        fresh.close()

    def get_request(self):
        with self.lock:
            again_at, self.listening_again_at = self.listening_again_at, None
        if again_at is not None:
            self.stopping.wait(max(0.0, again_at - time.monotonic()))
            self._listen_again()
            raise OSError("restarted")  # the accept loop goes round (socketserver ignores it)
        # With TCP_NODELAY (QuietServer): else TLS 1.3's session tickets,
        # written right after the handshake, would hold each new connection's
        # answer for the client's delayed ACK (45 ms on the bench's local refresh).
        sock, addr = super().get_request()
        if self.ssl_context is not None:
            # The handshake happens in the connection's thread (FaultHandler.setup).
            sock = self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def verify_request(self, request, client_address):
        return ipaddress.ip_address(client_address[0]).is_loopback

    def shutdown(self):
        self.stopping.set()  # wakes every pending delay
        super().shutdown()

    def server_close(self):
        self.stopping.set()
        super().server_close()
        if self.tls_dir:
            shutil.rmtree(self.tls_dir, ignore_errors=True)
        if self._closed_port is not None:
            self._closed_port.close()
            self._closed_port = None

    # --- plan and log
    def set_plan(self, payload) -> dict:
        if not isinstance(payload, dict) or not isinstance(payload.get("faults", []), list):
            raise ValueError('expected {"faults": [...]}')
        faults = [parse_fault(f) for f in payload.get("faults", [])]
        with self.lock:
            self.plan = faults
            self.released.clear()
        return self.get_plan()

    def release(self) -> dict:
        self.released.set()
        return {}

    def get_plan(self) -> dict:
        with self.lock:
            return {"faults": copy.deepcopy(self.plan)}

    def get_log(self) -> list:
        with self.lock:
            return copy.deepcopy(self.log)

    def clear_log(self) -> list:
        with self.lock:
            self.log = []
        return []

    def get_closed_port(self) -> dict:
        with self.lock:
            if self._closed_port is None:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.bind((HOST, 0))
                self._closed_port = sock
            port = self._closed_port.getsockname()[1]
        return {"port": port, "url": f"http://{HOST}:{port}/"}

    def take_fault(self, target: str, action: str, step, connection: int):
        """The fault this Cognito request gets (one use of it), or None; and its log entry."""
        with self.lock:
            chosen = None
            for fault in self.plan:
                if fault["remaining"] != 0 and matches(fault, target, action, step):
                    if fault["remaining"] > 0:
                        fault["remaining"] -= 1
                    chosen = copy.deepcopy(fault)
                    break
            entry = {"action": action, "mode_applied": chosen["mode"] if chosen else "forward",
                     "status": None, "forwarded": False, "connection": connection}
            self.log.append(entry)  # updated in place (under no lock: single writes) as it goes
        log(f"{action}{':' + step if step else ''} -> {entry['mode_applied']}")
        return chosen, entry


def start_fault_server(upstream: str, tls: bool = False, ca_out=None, port: int = 0):
    """Serve on a background thread. Returns (server, base_url, ca_pem_path or None);
    stop with server.shutdown(); server.server_close()."""
    server = FaultServer(upstream, port=port, tls=tls, ca_out=ca_out)
    # A short poll interval: shutdown() waits up to one interval.
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fault-server",
                     daemon=True).start()
    return server, server.base_url, server.ca_path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", help="the Cognito-like server to forward to, e.g. http://127.0.0.1:5000/")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--tls", action="store_true", help="serve HTTPS with a throw-away CA")
    parser.add_argument("--ca-out", help="with --tls: write the CA certificate (PEM) here")
    parser.add_argument("--closed-port", action="store_true",
                        help="print a loopback port nothing listens on, and exit")
    args = parser.parse_args(argv)
    if args.closed_port:
        print(closed_port(), flush=True)
        return 0
    if not args.upstream:
        parser.error("--upstream is required")
    if args.ca_out and not args.tls:
        parser.error("--ca-out needs --tls")
    return run_until_signalled(lambda: start_fault_server(args.upstream, tls=args.tls, ca_out=args.ca_out, port=args.port))


if __name__ == "__main__":
    sys.exit(main())
