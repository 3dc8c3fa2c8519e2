"""The admin API under /_double/: reset, config, users, codes, devices,
stats, revocation.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import copy
import re
import uuid
from urllib.parse import urlsplit

from .constants import (DEFAULT_CONFIG, DEFAULT_PASSWORD_POLICY, DEVICE_TRACKING_MODES, EMAIL_MFA_CHALLENGES,
                        FIRST_AUTH_FACTORS, IDENTITY_ID_PATTERN, KID, MFA_MODES, MODE_METHODS, OAUTH_FLOWS,
                        ROLE_ARN_PATTERN, SCOPE_PATTERN, WEBAUTHN_USER_VERIFICATIONS)
from .crypto import new_totp_secret, totp_key
from .wire import int_b64url


class AdminApi:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

    # ----------------------------------------------------------- admin API
    def reset(self) -> dict:
        with self.lock:
            self.config = copy.deepcopy(DEFAULT_CONFIG)
            self.users = {}           # canonical username -> see _new_user
            # token -> {username, client_id, auth_time, revoked, family, rotated_at}; a
            # family is one sign-in: its refresh tokens (rotation adds more) and
            # every access token issued with them, which RevokeToken ends together.
            self.refresh_tokens = {}
            self.access_tokens = {}   # jti -> {username, family}, so revocation can reach them
            self.revoked_access = set()  # jti of access tokens that no longer work
            self.sessions = {}        # challenge Session -> see _new_session
            self.srp_blocks = {}      # SECRET_BLOCK -> Session of its (DEVICE_)PASSWORD_VERIFIER challenge
            # DeviceKey -> see _issue_device; a forgotten device is deleted, so its key is unknown again.
            self.devices = {}
            self.device_pages = {}    # ListDevices PaginationToken -> {"username", "sub", "offset"}
            # Passkeys: CredentialId (base64url) -> see complete_web_authn_registration, in
            # registration order; a deleted one is gone. Start's challenges by their text.
            self.passkeys = {}
            self.registration_challenges = {}
            self.passkey_pages = {}   # ListWebAuthnCredentials NextToken -> {"username", "sub", "offset"}
            self.calls = {}           # "Action[:AuthFlow|:ChallengeName]" -> count
            self.requests = []        # one record per Cognito request, in order
            # Managed login: login_session -> {"request", "federated", "expires_at", "used"},
            # where "request" is the checked authorize request (see _authorize).
            self.login_sessions = {}
            self.authorization_codes = {}  # code -> the request, user and times (see _signed_in)
            self.last_authorize = None     # {"params", "query"} of the last GET /oauth2/authorize
            # Identity pool: (identity pool id, sub) -> IdentityId, so a user keeps one identity,
            # and IdentityId -> {"pool", "sub", "username"}.
            self.identity_by_sub = {}
            self.identities = {}
            # AccessKeyId -> what was issued with it (see _mint_aws_credentials).
            self.aws_credentials = {}
            return {"ok": True}

    def configure(self, patch: dict) -> dict:
        def non_negative_int(v):
            return isinstance(v, int) and not isinstance(v, bool) and v >= 0

        def string_list(v):
            return isinstance(v, list) and all(isinstance(x, str) and x != "" for x in v)

        def valid_urls(v):
            # Absolute URIs (a custom scheme like myapp:// too) without a fragment, as Cognito demands.
            return string_list(v) and all(urlsplit(x).scheme and "#" not in x for x in v)

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
            "fixed_code": lambda v: v is None or (isinstance(v, str) and len(v) == 6 and v.isdigit()),
            # Only email is modelled; phone numbers would need SMS delivery too.
            "username_attributes": lambda v: v is None or (isinstance(v, list) and set(v) <= {"email"}),
            "session_lifetime": non_negative_int,
            "email_mfa_challenge": lambda v: v in EMAIL_MFA_CHALLENGES,
            "email_mfa": lambda v: isinstance(v, bool),
            "allowed_first_auth_factors": lambda v: string_list(v) and "PASSWORD" in v
                                                    and set(v) <= set(FIRST_AUTH_FACTORS),
            "custom_challenges": lambda v: isinstance(v, list) and all(
                isinstance(r, dict) and set(r) == {"parameters", "answer"} and isinstance(r["answer"], str)
                and isinstance(r["parameters"], dict) and all(isinstance(x, str) for x in r["parameters"].values())
                for r in v),
            "srp_challenge_session": lambda v: isinstance(v, bool),
            "rotation_grace_seconds": lambda v: non_negative_int(v) and v <= 60,  # Cognito's range
            "reuse_detection": lambda v: isinstance(v, bool),
            "get_tokens_from_refresh_token": lambda v: isinstance(v, bool),
            "revoke_token": lambda v: isinstance(v, bool),
            "srp_salt": lambda v: v is None or (isinstance(v, str) and re.fullmatch(r"-?[0-9a-fA-F]+", v) is not None),
            "refresh_token_lifetime": non_negative_int,
            "callback_urls": valid_urls,
            "logout_urls": valid_urls,
            "oauth_flows": lambda v: string_list(v) and set(v) <= set(OAUTH_FLOWS),
            "allowed_scopes": lambda v: string_list(v) and all(SCOPE_PATTERN.fullmatch(x) for x in v),
            # A resource server's scopes are always "identifier/name".
            "custom_scopes": lambda v: string_list(v) and all(SCOPE_PATTERN.fullmatch(x) and "/" in x for x in v),
            # COGNITO is the name of the pool's own sign-in, not a federated provider.
            "identity_providers": lambda v: string_list(v) and "COGNITO" not in v
                                            and all(re.fullmatch(r"[\w.-]+", x, re.ASCII) for x in v),
            "authorization_code_lifetime": non_negative_int,
            "identity_pool_id": lambda v: isinstance(v, str) and len(v) <= 55
                                          and IDENTITY_ID_PATTERN.fullmatch(v) is not None,
            "identity_provider": lambda v: v is None or (isinstance(v, str) and v != ""),
            "identity_client_ids": lambda v: v is None or (string_list(v) and v != []),
            "identity_role_arns": lambda v: string_list(v) and v != []
                                            and all(ROLE_ARN_PATTERN.fullmatch(x) for x in v),
            "identity_credentials_lifetime": non_negative_int,
            "identity_open_id_token_lifetime": non_negative_int,
            "identity_pool_misconfigured": lambda v: isinstance(v, bool),
            "identity_allow_classic_flow": lambda v: isinstance(v, bool),
            "device_tracking": lambda v: v in DEVICE_TRACKING_MODES,
            # A domain name (what an RP id is): no scheme, port or path.
            "webauthn_rp_id": lambda v: v is None or (isinstance(v, str) and re.fullmatch(
                r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*",
                v) is not None),
            "webauthn_user_verification": lambda v: v in WEBAUTHN_USER_VERIFICATIONS,
            "webauthn_configured": lambda v: isinstance(v, bool),
            "webauthn_registration_lifetime": non_negative_int,
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
        passkey = body.get("passkey", False)
        if not isinstance(passkey, bool):
            raise ValueError("passkey must be a boolean")
        force = body.get("force_change_password", False)
        if not isinstance(force, bool):
            raise ValueError("force_change_password must be a boolean")
        mfa, totp_secret = body.get("mfa"), body.get("totp_secret")
        if mfa not in MFA_MODES:
            raise ValueError(f"mfa must be one of {list(MFA_MODES)}")
        if totp_secret is not None and not (isinstance(totp_secret, str) and totp_key(totp_secret)):
            raise ValueError("totp_secret must be a base32 string")
        if mfa in ("email", "all") and "email" not in attributes:
            raise ValueError("email MFA needs an email attribute")
        if totp_secret is None and mfa in ("totp", "both", "all"):
            totp_secret = new_totp_secret()  # the test reads it back from GET /_double/users
        with self.lock:
            # Replacing a user is delete + create, so a new sub unless one is given;
            # existing refresh tokens are kept (like a password change without sign-out).
            user = self._new_user(
                password=password, confirmed=bool(body.get("confirmed", True)),
                sub=str(body.get("sub") or uuid.uuid4()), attributes=dict(attributes),
                # An admin-made user's email counts as verified, as with
                # AdminCreateUser plus email_verified=true.
                email_verified="email" in attributes)
            # force_change_password is what AdminCreateUser leaves (FORCE_CHANGE_PASSWORD).
            user.update(force_change_password=force, totp_secret=totp_secret, passkey=passkey,
                        mfa_setup_required=mfa == "setup")
            self._set_mfa(user, MODE_METHODS[mfa], None)
            self.users[username] = user
            return {"username": username, "sub": user["sub"], "confirmed": user["confirmed"]}

    def revoke(self, body: dict) -> dict:
        with self.lock:
            return {"revoked": self._sign_out(self._admin_user(body.get("username")))}

    def user_info(self, username) -> dict:
        with self.lock:
            name = self._admin_user(username)
            user = self.users[name]
            return {"username": name, "sub": user["sub"], "confirmed": user["confirmed"],
                    "attributes": dict(user["attributes"]), "email_verified": user["email_verified"],
                    "password_set": user["password"] is not None,
                    "force_change_password": user["force_change_password"], "mfa": user["mfa"],
                    "totp_secret": user["totp_secret"]}

    def codes(self, username) -> dict:
        with self.lock:
            user = self.users[self._admin_user(username)]
            # Expired codes are still shown: the email that carried them still exists.
            codes = {kind: (user["codes"][kind] or {}).get("code") for kind in ("signup", "reset")}
            # MFA codes live in their challenge Session (and die with it).
            return dict(codes, sms=user["sms_code"], email=user["email_code"])

    def expire_codes(self, body: dict) -> dict:
        with self.lock:
            user = self.users[self._admin_user(body.get("username"))]
            outstanding = [c for c in user["codes"].values() if c is not None]
            for code in outstanding:
                code["expires_at"] = 0.0
            return {"expired": len(outstanding)}

    def devices_info(self, username) -> dict:
        """GET /_double/devices: what a test needs to know of a user's devices, never their secrets."""
        with self.lock:
            name = self._admin_user(username)
            return {"username": name, "devices": [
                {"device_key": key, "device_group_key": device["group_key"], "name": device["name"],
                 "confirmed": device["confirmed"], "remembered": device["remembered"],
                 "created": device["created"], "last_modified": device["modified"],
                 "last_authenticated": device["last_authenticated"]}
                for key, device in self._devices_of(name, confirmed_only=False)]}

    def forget_device_admin(self, body: dict) -> dict:
        """POST /_double/forget_device: as if the user forgot it elsewhere (another machine, the console)."""
        with self.lock:
            name, key = self._admin_user(body.get("username")), body.get("device_key")
            if key not in dict(self._devices_of(name, confirmed_only=False)):
                raise LookupError(f"user {name!r} has no device {key!r}")
            del self.devices[key]
            return {"forgotten": key}

    def passkeys_info(self, username) -> dict:
        """GET /_double/passkeys: a user's passkeys as the double keeps them (the
        sign count too, which no API shows), and the RP id now in force."""
        with self.lock:
            name = self._admin_user(username)
            return {"username": name, "rp_id": self._webauthn_rp_id(), "passkeys": [
                {"credential_id": cid, "name": record["name"], "aaguid": record["aaguid"],
                 "algorithm": record["algorithm"], "rp_id": record["rp_id"], "attachment": record["attachment"],
                 "transports": list(record["transports"]), "sign_count": record["sign_count"],
                 "created": record["created"], "last_used": record["last_used"]}
                for cid, record in self._passkeys_of(name)]}

    def stats(self) -> dict:
        with self.lock:
            return {"calls": dict(self.calls), "requests": copy.deepcopy(self.requests)}

    def aws_credentials_info(self, access_key_id) -> dict:
        """What the double issued with an AccessKeyId (GET /_double/aws_credentials)."""
        if not isinstance(access_key_id, str) or not access_key_id:
            raise ValueError("access_key_id is required")
        with self.lock:
            issued = self.aws_credentials.get(access_key_id)
            if issued is None:
                raise LookupError(f"no AWS credentials with access key id {access_key_id!r}")
            return dict(issued)

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
