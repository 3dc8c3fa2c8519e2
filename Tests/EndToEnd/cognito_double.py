#!/usr/bin/env python3
"""A small, honest test double of the Amazon Cognito user pool JSON API.

The end-to-end tests use it for behaviour the moto emulator does not give us:
tokens that expire on demand, exact call counting, refresh-token revocation and
rotation, canned failures (e.g. an HTML 500 from a proxy), and an account
lifecycle that checks what moto waves through: confirmation and reset codes
that must match and can expire, resend limits, password policy, app-client
secrets (SECRET_HASH) and sign-in by email alias.

It hosts exactly one user pool with one app client. The Cognito endpoint is
`POST /` (AWS JSON 1.1 protocol); test control lives under `/_double/`; the
pool's JWKS is at `GET /<pool id>/.well-known/jwks.json`, so the `iss` claim
(`<base_url><pool id>`) can be verified the same way as real Cognito's.

Cognito actions: InitiateAuth (USER_PASSWORD_AUTH, REFRESH_TOKEN_AUTH), SignUp,
ConfirmSignUp, ResendConfirmationCode, ForgotPassword, ConfirmForgotPassword,
ChangePassword.

Admin API (JSON in and out; 400 for a bad request, 404 for an unknown user):
  POST /_double/reset                  all state and config back to defaults
  POST /_double/config  {key: value}   patch config (DEFAULT_CONFIG lists the keys)
  GET  /_double/config                 the current config
  POST /_double/users   {username, password, confirmed?=true, sub?, attributes?}
                                       create or replace a user (no password policy);
                                       an "@" username gets {"email": username}
                                       unless attributes are given
  GET  /_double/users?username=X       {username, sub, confirmed, attributes,
                                        email_verified, password_set}
  POST /_double/revoke  {username}     revoke the user's refresh and access tokens
  GET  /_double/codes?username=X       {"signup": code|null, "reset": code|null},
                                       what the last email would have carried
  POST /_double/expire_codes {username}  make the user's outstanding codes expired
  GET  /_double/stats                  {"calls": {"Action[:AuthFlow]": n}, "requests": [...]}
Admin look-ups by username also accept a user's email attribute value.

Run: python3 cognito_double.py --port 0 --host 127.0.0.1
  -> prints one line `LISTENING http://127.0.0.1:<port>/`, serves until SIGTERM/SIGINT.
Or in-process: server, base_url = start_double(); ...; server.shutdown()

Only the Python standard library and `cryptography` are used.
"""
import argparse
import base64
import binascii
import copy
import hashlib
import hmac
import json
import os
import re
import secrets
import signal
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

TARGET_PREFIX = "AWSCognitoIdentityProviderService."
AMZ_JSON = "application/x-amz-json-1.1"
KID = "double-key"
VERBOSE = os.environ.get("COGNITO_DOUBLE_VERBOSE") == "1"

# Cognito's own default policy, minus the symbol requirement (a setting many
# pools turn off, and one that would make every test password longer).
DEFAULT_PASSWORD_POLICY = {
    "min_length": 8,
    "require_upper": True,
    "require_lower": True,
    "require_digit": True,
    "require_symbol": False,
}

DEFAULT_CONFIG = {
    "pool_id": "us-east-1_double",
    "client_id": "doubleclient",
    "token_lifetime": 3600,      # seconds; also the ExpiresIn we report
    "issued_at_offset": 0,       # added to "now" for iat/auth_time, to mint pre-expired tokens
    "rotate_refresh_tokens": False,
    "fail_next": None,           # {"status", "body", "content_type", "count", "headers"}
    "client_secret": None,       # set: the app client has a secret and SECRET_HASH is required
    "password_policy": DEFAULT_PASSWORD_POLICY,  # a patch may name only some keys
    "code_lifetime": 86400,      # seconds a confirmation or reset code stays valid
    "max_resends": 5,            # ResendConfirmationCode calls allowed per user
    "auto_confirm": False,       # like a pre-sign-up trigger that confirms and verifies
    "username_attributes": None,  # None: usernames only; ["email"]: sign up and in by email
}

