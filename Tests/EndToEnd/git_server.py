#!/usr/bin/env python3
"""A small smart-HTTP git server for the end-to-end tests, guarded by Cognito access tokens.

Bare repositories under --root (e.g. ROOT/project.git) are served at
`<base_url>project.git/...` by git's own `git http-backend`, run as a CGI
program per request (clone, fetch and push, protocol v0/v1/v2).

Every git request must carry a valid Cognito access token, either as
`Authorization: Bearer <token>` or as `Authorization: Basic base64(user:token)`
(the token in the password, as a git credential helper hands it to git
before 2.46; the user name is not checked). A token is valid when it is an
RS256 JWT whose signature verifies against the JWKS at --jwks-url (fetched
at start, fetched again on an unknown `kid`), whose `iss` is one of the
--issuer values, `token_use` is "access", `client_id` is --client-id, `exp`
lies in the future and which has not been revoked here. Anything else gets
401 with `WWW-Authenticate: Bearer realm="cog-cred-test"` and
`WWW-Authenticate: Basic realm="cog-cred-test"`. The token's `username`
claim becomes REMOTE_USER, which lets http-backend accept pushes.

Admin API (JSON in and out, no authentication, not logged):
  POST /_admin/revoke {"jti": "..."}   reject the token with that jti from now on
  POST /_admin/revoke_current          reject every token accepted so far
  GET  /_admin/log                     [{method, path, query, scheme, status, jti,
                                         username, error, chunked, content_encoding}],
                                       one per git request: scheme is "Bearer",
                                       "Basic" or null; jti and username come from
                                       the token's claims (never the token itself);
                                       error says why a request got 401 (else null);
                                       chunked/content_encoding describe the body
  POST /_admin/clear_log               empty the log
  GET  /_admin/accepted                {"jtis": [...]} tokens accepted so far

Run: python3 git_server.py --root DIR --jwks-url URL --issuer ISS [--issuer ISS2 ...]
                           --client-id CID --port 0
  -> prints one line `LISTENING http://127.0.0.1:<port>/`, serves until SIGTERM/SIGINT.
Or in-process: server, base_url = start_git_server(root, jwks_url, issuers, client_id);
  ...; server.shutdown(); server.server_close()

It listens on 127.0.0.1 only and fetches the JWKS only from a loopback URL.
Set GIT_SERVER_VERBOSE=1 for request logging and http-backend's stderr.
Only the Python standard library and `cryptography` are used.
"""
import argparse
import base64
import binascii
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler

from serving import QuietServer, read_body, run_until_signalled, serve_in_background
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

VERBOSE = os.environ.get("GIT_SERVER_VERBOSE") == "1"
REALM = "cog-cred-test"
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
MAX_BODY = 256 * 1024 * 1024


def log(message: str) -> None:
    if VERBOSE:
        sys.stderr.write(f"git-server: {message}\n")
        sys.stderr.flush()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url_uint(text: str) -> int:
    return int.from_bytes(b64url_decode(text), "big")


class Rejected(Exception):
    """A request's credentials are not good enough; the message is for the log."""


