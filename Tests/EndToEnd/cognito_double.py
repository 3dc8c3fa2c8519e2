#!/usr/bin/env python3
"""A small, honest test double of the Amazon Cognito user pool JSON API.

The end-to-end tests use it for behaviour the moto emulator does not give us:
tokens that expire on demand, exact call counting, refresh-token revocation and
rotation, and canned failures (e.g. an HTML 500 from a proxy).

It hosts exactly one user pool with one app client. The Cognito endpoint is
`POST /` (AWS JSON 1.1 protocol); test control lives under `/_double/`; the
pool's JWKS is at `GET /<pool id>/.well-known/jwks.json`, so the `iss` claim
(`<base_url><pool id>`) can be verified the same way as real Cognito's.

Run: python3 cognito_double.py --port 0 --host 127.0.0.1
  -> prints one line `LISTENING http://127.0.0.1:<port>/`, serves until SIGTERM/SIGINT.
Or in-process: server, base_url = start_double(); ...; server.shutdown()

Only the Python standard library and `cryptography` are used.
"""
import argparse
import base64
import copy
import json
import os
import secrets
import signal
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

TARGET_PREFIX = "AWSCognitoIdentityProviderService."
AMZ_JSON = "application/x-amz-json-1.1"
KID = "double-key"
VERBOSE = os.environ.get("COGNITO_DOUBLE_VERBOSE") == "1"

DEFAULT_CONFIG = {
    "pool_id": "us-east-1_double",
    "client_id": "doubleclient",
    "token_lifetime": 3600,      # seconds; also the ExpiresIn we report
    "issued_at_offset": 0,       # added to "now" for iat/auth_time, to mint pre-expired tokens
    "rotate_refresh_tokens": False,
    "fail_next": None,           # {"status", "body", "content_type", "count", "headers"}
}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def int_b64url(n: int) -> str:
    return b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))


class CognitoError(Exception):
    """An error Cognito would report as `{"__type": code, "message": ...}`."""

    def __init__(self, code: str, message: str, status: int = 400):
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


