"""Tokens: minting, signing and verifying the pool's JWTs.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import binascii
import copy
import hashlib
import json
import secrets
import time
import uuid

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding

from .constants import API_SCOPE, KID
from .errors import not_authorized
from .wire import b64url, b64url_decode


class Tokens:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

    # --------------------------------------------------------------- tokens
    def _authentication_result(self, username: str, auth_time, refresh: bool, family=None,
                               scope: str = API_SCOPE, id_token: bool = True, nonce=None,
                               oauth: bool = False, device_key=None) -> dict:
        """Tokens; a new sign-in (family None) starts a new token family.
        `scope` is what the access token grants (the API's sign-ins: API_SCOPE;
        managed login: what the authorize request was granted) and `id_token`
        whether the token endpoint hands out ID tokens for it (managed login:
        only with openid); a refresh token keeps both for its refreshes.
        `oauth`: for the token endpoint, whose ID tokens carry at_hash (and
        `nonce` when the authorize request had one). `device_key`: the device
        the sign-in is bound to (device tracking), kept by its refresh tokens
        and named in its access tokens' device_key claim, as Cognito's."""
        cfg, user = self.config, self.users[username]
        family = family or str(uuid.uuid4())
        iat = int(time.time()) + cfg["issued_at_offset"]
        auth_time = iat if auth_time is None else auth_time
        exp = iat + cfg["token_lifetime"]
        iss = self._issuer()
        access = {"sub": user["sub"], "iss": iss, "client_id": cfg["client_id"],
                  "token_use": "access", "scope": scope,
                  "auth_time": auth_time, "iat": iat, "exp": exp,
                  "jti": str(uuid.uuid4()), "username": username}
        if device_key is not None:
            access["device_key"] = device_key
        self.access_tokens[access["jti"]] = {"username": username, "family": family}
        id_claims = {"sub": user["sub"], "aud": cfg["client_id"], "iss": iss,
                     "token_use": "id", "cognito:username": username,
                     "auth_time": auth_time, "iat": iat, "exp": exp, "jti": str(uuid.uuid4())}
        if user["identities"] is not None:
            # A federated user: Cognito puts it in the group "<pool id>_<provider>".
            groups = [f"{cfg['pool_id']}_{identity['providerName']}" for identity in user["identities"]]
            access["cognito:groups"] = id_claims["cognito:groups"] = groups
            id_claims["identities"] = copy.deepcopy(user["identities"])
        if nonce is not None:
            id_claims["nonce"] = nonce
        # Attributes go into the ID token as Cognito does; they cannot clash
        # with the claims above (sign-up and the schema keep such names out).
        for name, value in user["attributes"].items():
            id_claims.setdefault(name, value)
        if "email" in user["attributes"]:
            # Real pools only carry email_verified alongside an email attribute.
            id_claims["email_verified"] = user["email_verified"]
        access_token = self._sign(access)
        if oauth:
            # OIDC's at_hash: the left half of SHA-256 over the access token, base64url.
            id_claims["at_hash"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest()[:16])
        result = {"AccessToken": access_token, "IdToken": self._sign(id_claims),
                  "ExpiresIn": cfg["token_lifetime"], "TokenType": "Bearer"}
        if refresh:
            token = f"{uuid.uuid4()}.{secrets.token_hex(32)}"
            self.refresh_tokens[token] = {"username": username, "client_id": cfg["client_id"],
                                          "auth_time": auth_time, "revoked": False,
                                          "family": family, "rotated_at": None,
                                          "scope": scope, "id_token": id_token, "device_key": device_key,
                                          # Lifetimes apply to tokens issued after a change, as in Cognito.
                                          "expires_at": time.time() + cfg["refresh_token_lifetime"]}
            result["RefreshToken"] = token
        return {"AuthenticationResult": result, "ChallengeParameters": {}}

    def _issuer(self) -> str:
        return f"{self.base_url}{self.config['pool_id']}"

    def _sign(self, claims: dict) -> str:
        header = {"alg": "RS256", "kid": KID, "typ": "JWT"}
        signing_input = ".".join(b64url(json.dumps(part, separators=(",", ":")).encode())
                                 for part in (header, claims))
        signature = self._key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{b64url(signature)}"

    def _verify_access_token(self, token: str, scope: str = None) -> str:
        """The canonical username of a live access token this pool issued;
        with `scope`, one that grants it (GetUser wants API_SCOPE: Cognito's
        "Access Token does not have required scopes")."""
        return self._verified_access_claims(token, scope)["username"]

    def _verified_access_claims(self, token: str, scope: str = None) -> dict:
        """The claims of a live access token this pool issued (checked as
        _verify_access_token says), for an action that needs more than the
        user: e.g. the app client it was issued to (client_id)."""
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
        if not isinstance(claims, dict) or claims.get("token_use") != "access" or claims.get("iss") != self._issuer():
            raise invalid  # an ID token, or one from another pool
        exp = claims.get("exp")
        if not isinstance(exp, int) or time.time() >= exp:
            raise not_authorized("Access Token has expired")
        username = claims.get("username")
        user = self.users.get(username)
        # A replaced user (new sub) is a deleted user: its tokens are dead too.
        if claims.get("jti") in self.revoked_access or user is None or user["sub"] != claims.get("sub"):
            raise not_authorized("Access Token has been revoked")
        if scope is not None and scope not in str(claims.get("scope", "")).split():
            raise not_authorized("Access Token does not have required scopes")
        return claims