class TokenVerifier:
    """Checks Cognito access tokens against a JWKS, with server-side revocation.
    `token_use="id"` checks ID tokens instead: their app client is in `aud`
    (an access token's is in `client_id`)."""

    def __init__(self, jwks_url: str, issuers, client_id: str, token_use: str = "access"):
        host = urllib.parse.urlsplit(jwks_url).hostname
        if host not in LOOPBACK_HOSTS:
            raise ValueError(f"the JWKS URL must be on loopback, not {host!r}")
        if token_use not in ("access", "id"):
            raise ValueError(f"token_use must be access or id, not {token_use!r}")
        self.jwks_url = jwks_url
        self.issuers = set(issuers)
        self.client_id = client_id
        self.token_use = token_use
        self.keys = {}
        self.lock = threading.Lock()
        self.revoked = set()      # jtis, or "sha256:<hex>" for tokens without one
        self.accepted = {}        # the same keys -> jti (or None), in order of first acceptance
        # Never through a proxy, whatever the environment says.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            self.refresh_keys()
        except Exception as e:  # the issuer may come up later; retried on demand
            log(f"JWKS fetch from {jwks_url} failed at start: {e}")

    def refresh_keys(self) -> None:
        with self._opener.open(self.jwks_url, timeout=10) as r:
            document = json.loads(r.read())
        keys = {}
        for jwk in document.get("keys", []):
            if jwk.get("kty") != "RSA" or jwk.get("alg", "RS256") != "RS256":
                continue
            public = rsa.RSAPublicNumbers(b64url_uint(jwk["e"]), b64url_uint(jwk["n"])).public_key()
            keys[jwk.get("kid")] = public
        with self.lock:
            self.keys = keys

    def key_for(self, kid):
        with self.lock:
            key = self.keys.get(kid)
        if key is None:
            try:
                self.refresh_keys()
            except Exception as e:
                raise Rejected(f"JWKS fetch failed: {e}") from None
            with self.lock:
                key = self.keys.get(kid)
        if key is None:
            raise Rejected(f"unknown kid {kid!r}")
        return key

    @staticmethod
    def revocation_key(token: str, claims: dict) -> str:
        jti = claims.get("jti")
        if isinstance(jti, str) and jti:
            return jti
        return "sha256:" + hashlib.sha256(token.encode()).hexdigest()

    def verify(self, token: str) -> dict:
        """The token's claims, or Rejected."""
        parts = token.split(".")
        if len(parts) != 3:
            raise Rejected("not a JWT")
        try:
            header = json.loads(b64url_decode(parts[0]))
            claims = json.loads(b64url_decode(parts[1]))
            signature = b64url_decode(parts[2])
        except (ValueError, binascii.Error):
            raise Rejected("malformed JWT") from None
        if not isinstance(header, dict) or not isinstance(claims, dict):
            raise Rejected("malformed JWT")
        if header.get("alg") != "RS256":
            raise Rejected(f"alg {header.get('alg')!r} is not RS256")
        key = self.key_for(header.get("kid"))
        try:
            key.verify(signature, f"{parts[0]}.{parts[1]}".encode("ascii"),
                       padding.PKCS1v15(), hashes.SHA256())
        except (InvalidSignature, ValueError):
            raise Rejected("bad signature") from None
        if claims.get("iss") not in self.issuers:
            raise Rejected(f"issuer {claims.get('iss')!r} not allowed")
        if claims.get("token_use") != self.token_use:
            raise Rejected(f"token_use {claims.get('token_use')!r} is not {self.token_use}")
        client_claim = "client_id" if self.token_use == "access" else "aud"
        if claims.get(client_claim) != self.client_id:
            raise Rejected(f"{client_claim} {claims.get(client_claim)!r} not allowed")
        exp = claims.get("exp")
        if not isinstance(exp, (int, float)) or isinstance(exp, bool) or exp <= time.time():
            raise Rejected("expired")
        rkey = self.revocation_key(token, claims)
        with self.lock:
            if rkey in self.revoked:
                raise Rejected("revoked")
            self.accepted.setdefault(rkey, claims.get("jti"))
        return claims

    def revoke(self, jti: str) -> None:
        with self.lock:
            self.revoked.add(jti)

    def revoke_current(self) -> int:
        with self.lock:
            self.revoked.update(self.accepted)
            return len(self.accepted)


def token_from(authorization):
    """(scheme, token) from an Authorization header; scheme None when absent or unknown."""
    if not authorization:
        return None, None
    scheme, _, value = authorization.strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer":
        return "Bearer", value
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return "Basic", ""
        _, _, password = decoded.partition(":")
        return "Basic", password
    return None, None