# The characters Cognito's policy counts as symbols (its documented list).
SYMBOLS = set("^$*.[]{}()?\"!@#%&/\\,><':;|_~`=+- ")
# Cognito's input constraint on passwords: no leading or trailing whitespace.
PASSWORD_PATTERN = re.compile(r"^[\S]+.*[\S]+$", re.DOTALL)
# Deliberately lenient: Cognito rejects obvious non-addresses, not odd domains.
EMAIL_PATTERN = re.compile(r"^[^@\s]+@[^@\s]+$")
# The standard attributes of a user pool schema; anything else must be custom:.
STANDARD_ATTRIBUTES = {
    "address", "birthdate", "email", "family_name", "gender", "given_name", "locale",
    "middle_name", "name", "nickname", "phone_number", "picture", "preferred_username",
    "profile", "updated_at", "website", "zoneinfo",
}
# In the schema, but only the pool itself (or an admin) may write them.
UNWRITABLE_ATTRIBUTES = {"sub", "email_verified", "phone_number_verified"}
USER_NOT_FOUND = "Username/client id combination not found."


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def int_b64url(n: int) -> str:
    return b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))


def secret_hash(client_secret: str, username: str, client_id: str) -> str:
    """What a client with a secret must send: Base64(HMAC-SHA256(secret, username + client id))."""
    digest = hmac.new(client_secret.encode(), (username + client_id).encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


def mask_email(email: str) -> str:
    """Cognito tells the caller where a code went without revealing the address."""
    local, _, domain = email.partition("@")
    return f"{local[:1]}***@{domain[:1]}***"


class CognitoError(Exception):
    """An error Cognito would report as `{"__type": code, "message": ...}`."""

    def __init__(self, code: str, message: str, status: int = 400):
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def not_authorized(message: str) -> CognitoError:
    return CognitoError("NotAuthorizedException", message)


def invalid_parameter(message: str) -> CognitoError:
    return CognitoError("InvalidParameterException", message)


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
        self.actions = {
            "InitiateAuth": self.initiate_auth,
            "SignUp": self.sign_up,
            "ConfirmSignUp": self.confirm_sign_up,
            "ResendConfirmationCode": self.resend_confirmation_code,
            "ForgotPassword": self.forgot_password,
            "ConfirmForgotPassword": self.confirm_forgot_password,
            "ChangePassword": self.change_password,
        }
        self.auth_flows = {
            "USER_PASSWORD_AUTH": self._user_password_auth,
            "REFRESH_TOKEN_AUTH": self._refresh_token_auth,
        }
        self.reset()

    # ----------------------------------------------------------- admin API
    def reset(self) -> dict:
        with self.lock:
            self.config = copy.deepcopy(DEFAULT_CONFIG)
            self.users = {}           # canonical username -> see _new_user
            self.refresh_tokens = {}  # token -> {username, client_id, auth_time, revoked}
            self.access_tokens = {}   # jti -> username, so revoking a user can reach them
            self.revoked_access = set()  # jti of access tokens that no longer work
            self.calls = {}           # "Action[:AuthFlow]" -> count
            self.requests = []        # one record per Cognito request, in order
            return {"ok": True}

    def configure(self, patch: dict) -> dict:
        def non_negative_int(v):
            return isinstance(v, int) and not isinstance(v, bool) and v >= 0

        checks = {
            "pool_id": lambda v: isinstance(v, str) and v != "",
            "client_id": lambda v: isinstance(v, str) and v != "",
            "token_lifetime": non_negative_int,
            "issued_at_offset": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "rotate_refresh_tokens": lambda v: isinstance(v, bool),
            "fail_next": lambda v: v is None or isinstance(v, dict),
            "client_secret": lambda v: v is None or (isinstance(v, str) and v != ""),
            "password_policy": self._valid_policy,
            "code_lifetime": non_negative_int,
            "max_resends": non_negative_int,
            "auto_confirm": lambda v: isinstance(v, bool),
            # Only email is modelled; phone numbers would need SMS delivery too.
            "username_attributes": lambda v: v is None or (isinstance(v, list) and set(v) <= {"email"}),
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
        if "password_policy" in patch:  # a partial policy means "defaults for the rest"
            patch = dict(patch, password_policy={**DEFAULT_PASSWORD_POLICY, **patch["password_policy"]})
        with self.lock:
            self.config.update(copy.deepcopy(patch))
            return copy.deepcopy(self.config)

    @staticmethod
    def _valid_policy(value) -> bool:
        if not isinstance(value, dict) or not set(value) <= set(DEFAULT_PASSWORD_POLICY):
            return False
        for key, item in value.items():
            if key == "min_length":
                if not isinstance(item, int) or isinstance(item, bool) or item < 1:
                    return False
            elif not isinstance(item, bool):
                return False
        return True

    def put_user(self, body: dict) -> dict:
        username, password = body.get("username"), body.get("password")
        if not isinstance(username, str) or not username or not isinstance(password, str):
            raise ValueError("username and password (strings) are required")
        attributes = body.get("attributes")
        if attributes is None:
            # Tests have long relied on an email-shaped username meaning an email.
            attributes = {"email": username} if "@" in username else {}
        elif not (isinstance(attributes, dict)
                  and all(isinstance(k, str) and isinstance(v, str) for k, v in attributes.items())):
            raise ValueError("attributes must be an object of strings")
        with self.lock:
            # Replacing a user is delete + create, so a new sub unless one is given;
            # existing refresh tokens are kept (like a password change without sign-out).
            self.users[username] = self._new_user(
                password=password, confirmed=bool(body.get("confirmed", True)),
                sub=str(body.get("sub") or uuid.uuid4()), attributes=dict(attributes),
                # An admin-made user's email counts as verified, as with
                # AdminCreateUser plus email_verified=true.
                email_verified="email" in attributes)
            return {"username": username, "sub": self.users[username]["sub"],
                    "confirmed": self.users[username]["confirmed"]}

    def revoke(self, body: dict) -> dict:
        with self.lock:
            username = self._admin_user(body.get("username"))
            revoked = 0
            for record in self.refresh_tokens.values():
                if record["username"] == username and not record["revoked"]:
                    record["revoked"] = True
                    revoked += 1
            # Like GlobalSignOut: the user's access tokens die with the refresh tokens.
            self.revoked_access.update(jti for jti, owner in self.access_tokens.items() if owner == username)
            return {"revoked": revoked}

    def user_info(self, username) -> dict:
        with self.lock:
            name = self._admin_user(username)
            user = self.users[name]
            return {"username": name, "sub": user["sub"], "confirmed": user["confirmed"],
                    "attributes": dict(user["attributes"]), "email_verified": user["email_verified"],
                    "password_set": user["password"] is not None}

    def codes(self, username) -> dict:
        with self.lock:
            user = self.users[self._admin_user(username)]
            # Expired codes are still shown: the email that carried them still exists.
            return {kind: (user["codes"][kind] or {}).get("code") for kind in ("signup", "reset")}

    def expire_codes(self, body: dict) -> dict:
        with self.lock:
            user = self.users[self._admin_user(body.get("username"))]
            outstanding = [c for c in user["codes"].values() if c is not None]
            for code in outstanding:
                code["expires_at"] = 0.0
            return {"expired": len(outstanding)}

    def stats(self) -> dict:
        with self.lock:
            return {"calls": dict(self.calls), "requests": copy.deepcopy(self.requests)}

    def jwks(self) -> dict:
        public = self._key.public_key().public_numbers()
        return {"keys": [{"alg": "RS256", "e": int_b64url(public.e), "kid": KID,
                          "kty": "RSA", "n": int_b64url(public.n), "use": "sig"}]}

    def _admin_user(self, username) -> str:
        """The canonical username an admin call means (the name or a unique email)."""
        # A missing name is "no such user" (404), as /_double/revoke always answered.
        if username in self.users:
            return username
        matches = [n for n, u in self.users.items()
                   if username is not None and u["attributes"].get("email") == username]
        if len(matches) == 1:
            return matches[0]
        raise LookupError(f"no such user {username!r}")

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

    # ------------------------------------------------------ sign-in (InitiateAuth)
    def initiate_auth(self, req: dict) -> dict:
        flow = req.get("AuthFlow")
        if flow not in self.auth_flows:
            # Real Cognito also answers InvalidParameterException for flows it
            # does not allow; we say plainly that the double lacks the flow.
            raise CognitoError("InvalidParameterException",
                               f"AuthFlow {flow!r} is not supported by the Cognito double")
        self._check_client(req)
        params = req.get("AuthParameters")
        if not isinstance(params, dict):
            raise CognitoError("InvalidParameterException", "Missing required parameter AuthParameters")
        return self.auth_flows[flow](params)

    def _user_password_auth(self, params: dict) -> dict:
        for name in ("USERNAME", "PASSWORD"):
            if not params.get(name):
                raise CognitoError("InvalidParameterException", f"Missing required parameter {name}")
        # The hash covers what the user typed, which may be an alias.
        self._check_secret_hash(params["USERNAME"], params.get("SECRET_HASH"))
        username = self._find_user(params["USERNAME"])
        if username is None:
            raise CognitoError("UserNotFoundException", "User does not exist.")
        user = self.users[username]
        if user["password"] != params["PASSWORD"]:
            raise CognitoError("NotAuthorizedException", "Incorrect username or password.")
        # Cognito checks the password before confirmation, so a wrong password
        # on an unconfirmed user is still NotAuthorized.
        if not user["confirmed"]:
            raise CognitoError("UserNotConfirmedException", "User is not confirmed.")
        return self._authentication_result(username, auth_time=None, refresh=True)

    def _refresh_token_auth(self, params: dict) -> dict:
        token = params.get("REFRESH_TOKEN")
        if not token:
            raise CognitoError("InvalidParameterException", "Missing required parameter REFRESH_TOKEN")
        record = self.refresh_tokens.get(token)
        if record is None or record["client_id"] != self.config["client_id"]:
            raise CognitoError("NotAuthorizedException", "Invalid Refresh Token")
        # A refresh has no typed name: the hash covers the canonical username,
        # which a client with an email alias must take from its tokens.
        self._check_secret_hash(record["username"], params.get("SECRET_HASH"))
        if record["revoked"] or record["username"] not in self.users:
            raise CognitoError("NotAuthorizedException", "Refresh Token has been revoked")
        rotate = self.config["rotate_refresh_tokens"]
        if rotate:
            record["revoked"] = True  # the old token dies once its successor exists
        # auth_time stays the original sign-in time: a refresh is not a new authentication.
        return self._authentication_result(record["username"], record["auth_time"], refresh=rotate)

    # ------------------------------------------------------ account lifecycle
    def sign_up(self, req: dict) -> dict:
        typed, password = self._require(req, "ClientId", "Username", "Password")[1:]
        self._check_password_input(password, "password")
        attributes = self._sign_up_attributes(req.get("UserAttributes"))
        self._check_client(req)
        self._check_secret_hash(typed, req.get("SecretHash"), top_level=True)
        by_email = "email" in (self.config["username_attributes"] or [])
        if by_email:
            if not EMAIL_PATTERN.match(typed):
                raise invalid_parameter("Username should be an email.")
            taken = typed in self.users or any(
                u["attributes"].get("email") == typed for u in self.users.values())
            if taken:
                raise CognitoError("UsernameExistsException", "An account with the given email already exists.")
            attributes["email"] = typed  # the sign-in name *is* the email attribute
        elif typed in self.users:
            raise CognitoError("UsernameExistsException", "User already exists")
        self._check_password_policy(password)
        if "email" in attributes and not EMAIL_PATTERN.match(attributes["email"]):
            raise invalid_parameter("Invalid email address format.")

        sub = str(uuid.uuid4())
        # With email as the username attribute Cognito names the user by its sub;
        # tokens then carry that name, not the address the user typed.
        username = sub if by_email else typed
        confirmed = self.config["auto_confirm"]
        user = self._new_user(password=password, confirmed=confirmed, sub=sub, attributes=attributes,
                              email_verified=confirmed and "email" in attributes)
        self.users[username] = user
        response = {"UserConfirmed": confirmed, "UserSub": sub}
        if not confirmed:
            self._issue_code(user, "signup")
            response.update(self._delivery(user))
        return response

    def confirm_sign_up(self, req: dict) -> dict:
        typed, code = self._require(req, "ClientId", "Username", "ConfirmationCode")[1:]
        self._check_client(req)
        self._check_secret_hash(typed, req.get("SecretHash"), top_level=True)
        user = self._user_or_not_found(typed)
        if user["confirmed"]:
            raise not_authorized("User cannot be confirmed. Current status is CONFIRMED")
        self._use_code(user, "signup", code)
        user["confirmed"] = True
        # The code arrived by email, which proves the address.
        user["email_verified"] = "email" in user["attributes"]
        return {}

    def resend_confirmation_code(self, req: dict) -> dict:
        typed = self._require(req, "ClientId", "Username")[1]
        self._check_client(req)
        self._check_secret_hash(typed, req.get("SecretHash"), top_level=True)
        user = self._user_or_not_found(typed)
        if user["confirmed"]:
            raise invalid_parameter("User is already confirmed.")
        if user["resends"] >= self.config["max_resends"]:
            raise CognitoError("LimitExceededException", "Attempt limit exceeded, please try after some time.")
        user["resends"] += 1
        self._issue_code(user, "signup")
        return self._delivery(user)

    def forgot_password(self, req: dict) -> dict:
        typed = self._require(req, "ClientId", "Username")[1]
        self._check_client(req)
        self._check_secret_hash(typed, req.get("SecretHash"), top_level=True)
        user = self._user_or_not_found(typed)
        # Cognito only sends reset codes to a verified address, and an
        # unconfirmed user has none.
        if not user["confirmed"] or not user["email_verified"]:
            raise invalid_parameter(
                "Cannot reset password for the user as there is no registered/verified email or phone_number")
        self._issue_code(user, "reset")
        return self._delivery(user)

    def confirm_forgot_password(self, req: dict) -> dict:
        typed, code, password = self._require(req, "ClientId", "Username", "ConfirmationCode", "Password")[1:]
        self._check_password_input(password, "password")
        self._check_client(req)
        self._check_secret_hash(typed, req.get("SecretHash"), top_level=True)
        user = self._user_or_not_found(typed)
        self._check_code(user, "reset", code)
        self._check_password_policy(password)
        user["codes"]["reset"] = None  # used up only once the new password is accepted
        user["password"] = password
        return {}

    def change_password(self, req: dict) -> dict:
        previous, proposed, access_token = self._require(req, "PreviousPassword", "ProposedPassword", "AccessToken")
        self._check_password_input(previous, "previousPassword")
        self._check_password_input(proposed, "proposedPassword")
        user = self.users[self._verify_access_token(access_token)]
        if user["password"] != previous:
            raise not_authorized("Incorrect username or password.")
        self._check_password_policy(proposed)
        user["password"] = proposed
        return {}

    # ------------------------------------------------------ checks shared by actions
    @staticmethod
    def _require(req: dict, *names) -> list:
        """The named members' values, with AWS's validation error for a missing one."""
        values = []
        for name in names:
            value = req.get(name)
            member = name[0].lower() + name[1:]
            if value is None or value == "":
                raise invalid_parameter(f"1 validation error detected: Value null at '{member}' "
                                        "failed to satisfy constraint: Member must not be null")
            if not isinstance(value, str):
                raise CognitoError("SerializationException", f"Expected a string for {name}")
            values.append(value)
        return values

    def _check_client(self, req: dict) -> None:
        if req.get("ClientId") != self.config["client_id"]:
            raise CognitoError("ResourceNotFoundException",
                               f"User pool client {req.get('ClientId')} does not exist.")

    def _check_secret_hash(self, username: str, given, top_level: bool = False) -> None:
        client_id, secret = self.config["client_id"], self.config["client_secret"]
        if secret is None:
            # Cognito rejects a SecretHash member for a client without a secret.
            # Not done for AuthParameters.SECRET_HASH, which the double has
            # always ignored there.
            if top_level and given is not None:
                raise invalid_parameter(f"Client {client_id} is not configured for secret but secret hash was received")
            return
        if not given:
            raise not_authorized(f"Client {client_id} is configured with secret but SECRET_HASH was not received")
        if not isinstance(given, str) or not hmac.compare_digest(given, secret_hash(secret, username, client_id)):
            raise not_authorized(f"Unable to verify secret hash for client {client_id}")

    @staticmethod
    def _check_password_input(password: str, member: str) -> None:
        # The API's input constraint, checked before (and apart from) the pool's policy.
        if len(password) > 256 or not PASSWORD_PATTERN.match(password):
            raise invalid_parameter(f"1 validation error detected: Value at '{member}' failed to satisfy "
                                    "constraint: Member must satisfy regular expression pattern: ^[\\S]+.*[\\S]+$")

    def _check_password_policy(self, password: str) -> None:
        policy = self.config["password_policy"]
        rules = [
            (len(password) >= policy["min_length"], "Password not long enough"),
            (not policy["require_lower"] or any("a" <= c <= "z" for c in password),
             "Password must have lowercase characters"),
            (not policy["require_upper"] or any("A" <= c <= "Z" for c in password),
             "Password must have uppercase characters"),
            (not policy["require_digit"] or any(c.isascii() and c.isdigit() for c in password),
             "Password must have numeric characters"),
            (not policy["require_symbol"] or any(c in SYMBOLS for c in password),
             "Password must have symbol characters"),
        ]
        for ok, reason in rules:  # Cognito reports the first rule broken
            if not ok:
                raise CognitoError("InvalidPasswordException", f"Password did not conform with policy: {reason}")

    @staticmethod
    def _sign_up_attributes(raw) -> dict:
        if raw is None:
            return {}
        if not isinstance(raw, list):
            raise CognitoError("SerializationException", "UserAttributes must be a list")
        attributes = {}
        for item in raw:
            name = item.get("Name") if isinstance(item, dict) else None
            value = item.get("Value") if isinstance(item, dict) else None
            if not isinstance(name, str) or not isinstance(value, str):
                raise CognitoError("SerializationException", "Each user attribute needs a Name and a Value (strings)")
            if name in UNWRITABLE_ATTRIBUTES:
                raise not_authorized("A client attempted to write unauthorized attribute")
            if name not in STANDARD_ATTRIBUTES and not name.startswith("custom:"):
                raise invalid_parameter(f"Attributes did not conform to the schema: {name}: "
                                        "Attribute does not exist in the schema.")
            attributes[name] = value
        return attributes

    # ------------------------------------------------------ users and codes
    @staticmethod
    def _new_user(password, confirmed, sub, attributes, email_verified) -> dict:
        return {
            "password": password,
            "confirmed": confirmed,
            "sub": sub,
            "attributes": attributes,          # name -> value, as signed up (no sub, no *_verified)
            "email_verified": email_verified,
            "codes": {"signup": None, "reset": None},  # kind -> {"code", "expires_at"} or None
            "resends": 0,                      # ResendConfirmationCode calls so far
        }

    def _find_user(self, typed: str):
        """The canonical username a caller means: the name itself, or (only in a
        pool signing in by email) the user whose email attribute it is."""
        if typed in self.users:
            return typed
        if "email" in (self.config["username_attributes"] or []):
            for name, user in self.users.items():
                if user["attributes"].get("email") == typed:
                    return name
        return None

    def _user_or_not_found(self, typed: str) -> dict:
        username = self._find_user(typed)
        if username is None:
            raise CognitoError("UserNotFoundException", USER_NOT_FOUND)
        return self.users[username]

    def _issue_code(self, user: dict, kind: str) -> None:
        previous = (user["codes"][kind] or {}).get("code")
        code = previous
        while code == previous:  # a new code must really retire the old one
            code = f"{secrets.randbelow(10 ** 6):06d}"
        user["codes"][kind] = {"code": code, "expires_at": time.time() + self.config["code_lifetime"]}

    def _check_code(self, user: dict, kind: str, given: str) -> None:
        issued = user["codes"][kind]
        if issued is None or not hmac.compare_digest(issued["code"], given):
            raise CognitoError("CodeMismatchException", "Invalid verification code provided, please try again.")
        if time.time() >= issued["expires_at"]:
            raise CognitoError("ExpiredCodeException", "Invalid code provided, please request a code again.")

    def _use_code(self, user: dict, kind: str, given: str) -> None:
        self._check_code(user, kind, given)
        user["codes"][kind] = None

    @staticmethod
    def _delivery(user: dict) -> dict:
        """CodeDeliveryDetails for a code sent to the user; none without an email."""
        email = user["attributes"].get("email")
        if email is None:
            return {}
        return {"CodeDeliveryDetails": {"Destination": mask_email(email), "DeliveryMedium": "EMAIL",
                                        "AttributeName": "email"}}

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
        self.access_tokens[access["jti"]] = username
        id_claims = {"sub": user["sub"], "aud": cfg["client_id"], "iss": iss,
                     "token_use": "id", "cognito:username": username,
                     "auth_time": auth_time, "iat": iat, "exp": exp, "jti": str(uuid.uuid4())}
        # Attributes go into the ID token as Cognito does; they cannot clash
        # with the claims above (sign-up and the schema keep such names out).
        for name, value in user["attributes"].items():
            id_claims.setdefault(name, value)
        if "email" in user["attributes"]:
            # Real pools only carry email_verified alongside an email attribute.
            id_claims["email_verified"] = user["email_verified"]
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

    def _verify_access_token(self, token: str) -> str:
        """The canonical username of a live access token this pool issued."""
        invalid = not_authorized("Invalid Access Token")
        parts = token.split(".")
        if len(parts) != 3:
            raise invalid
        try:
            header, claims = (json.loads(b64url_decode(p)) for p in parts[:2])
            signature = b64url_decode(parts[2])
        except (ValueError, binascii.Error):
            raise invalid from None
        if not isinstance(header, dict) or header.get("alg") != "RS256" or header.get("kid") != KID:
            raise invalid
        try:
            self._key.public_key().verify(signature, f"{parts[0]}.{parts[1]}".encode(),
                                          padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            raise invalid from None
        iss = f"{self.base_url}{self.config['pool_id']}"
        if not isinstance(claims, dict) or claims.get("token_use") != "access" or claims.get("iss") != iss:
            raise invalid  # an ID token, or one from another pool
        exp = claims.get("exp")
        if not isinstance(exp, int) or time.time() >= exp:
            raise not_authorized("Access Token has expired")
        username = claims.get("username")
        user = self.users.get(username)
        # A replaced user (new sub) is a deleted user: its tokens are dead too.
        if claims.get("jti") in self.revoked_access or user is None or user["sub"] != claims.get("sub"):
            raise not_authorized("Access Token has been revoked")
        return username


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
                 "/_double/revoke": double.revoke,
                 "/_double/expire_codes": double.expire_codes}
        if self.path not in admin:
            return self._json(404, {"error": f"no route POST {self.path}"})
        self._admin(lambda: admin[self.path](self._object(body)))

    def do_GET(self):
        double = self.server.double
        with double.lock:
            jwks_path = f"/{double.config['pool_id']}/.well-known/jwks.json"
            config = copy.deepcopy(double.config)
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if url.path == "/_double/stats":
            self._json(200, double.stats())
        elif url.path == "/_double/config":
            self._json(200, config)
        elif url.path == "/_double/users":
            self._admin(lambda: double.user_info(query.get("username")))
        elif url.path == "/_double/codes":
            self._admin(lambda: double.codes(query.get("username")))
        elif url.path == jwks_path:
            self._json(200, double.jwks())
        else:
            self._json(404, {"error": f"no route GET {self.path}"})

    def _admin(self, call) -> None:
        try:
            self._json(200, call())
        except LookupError as err:
            self._json(404, {"error": str(err)})
        except (ValueError, TypeError) as err:
            self._json(400, {"error": str(err)})

    @staticmethod
    def _object(body: bytes) -> dict:
        payload = json.loads(body or b"{}")
        if not isinstance(payload, dict):
            raise ValueError("body must be a JSON object")
        return payload

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
