"""Refresh tokens and sign-out: GetTokensFromRefreshToken, RevokeToken,
GlobalSignOut.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import binascii
import json
import time

from .errors import CognitoError, moto_unimplemented, not_authorized
from .wire import b64url_decode


class RefreshAndSignOut:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

    # ------------------------------------------------------ refresh tokens and sign-out
    def get_tokens_from_refresh_token(self, req: dict) -> dict:
        if not self.config["get_tokens_from_refresh_token"]:
            raise moto_unimplemented()
        token = self._require(req, "RefreshToken", "ClientId")[0]
        self._check_client(req)
        self._check_client_secret(req.get("ClientSecret"), "NotAuthorizedException")
        record = self._refresh_record(token)
        self._check_refresh_device(record, req.get("DeviceKey"))
        self._check_refresh_alive(record)
        rotate = self.config["rotate_refresh_tokens"]
        if rotate:
            self._rotate_out(record)
        result = self._authentication_result(record["username"], record["auth_time"], refresh=rotate,
                                             family=record["family"], scope=record["scope"],
                                             id_token=record["id_token"], device_key=record.get("device_key"))
        return {"AuthenticationResult": result["AuthenticationResult"]}

    def revoke_token(self, req: dict) -> dict:
        if not self.config["revoke_token"]:
            raise moto_unimplemented()
        token = self._require(req, "Token", "ClientId")[0]
        self._check_client(req)
        # RevokeToken's documented errors have UnauthorizedException, not NotAuthorized.
        self._check_client_secret(req.get("ClientSecret"), "UnauthorizedException")
        record = self.refresh_tokens.get(token)
        if record is None:
            if self._is_jwt(token):  # an access or ID token: only refresh tokens can be revoked
                raise CognitoError("UnsupportedTokenTypeException", "Unsupported token type")
            return {}  # Cognito does not say whether it knew the token
        if record["client_id"] != self.config["client_id"]:
            raise CognitoError("UnsupportedTokenTypeException", "The token was issued to another client")
        self._revoke_family(record["family"])
        return {}

    def global_sign_out(self, req: dict) -> dict:
        access_token = self._require(req, "AccessToken")[0]
        self._sign_out(self._verify_access_token(access_token))
        return {}

    def _refresh_record(self, token: str) -> dict:
        record = self.refresh_tokens.get(token)
        if record is None or record["client_id"] != self.config["client_id"]:
            raise CognitoError("NotAuthorizedException", "Invalid Refresh Token")
        return record

    def _refresh_problem(self, record: dict):
        """Why a known refresh token no longer works, or None if it does."""
        if record["revoked"] or record["username"] not in self.users:
            return not_authorized("Refresh Token has been revoked")
        if time.time() >= record["expires_at"]:
            return not_authorized("Refresh Token has expired")
        rotated_at = record["rotated_at"]
        if rotated_at is not None and time.time() >= rotated_at + self.config["rotation_grace_seconds"]:
            if self.config["reuse_detection"]:
                return CognitoError("RefreshTokenReuseException", "Refresh token has already been used")
            return not_authorized("Refresh Token has been revoked")
        return None

    def _check_refresh_alive(self, record: dict) -> None:
        problem = self._refresh_problem(record)
        if problem is not None:
            raise problem

    @staticmethod
    def _rotate_out(record: dict) -> None:
        # The grace period runs from the first rotation: a retry inside it
        # gets tokens again but does not extend the old token's life.
        if record["rotated_at"] is None:
            record["rotated_at"] = time.time()

    def _revoke_family(self, family: str) -> None:
        for record in self.refresh_tokens.values():
            if record["family"] == family:
                record["revoked"] = True
        self.revoked_access.update(jti for jti, origin in self.access_tokens.items() if origin["family"] == family)

    def _sign_out(self, username: str) -> int:
        """GlobalSignOut: every refresh and access token of the user dies. The
        count is of refresh tokens that still worked."""
        revoked = 0
        for record in self.refresh_tokens.values():
            if record["username"] == username:
                revoked += self._refresh_problem(record) is None
                record["revoked"] = True
        self.revoked_access.update(jti for jti, origin in self.access_tokens.items()
                                   if origin["username"] == username)
        return revoked

    @staticmethod
    def _is_jwt(token: str) -> bool:
        parts = token.split(".")
        try:
            return len(parts) == 3 and isinstance(json.loads(b64url_decode(parts[0])), dict)
        except (ValueError, binascii.Error):
            return False