def parse_cgi_output(output: bytes):
    """(status, reason, [(name, value)], body) from a CGI program's stdout."""
    end = output.find(b"\r\n\r\n")
    sep_len = 4
    lf_end = output.find(b"\n\n")
    if end < 0 or (0 <= lf_end < end):
        end, sep_len = lf_end, 2
    if end < 0:
        raise ValueError("no end of CGI headers")
    head, body = output[:end].decode("latin-1"), output[end + sep_len:]
    status, reason, headers = 200, "OK", []
    for line in head.replace("\r\n", "\n").split("\n"):
        if not line.strip():
            continue
        name, _, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if name.lower() == "status":
            code, _, text = value.partition(" ")
            status, reason = int(code), text or None
        else:
            headers.append((name, value))
    return status, reason, headers, body


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cog-cred-test-git/1"

    # ------------------------------------------------------------ plumbing
    def respond(self, status: int, body: bytes, content_type="text/plain; charset=utf-8",
                headers=(), reason=None):
        self.send_response(status, reason)
        has_type = False
        for name, value in headers:
            if name.lower() in ("content-length", "transfer-encoding", "connection"):
                continue
            has_type = has_type or name.lower() == "content-type"
            self.send_header(name, value)
        if not has_type and content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def respond_json(self, status: int, value):
        self.respond(status, json.dumps(value).encode(), "application/json")

    def unauthorized(self, message: str):
        self.send_response(401)
        self.send_header("WWW-Authenticate", f'Bearer realm="{REALM}"')
        self.send_header("WWW-Authenticate", f'Basic realm="{REALM}"')
        body = f"401 Unauthorized: {message}\n".encode()
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    # ------------------------------------------------------------- routing
    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_HEAD(self):
        self.dispatch()

    def dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        try:
            body = read_body(self, limit=MAX_BODY)
        except ValueError as e:
            self.close_connection = True
            self.respond(400, f"bad request body: {e}\n".encode())
            return
        if url.path == "/_admin" or url.path.startswith("/_admin/"):
            self.admin(url.path[len("/_admin/"):], body)
        else:
            self.git(url, body)

    def admin(self, action: str, body: bytes):
        server = self.server
        verifier = server.verifier
        try:
            data = json.loads(body) if body.strip() else {}
        except ValueError:
            self.respond_json(400, {"error": "body is not JSON"})
            return
        if self.command == "GET" and action == "log":
            with server.log_lock:
                self.respond_json(200, list(server.request_log))
        elif self.command == "GET" and action == "accepted":
            with verifier.lock:
                self.respond_json(200, {"jtis": [j for j in verifier.accepted.values() if j]})
        elif self.command == "POST" and action == "revoke":
            jti = data.get("jti") if isinstance(data, dict) else None
            if not isinstance(jti, str) or not jti:
                self.respond_json(400, {"error": "need {\"jti\": \"...\"}"})
                return
            verifier.revoke(jti)
            self.respond_json(200, {"revoked": [jti]})
        elif self.command == "POST" and action == "revoke_current":
            self.respond_json(200, {"revoked": verifier.revoke_current()})
        elif self.command == "POST" and action == "clear_log":
            with server.log_lock:
                server.request_log.clear()
            self.respond_json(200, {})
        else:
            self.respond_json(404, {"error": f"no admin action {self.command} {action}"})

    def git(self, url, body: bytes):
        entry = {"method": self.command, "path": url.path, "query": url.query,
                 "scheme": None, "status": None, "jti": None, "username": None, "error": None,
                 "chunked": "chunked" in self.headers.get("Transfer-Encoding", "").lower(),
                 "content_encoding": self.headers.get("Content-Encoding")}
        try:
            scheme, token = token_from(self.headers.get("Authorization"))
            entry["scheme"] = scheme
            if scheme is None:
                raise Rejected("no Bearer or Basic credentials")
            if not token:
                raise Rejected(f"empty token in {scheme} credentials")
            try:
                claims = self.server.verifier.verify(token)
            except Rejected as e:
                # Log the jti of a well-formed but refused token, to tell tokens apart.
                try:
                    jti = json.loads(b64url_decode(token.split(".")[1])).get("jti")
                    entry["jti"] = jti if isinstance(jti, str) else None
                except Exception:
                    pass
                raise e
            entry["jti"] = claims.get("jti")
            entry["username"] = claims.get("username") or claims.get("sub")
        except Rejected as e:
            entry["status"], entry["error"] = 401, str(e)
            self.record(entry)
            log(f"401 {self.command} {self.path}: {e}")
            self.unauthorized("a valid Cognito access token is required")
            return
        status, reason, headers, out = self.run_backend(url, body, entry["username"], scheme)
        entry["status"] = status
        self.record(entry)
        self.respond(status, out, None, headers, reason)

    def run_backend(self, url, body: bytes, username: str, scheme: str):
        path_info = urllib.parse.unquote(url.path)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": self.server.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "HOME": self.server.root,
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "SERVER_SOFTWARE": self.server_version,
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": str(self.server.server_address[1]),
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path_info,
            "QUERY_STRING": url.query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": username or "cognito-user",
            "REMOTE_ADDR": self.client_address[0],
            "AUTH_TYPE": scheme or "",
        }
        # Other request headers as HTTP_* (Git-Protocol -> HTTP_GIT_PROTOCOL selects
        # protocol v2; Content-Encoding -> HTTP_CONTENT_ENCODING lets http-backend
        # inflate a gzip body). Never the credentials; the body is already de-chunked.
        for name, value in self.headers.items():
            lowered = name.lower()
            if lowered in ("authorization", "content-type", "content-length", "transfer-encoding",
                           "proxy-authorization", "connection"):
                continue
            key = "HTTP_" + name.upper().replace("-", "_")
            env[key] = f"{env[key]}, {value}" if key in env else value
        proc = subprocess.run(["git", "http-backend"], input=body, env=env,
                              capture_output=True, timeout=120)
        if proc.stderr:
            log(f"http-backend stderr for {self.command} {self.path}: "
                f"{proc.stderr.decode(errors='replace').strip()}")
        try:
            return parse_cgi_output(proc.stdout)
        except ValueError as e:
            log(f"http-backend exit {proc.returncode}, unusable output: {e}")
            return 502, None, [], f"git http-backend failed (exit {proc.returncode})\n".encode()

    def record(self, entry: dict):
        with self.server.log_lock:
            self.server.request_log.append(entry)

    def log_message(self, format, *args):
        if VERBOSE:
            sys.stderr.write("git-server: " + (format % args) + "\n")