class CognitoDouble:
    """All state of the fake pool. Every public method takes the lock, because
    ThreadingHTTPServer serves each connection on its own thread."""

    def __init__(self, base_url: str = ""):
        self.lock = threading.RLock()
        self.base_url = base_url
        # One key for the process lifetime: tokens minted before a reset still
        # verify, which is what a real pool (with a stable key) does too.
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        # Dispatch tables: extend these when adding actions / auth flows.
        self.actions = {"InitiateAuth": self.initiate_auth}
        self.auth_flows = {
            "USER_PASSWORD_AUTH": self._user_password_auth,
            "REFRESH_TOKEN_AUTH": self._refresh_token_auth,
        }
        self.reset()

    # ----------------------------------------------------------- admin API
    def reset(self) -> dict:
        with self.lock:
            self.config = copy.deepcopy(DEFAULT_CONFIG)
            self.users = {}           # username -> {password, confirmed, sub}
            self.refresh_tokens = {}  # token -> {username, client_id, auth_time, revoked}
            self.calls = {}           # "Action[:AuthFlow]" -> count
            self.requests = []        # one record per Cognito request, in order
            return {"ok": True}

    def configure(self, patch: dict) -> dict:
        checks = {
            "pool_id": lambda v: isinstance(v, str) and v != "",
            "client_id": lambda v: isinstance(v, str) and v != "",
            "token_lifetime": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
            "issued_at_offset": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "rotate_refresh_tokens": lambda v: isinstance(v, bool),
            "fail_next": lambda v: v is None or isinstance(v, dict),
        }
        for key, value in patch.items():
            if key not in checks:
                raise ValueError(f"unknown config key {key!r}")
            if not checks[key](value):
                raise ValueError(f"invalid value for {key!r}: {value!r}")
        fail = patch.get("fail_next")
        if fail is not None:  # normalise up front so request handling stays simple
            patch = dict(patch, fail_next={
                "status": int(fail.get("status", 500)),
                "body": str(fail.get("body", "")),
                "content_type": str(fail.get("content_type", "text/plain")),
                "count": max(1, int(fail.get("count", 1))),
                "headers": dict(fail.get("headers", {})),
            })
        with self.lock:
            self.config.update(patch)
            return copy.deepcopy(self.config)

    def put_user(self, body: dict) -> dict:
        username, password = body.get("username"), body.get("password")
        if not isinstance(username, str) or not username or not isinstance(password, str):
            raise ValueError("username and password (strings) are required")
        with self.lock:
            # Replacing a user is delete + create, so a new sub unless one is given;
            # existing refresh tokens are kept (like a password change without sign-out).
            self.users[username] = {
                "password": password,
                "confirmed": bool(body.get("confirmed", True)),
                "sub": str(body.get("sub") or uuid.uuid4()),
            }
            return {"username": username, "sub": self.users[username]["sub"],
                    "confirmed": self.users[username]["confirmed"]}

    def revoke(self, body: dict) -> dict:
        username = body.get("username")
        with self.lock:
            if username not in self.users:
                raise LookupError(f"no such user {username!r}")
            revoked = 0
            for record in self.refresh_tokens.values():
                if record["username"] == username and not record["revoked"]:
                    record["revoked"] = True
                    revoked += 1
            return {"revoked": revoked}

    def stats(self) -> dict:
        with self.lock:
            return {"calls": dict(self.calls), "requests": copy.deepcopy(self.requests)}

    def jwks(self) -> dict:
        public = self._key.public_key().public_numbers()
        return {"keys": [{"alg": "RS256", "e": int_b64url(public.e), "kid": KID,
                          "kty": "RSA", "n": int_b64url(public.n), "use": "sig"}]}

    # ------------------------------------------------------ Cognito endpoint
    def handle(self, headers: dict, raw_body: bytes):
        """Answer one `POST /`. Returns (status, content_type, extra_headers, body)."""
        with self.lock:
            target = headers.get("x-amz-target", "")
            action = target[len(TARGET_PREFIX):] if target.startswith(TARGET_PREFIX) else None
            try:
                payload = json.loads(raw_body or b"{}")
            except ValueError:
                payload = None
            auth_flow = payload.get("AuthFlow") if isinstance(payload, dict) else None
            # Count and record *before* anything can fail: tests assert on
            # retries and on what the client sent, including rejected requests.
            key = (action or target or "(missing target)") + (f":{auth_flow}" if auth_flow else "")
            self.calls[key] = self.calls.get(key, 0) + 1
            record = {"action": action, "auth_flow": auth_flow, "headers": dict(headers)}
            self.requests.append(record)

            fail = self.config["fail_next"]
            if fail is not None:
                fail["count"] -= 1
                if fail["count"] <= 0:
                    self.config["fail_next"] = None
                record["status"] = fail["status"]
                return fail["status"], fail["content_type"], fail["headers"], fail["body"].encode()

            try:
                media_type = headers.get("content-type", "").split(";")[0].strip().lower()
                if media_type != AMZ_JSON:
                    raise CognitoError("SerializationException",
                                       f"Expected Content-Type {AMZ_JSON}, got {media_type or 'none'}")
                if action not in self.actions:
                    raise CognitoError("UnknownOperationException",
                                       f"Unknown operation {target or '(no X-Amz-Target)'}")
                if not isinstance(payload, dict):
                    raise CognitoError("SerializationException", "Request body is not a JSON object")
                status, body = 200, self.actions[action](payload)
                extra = {}
            except CognitoError as err:
                status, body = err.status, {"__type": err.code, "message": err.message}
                extra = {"x-amzn-ErrorType": err.code}
            record["status"] = status
            extra["x-amzn-RequestId"] = str(uuid.uuid4())
            return status, AMZ_JSON, extra, json.dumps(body).encode()

    def initiate_auth(self, req: dict) -> dict:
        flow = req.get("AuthFlow")
        if flow not in self.auth_flows:
            # Real Cognito also answers InvalidParameterException for flows it
            # does not allow; we say plainly that the double lacks the flow.
            raise CognitoError("InvalidParameterException",
                               f"AuthFlow {flow!r} is not supported by the Cognito double")
        if req.get("ClientId") != self.config["client_id"]:
            raise CognitoError("ResourceNotFoundException",
                               f"User pool client {req.get('ClientId')} does not exist.")
        params = req.get("AuthParameters")
        if not isinstance(params, dict):
            raise CognitoError("InvalidParameterException", "Missing required parameter AuthParameters")
        return self.auth_flows[flow](params)

    def _user_password_auth(self, params: dict) -> dict:
        for name in ("USERNAME", "PASSWORD"):
            if not params.get(name):
                raise CognitoError("InvalidParameterException", f"Missing required parameter {name}")
        user = self.users.get(params["USERNAME"])
        if user is None:
            raise CognitoError("UserNotFoundException", "User does not exist.")
        if user["password"] != params["PASSWORD"]:
            raise CognitoError("NotAuthorizedException", "Incorrect username or password.")
        # Cognito checks the password before confirmation, so a wrong password
        # on an unconfirmed user is still NotAuthorized.
        if not user["confirmed"]:
            raise CognitoError("UserNotConfirmedException", "User is not confirmed.")
        return self._authentication_result(params["USERNAME"], auth_time=None, refresh=True)

    def _refresh_token_auth(self, params: dict) -> dict:
        token = params.get("REFRESH_TOKEN")
        if not token:
            raise CognitoError("InvalidParameterException", "Missing required parameter REFRESH_TOKEN")
        record = self.refresh_tokens.get(token)
        if record is None or record["client_id"] != self.config["client_id"]:
            raise CognitoError("NotAuthorizedException", "Invalid Refresh Token")
        if record["revoked"] or record["username"] not in self.users:
            raise CognitoError("NotAuthorizedException", "Refresh Token has been revoked")
        rotate = self.config["rotate_refresh_tokens"]
        if rotate:
            record["revoked"] = True  # the old token dies once its successor exists
        # auth_time stays the original sign-in time: a refresh is not a new authentication.
        return self._authentication_result(record["username"], record["auth_time"], refresh=rotate)

    # --------------------------------------------------------------- tokens
    def _authentication_result(self, username: str, auth_time, refresh: bool) -> dict:
        cfg, user = self.config, self.users[username]
        iat = int(time.time()) + cfg["issued_at_offset"]
        auth_time = iat if auth_time is None else auth_time
        exp = iat + cfg["token_lifetime"]
        iss = f"{self.base_url}{cfg['pool_id']}"
        access = {"sub": user["sub"], "iss": iss, "client_id": cfg["client_id"],
                  "token_use": "access", "scope": "aws.cognito.signin.user.admin",
                  "auth_time": auth_time, "iat": iat, "exp": exp,
                  "jti": str(uuid.uuid4()), "username": username}
        id_claims = {"sub": user["sub"], "aud": cfg["client_id"], "iss": iss,
                     "token_use": "id", "cognito:username": username,
                     "auth_time": auth_time, "iat": iat, "exp": exp, "jti": str(uuid.uuid4())}
        if "@" in username:
            # Real pools only carry email_verified alongside an email attribute.
            id_claims.update({"email": username, "email_verified": True})
        result = {"AccessToken": self._sign(access), "IdToken": self._sign(id_claims),
                  "ExpiresIn": cfg["token_lifetime"], "TokenType": "Bearer"}
        if refresh:
            token = f"{uuid.uuid4()}.{secrets.token_hex(32)}"
            self.refresh_tokens[token] = {"username": username, "client_id": cfg["client_id"],
                                          "auth_time": auth_time, "revoked": False}
            result["RefreshToken"] = token
        return {"AuthenticationResult": result, "ChallengeParameters": {}}

    def _sign(self, claims: dict) -> str:
        header = {"alg": "RS256", "kid": KID, "typ": "JWT"}
        signing_input = ".".join(b64url(json.dumps(part, separators=(",", ":")).encode())
                                 for part in (header, claims))
        signature = self._key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{b64url(signature)}"


class Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keep-alive like the real endpoint; every reply sets Content-Length.
    protocol_version = "HTTP/1.1"
    server_version = "CognitoDouble/1"

    def do_POST(self):
        double, body = self.server.double, self._read_body()
        if self.path == "/":
            headers = {k.lower(): v for k, v in self.headers.items()}
            self._send(*double.handle(headers, body))
            return
        admin = {"/_double/reset": lambda _: double.reset(),
                 "/_double/config": double.configure,
                 "/_double/users": double.put_user,
                 "/_double/revoke": double.revoke}
        if self.path not in admin:
            return self._json(404, {"error": f"no route POST {self.path}"})
        try:
            payload = json.loads(body or b"{}")
            if not isinstance(payload, dict):
                raise ValueError("body must be a JSON object")
            self._json(200, admin[self.path](payload))
        except LookupError as err:
            self._json(404, {"error": str(err)})
        except (ValueError, TypeError) as err:
            self._json(400, {"error": str(err)})

    def do_GET(self):
        double = self.server.double
        with double.lock:
            jwks_path = f"/{double.config['pool_id']}/.well-known/jwks.json"
            config = copy.deepcopy(double.config)
        if self.path == "/_double/stats":
            self._json(200, double.stats())
        elif self.path == "/_double/config":
            self._json(200, config)
        elif self.path == jwks_path:
            self._json(200, double.jwks())
        else:
            self._json(404, {"error": f"no route GET {self.path}"})

    def _read_body(self) -> bytes:
        # The body must always be consumed, or keep-alive connections desync.
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while (size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # skip trailers
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _json(self, status: int, obj) -> None:
        self._send(status, "application/json", {}, json.dumps(obj).encode())

    def _send(self, status: int, content_type: str, headers: dict, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, str(value))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        if VERBOSE:
            sys.stderr.write("cognito-double: " + (format % args) + "\n")


class DoubleServer(ThreadingHTTPServer):
    daemon_threads = True  # idle keep-alive connections must not block exit

    def handle_error(self, request, client_address):
        if VERBOSE:  # clients hanging up mid-request are normal in tests
            super().handle_error(request, client_address)


def make_server(host: str = "127.0.0.1", port: int = 0):
    server = DoubleServer((host, port), Handler)
    base_url = f"http://{host}:{server.server_address[1]}/"
    server.double = CognitoDouble(base_url)
    return server, base_url


def start_double(host: str = "127.0.0.1", port: int = 0):
    """Serve on a background thread; stop with server.shutdown(); server.server_close()."""
    server, base_url = make_server(host, port)
    threading.Thread(target=server.serve_forever, name="cognito-double", daemon=True).start()
    return server, base_url


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    # serve_forever runs on a helper thread because shutdown() deadlocks if
    # called from the serving thread (which is where signal handlers run).
    server, base_url = start_double(args.host, args.port)
    print(f"LISTENING {base_url}", flush=True)
    while not stop.wait(0.5):
        pass
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