class GitServer(QuietServer):
    verbose = VERBOSE


def make_git_server(root, jwks_url: str, issuers, client_id: str, port: int = 0, tls=None):
    """tls: (certificate file, key file) to serve HTTPS, as real git hosts do."""
    if isinstance(issuers, str):
        issuers = [issuers]
    verifier = TokenVerifier(jwks_url, issuers, client_id)
    server = GitServer(("127.0.0.1", port), Handler)
    server.root = os.path.abspath(str(root))
    server.verifier = verifier
    server.request_log = []
    server.log_lock = threading.Lock()
    scheme = "http"
    if tls:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    base_url = f"{scheme}://127.0.0.1:{server.server_address[1]}/"
    return server, base_url


def start_git_server(root, jwks_url: str, issuers, client_id: str, port: int = 0, tls=None):
    """Serve on a background thread; stop with server.shutdown(); server.server_close()."""
    server, base_url = make_git_server(root, jwks_url, issuers, client_id, port, tls)
    serve_in_background(server, "git-server")
    return server, base_url


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="directory holding the bare repositories")
    parser.add_argument("--jwks-url", required=True)
    parser.add_argument("--issuer", action="append", required=True, help="an allowed iss (repeatable)")
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args(argv)
    return run_until_signalled(lambda: start_git_server(args.root, args.jwks_url, args.issuer, args.client_id, args.port))


if __name__ == "__main__":
    sys.exit(main())
