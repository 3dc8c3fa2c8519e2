"""Passkeys (WebAuthn): StartWebAuthnRegistration, CompleteWebAuthnRegistration,
ListWebAuthnCredentials, DeleteWebAuthnCredential, and USER_AUTH's WEB_AUTHN
challenge.

Both ceremonies are verified by python-fido2's Fido2Server, not by hand: the
double finds the challenge, checks the JSON's shape, names each refusal as
Cognito does, and keeps the credentials.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import binascii
import json
import secrets
import time
import uuid
from urllib.parse import urlsplit

from fido2.attestation import NoneAttestation, PackedAttestation
from fido2.attestation.base import InvalidAttestation
from fido2.server import Fido2Server
from fido2.webauthn import AttestedCredentialData, AuthenticationResponse, RegistrationResponse

from .constants import (API_SCOPE, BASE64URL_PATTERN, WEBAUTHN_AAGUID_NAMES, WEBAUTHN_ALGORITHMS,
                        WEBAUTHN_DEFAULT_NAME, WEBAUTHN_PAGE_DEFAULT, WEBAUTHN_PAGE_MAX,
                        WEBAUTHN_REGISTRATION_TIMEOUT_MS)
from .errors import CognitoError, incorrect, invalid_parameter
from .wire import b64url, b64url_decode, epoch_millis

# The attestation statements the double checks, with python-fido2's own
# verifiers. Cognito's options ask for no attestation, so a browser sends
# "none"; a native client (libfido2) passes on the key's "packed" statement.
# Any other format comes from an authenticator that cannot make a passkey
# (fido-u2f: no resident keys) or a platform that a browser would have
# stripped to "none": refused as unsupported (the stricter reading).
ATTESTATION_VERIFIERS = {"none": NoneAttestation, "packed": PackedAttestation}

# Fido2Server says why it refused a registration only in a ValueError's words
# (python-fido2 2.x, fido2/server.py): the start of each, and what Cognito
# calls that refusal. Words not listed: InvalidParameterException.
REGISTRATION_REFUSALS = (
    ("Incorrect type", "InvalidParameterException",
     "The passkey credential is not a registration (clientDataJSON type must be webauthn.create)."),
    ("Invalid origin", "WebAuthnOriginNotAllowedException",
     "The passkey credential's origin is not allowed for this user pool's relying party."),
    # Not reached while the double looks the challenge up first; kept so a change there stays named.
    ("Wrong challenge", "WebAuthnChallengeNotFoundException", "The WebAuthn challenge was not found."),
    ("Wrong RP ID hash", "WebAuthnRelyingPartyMismatchException",
     "The passkey credential is for another relying party than this user pool's."),
    ("User Present flag", "InvalidParameterException",
     "The passkey credential is not valid: the user was not present."),
    # Under UserVerification "required" an authenticator that did not verify
    # the user is one this pool cannot take.
    ("User verification required", "WebAuthnCredentialNotSupportedException",
     "The passkey credential is not supported: this user pool requires user verification."),
)


def _verify_attestation(attestation_object, client_data_hash: bytes) -> None:
    """Fido2Server's verify_attestation hook. No trust path is checked: with
    no attestation asked for, any authenticator may register."""
    fmt = attestation_object.fmt
    verifier = ATTESTATION_VERIFIERS.get(fmt)
    if verifier is None:
        raise CognitoError("WebAuthnCredentialNotSupportedException",
                           "The passkey credential is not supported.", detail=f"attestation format {fmt!r}")
    try:
        verifier().verify(attestation_object.att_stmt, attestation_object.auth_data, client_data_hash)
    except InvalidAttestation as err:
        raise CognitoError("InvalidParameterException", "The passkey credential's attestation is not valid.",
                           detail=f"{fmt} attestation: {type(err).__name__} {err}") from None


class Passkeys:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

    # ------------------------------------------------------ passkeys (WebAuthn)
    # A passkey belongs to the user as it was (its sub), as a device does:
    # replacing a user leaves its passkeys behind.
    def _webauthn_rp_id(self) -> str:
        configured = self.config["webauthn_rp_id"]
        if configured is not None:
            return configured
        # Cognito's default is the pool's domain, and the double is its own
        # managed login domain: the host of its base URL.
        return urlsplit(self.base_url).hostname or "localhost"

    @staticmethod
    def _fido2_server(rp_id: str) -> Fido2Server:
        """The verifier of one ceremony: the origin must be exactly
        https://<rp id> (Fido2Server's default would also take a subdomain, and
        http://localhost), and attestation is checked (verify_attestation runs
        only when the server asks for some)."""
        origin = "https://" + rp_id
        return Fido2Server({"id": rp_id, "name": rp_id}, attestation="direct",
                           verify_origin=lambda given: given == origin, verify_attestation=_verify_attestation)

    def _check_webauthn_enabled(self) -> None:
        if "WEB_AUTHN" not in self.config["allowed_first_auth_factors"]:
            raise CognitoError("WebAuthnNotEnabledException", "Passkeys are not enabled for this user pool.")
        if not self.config["webauthn_configured"]:
            raise CognitoError("WebAuthnConfigurationMissingException",
                               "The user pool has no WebAuthn relying party id and no domain.")

    def _passkeys_of(self, username: str) -> list:
        """(credential id, record) of the user's passkeys, oldest first."""
        sub = self.users[username]["sub"]
        return [(cid, record) for cid, record in self.passkeys.items()
                if record["username"] == username and record["sub"] == sub]

    def _user_handle(self, username: str) -> bytes:
        # Stable for the user, and no personal data (WebAuthn's advice): its sub.
        return self.users[username]["sub"].encode("utf-8")

    def _offers_passkey(self, username: str) -> bool:
        """Whether USER_AUTH offers this user WEB_AUTHN: a registered passkey, or
        the admin flag "passkey" (one on another device, which nothing here can use)."""
        user = self.users[username]
        return self.config["webauthn_configured"] and (user["passkey"] or bool(self._passkeys_of(username)))

    @staticmethod
    def _check_credential_json(credential, members: tuple) -> None:
        """The W3C JSON form of a credential (RegistrationResponseJSON or
        AuthenticationResponseJSON): `members` of its response are required;
        every binary value is base64url without padding."""
        def binary(value, name, required=True):
            if value is None and not required:
                return
            if not isinstance(value, str) or (required and not value) or not BASE64URL_PATTERN.fullmatch(value):
                raise invalid_parameter(f"The passkey credential's {name} must be base64url without padding")

        if not isinstance(credential, dict):
            raise invalid_parameter("The passkey credential must be a JSON object")
        if credential.get("type") != "public-key":
            raise invalid_parameter("The passkey credential's type must be public-key")
        binary(credential.get("id"), "id")
        binary(credential.get("rawId"), "rawId")
        if credential["id"] != credential["rawId"]:
            raise invalid_parameter("The passkey credential's id and rawId differ")
        response = credential.get("response")
        if not isinstance(response, dict):
            raise invalid_parameter("The passkey credential has no response")
        for name in members:
            binary(response.get(name), f"response.{name}")
        binary(response.get("userHandle"), "response.userHandle", required=False)
        transports = response.get("transports")
        if transports is not None and not (isinstance(transports, list)
                                           and all(isinstance(t, str) and t for t in transports)):
            raise invalid_parameter("The passkey credential's response.transports must be a list of strings")
        attachment = credential.get("authenticatorAttachment")
        if attachment is not None and attachment not in ("platform", "cross-platform"):
            raise invalid_parameter("The passkey credential's authenticatorAttachment must be platform "
                                    "or cross-platform")
        if not isinstance(credential.get("clientExtensionResults", {}), dict):
            raise invalid_parameter("The passkey credential's clientExtensionResults must be an object")

    @staticmethod
    def _client_data_challenge(credential: dict) -> str:
        """The challenge clientDataJSON names, as sent: a client must echo the
        options' string unchanged (one re-encoded is another string)."""
        try:
            client_data = json.loads(b64url_decode(credential["response"]["clientDataJSON"]))
        except (ValueError, binascii.Error):
            client_data = None
        if not isinstance(client_data, dict) or not isinstance(client_data.get("challenge"), str):
            raise invalid_parameter("The passkey credential's clientDataJSON is not client data JSON")
        return client_data["challenge"]

    # --- registration
    def start_web_authn_registration(self, req: dict) -> dict:
        claims = self._verified_access_claims(self._require(req, "AccessToken")[0], scope=API_SCOPE)
        username = claims["username"]
        self._check_webauthn_enabled()
        rp_id, verification = self._webauthn_rp_id(), self.config["webauthn_user_verification"]
        challenge = b64url(secrets.token_bytes(32))
        # Kept with what Complete must match: the user, the app client, and
        # the RP id and user verification these options promised.
        self.registration_challenges[challenge] = {
            "username": username, "sub": self.users[username]["sub"], "client_id": claims.get("client_id"),
            "rp_id": rp_id, "user_verification": verification, "used": False,
            "expires_at": time.time() + self.config["webauthn_registration_lifetime"]}
        return {"CredentialCreationOptions": {
            "rp": {"id": rp_id, "name": rp_id},
            "user": {"id": b64url(self._user_handle(username)), "name": username, "displayName": username},
            "challenge": challenge,
            "pubKeyCredParams": [{"type": "public-key", "alg": alg} for alg in WEBAUTHN_ALGORITHMS],
            "timeout": WEBAUTHN_REGISTRATION_TIMEOUT_MS,
            "excludeCredentials": [{"type": "public-key", "id": cid} for cid, _ in self._passkeys_of(username)],
            "authenticatorSelection": {"requireResidentKey": True, "residentKey": "required",
                                       "userVerification": verification}}}

    def complete_web_authn_registration(self, req: dict) -> dict:
        claims = self._verified_access_claims(self._require(req, "AccessToken")[0], scope=API_SCOPE)
        username = claims["username"]
        self._check_webauthn_enabled()
        credential = req.get("Credential")
        if credential is None:
            raise invalid_parameter("1 validation error detected: Value null at 'credential' failed to satisfy "
                                    "constraint: Member must not be null")
        if not isinstance(credential, dict):
            # A Document may be any JSON; a stringified credential is a client bug worth naming.
            raise invalid_parameter("Credential must be a JSON object (a RegistrationResponseJSON), not "
                                    f"{type(credential).__name__}")
        self._check_credential_json(credential, ("clientDataJSON", "attestationObject"))
        challenge = self._client_data_challenge(credential)
        issued = self.registration_challenges.get(challenge)
        why = None
        if issued is None:
            why = "no StartWebAuthnRegistration issued this challenge"
        elif issued["username"] != username or issued["sub"] != self.users[username]["sub"]:
            why = "the challenge was issued to another user"  # not spent: it is that user's
        elif issued["used"]:
            why = "the challenge has been used"
        elif time.time() >= issued["expires_at"]:
            why = "the challenge has expired (config webauthn_registration_lifetime)"
        if why is not None:
            raise CognitoError("WebAuthnChallengeNotFoundException", "The WebAuthn challenge was not found.",
                               detail=why)
        issued["used"] = True  # one answer, right or wrong, as a challenge Session
        if claims.get("client_id") != issued["client_id"]:
            raise CognitoError("WebAuthnClientMismatchException",
                               "The access token is for another app client than StartWebAuthnRegistration's.")
        try:
            response = RegistrationResponse.from_dict(credential)
        except Exception as err:  # noqa: BLE001 - any failure to read it (CBOR, COSE, lengths) is a bad credential
            raise CognitoError("InvalidParameterException", "The passkey credential is not valid.",
                               detail=f"RegistrationResponse: {type(err).__name__} {err}") from None
        state = {"challenge": challenge, "user_verification": issued["user_verification"]}
        try:
            auth_data = self._fido2_server(issued["rp_id"]).register_complete(state, response)
        except ValueError as err:
            raise self._registration_refusal(str(err)) from None
        attested = auth_data.credential_data
        if attested.credential_id != response.raw_id:
            raise CognitoError("InvalidParameterException", "The passkey credential is not valid.",
                               detail="rawId is not the credential id in attestationObject")
        algorithm = attested.public_key.get(3)
        if algorithm not in WEBAUTHN_ALGORITHMS:
            raise CognitoError("WebAuthnCredentialNotSupportedException", "The passkey credential is not supported.",
                               detail=f"COSE algorithm {algorithm} is not one of pubKeyCredParams")
        credential_id = b64url(attested.credential_id)
        if credential_id in self.passkeys:
            raise invalid_parameter("This passkey credential is already registered.")
        aaguid = str(uuid.UUID(bytes=bytes(attested.aaguid)))
        self.passkeys[credential_id] = {
            "username": username, "sub": self.users[username]["sub"],
            "credential_data": bytes(attested),   # AAGUID, id and COSE public key, for Fido2Server
            "aaguid": aaguid, "algorithm": algorithm,
            "name": WEBAUTHN_AAGUID_NAMES.get(aaguid, WEBAUTHN_DEFAULT_NAME),
            "rp_id": issued["rp_id"], "attachment": credential.get("authenticatorAttachment"),
            "transports": list(credential["response"].get("transports") or []),
            "sign_count": auth_data.counter, "created": time.time(), "last_used": None}
        return {}

    @staticmethod
    def _registration_refusal(why: str) -> CognitoError:
        for words, code, message in REGISTRATION_REFUSALS:
            if why.startswith(words):
                return CognitoError(code, message, detail=f"Fido2Server: {why}")
        return CognitoError("InvalidParameterException", "The passkey credential is not valid.",
                            detail=f"Fido2Server: {why}")

    # --- a user's passkeys
    def list_web_authn_credentials(self, req: dict) -> dict:
        username = self._verify_access_token(self._require(req, "AccessToken")[0], scope=API_SCOPE)
        limit = req.get("MaxResults", WEBAUTHN_PAGE_DEFAULT)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= WEBAUTHN_PAGE_MAX:
            raise invalid_parameter(f"MaxResults must be a number from 1 to {WEBAUTHN_PAGE_MAX}")
        offset, token, sub = 0, req.get("NextToken"), self.users[username]["sub"]
        if token is not None:
            page = self.passkey_pages.get(token) if isinstance(token, str) else None
            if page is None or page["username"] != username or page["sub"] != sub:
                raise invalid_parameter("Invalid NextToken.")
            offset = page["offset"]
        passkeys = self._passkeys_of(username)
        answer = {"Credentials": [self._credential_description(cid, record)
                                  for cid, record in passkeys[offset:offset + limit]]}
        if offset + limit < len(passkeys):
            token = b64url(secrets.token_bytes(48))
            self.passkey_pages[token] = {"username": username, "sub": sub, "offset": offset + limit}
            answer["NextToken"] = token
        return answer

    @staticmethod
    def _credential_description(credential_id: str, record: dict) -> dict:
        """A WebAuthnCredentialDescription as ListWebAuthnCredentials answers it."""
        description = {"CredentialId": credential_id, "FriendlyCredentialName": record["name"],
                       "RelyingPartyId": record["rp_id"], "AuthenticatorTransports": list(record["transports"]),
                       "CreatedAt": epoch_millis(record["created"])}
        if record["attachment"] is not None:  # optional in the API: left out when the client did not say
            description["AuthenticatorAttachment"] = record["attachment"]
        return description

    def delete_web_authn_credential(self, req: dict) -> dict:
        access_token, credential_id = self._require(req, "AccessToken", "CredentialId")
        username = self._verify_access_token(access_token, scope=API_SCOPE)
        if credential_id not in dict(self._passkeys_of(username)):
            raise CognitoError("ResourceNotFoundException", "Credential not found.",
                               detail="no passkey of this user has that CredentialId")
        del self.passkeys[credential_id]
        return {}

    # --- sign-in (USER_AUTH's WEB_AUTHN)
    def _web_authn_challenge(self, username: str, device_key=None) -> dict:
        """The WEB_AUTHN challenge: CREDENTIAL_REQUEST_OPTIONS, a JSON string,
        allowing the user's passkeys; the challenge lives in the Session."""
        rp_id, verification = self._webauthn_rp_id(), self.config["webauthn_user_verification"]
        challenge = b64url(secrets.token_bytes(32))
        allowed = []
        for credential_id, record in self._passkeys_of(username):
            descriptor = {"type": "public-key", "id": credential_id}
            if record["transports"]:
                descriptor["transports"] = list(record["transports"])
            allowed.append(descriptor)
        options = {"challenge": challenge, "rpId": rp_id, "timeout": self.config["session_lifetime"] * 1000,
                   "allowCredentials": allowed, "userVerification": verification}
        return self._challenge(username, "WEB_AUTHN",
                               {"CREDENTIAL_REQUEST_OPTIONS": json.dumps(options, separators=(",", ":"))},
                               webauthn_challenge=challenge, rp_id=rp_id, user_verification=verification,
                               allowed=[d["id"] for d in allowed], device_key=device_key)

    def _answer_web_authn(self, state: dict, responses: dict) -> dict:
        """The assertion: Fido2Server checks type, origin, challenge, RP id
        hash, UP, UV and the signature; the double that the passkey is the
        user's and was allowed, the userHandle, and the sign count."""
        username = state["username"]
        device_key = self._session_device_key(state, responses)
        try:
            credential = json.loads(responses["CREDENTIAL"])
        except ValueError:
            raise invalid_parameter("CREDENTIAL must be an AuthenticationResponseJSON, as a JSON string") from None
        self._check_credential_json(credential, ("clientDataJSON", "authenticatorData", "signature"))
        record = dict(self._passkeys_of(username)).get(credential["rawId"])
        if record is None or credential["rawId"] not in state["allowed"]:
            raise incorrect("the credential is not a passkey of this user that CREDENTIAL_REQUEST_OPTIONS allowed "
                            "(another user's, deleted, or registered after the challenge)")
        try:
            response = AuthenticationResponse.from_dict(credential)
        except Exception as err:  # noqa: BLE001 - any failure to read it is a bad credential
            raise CognitoError("InvalidParameterException", "The passkey credential is not valid.",
                               detail=f"AuthenticationResponse: {type(err).__name__} {err}") from None
        fido_state = {"challenge": state["webauthn_challenge"], "user_verification": state["user_verification"]}
        try:
            self._fido2_server(state["rp_id"]).authenticate_complete(
                fido_state, [AttestedCredentialData(record["credential_data"])], response)
        except ValueError as err:
            raise incorrect(f"Fido2Server: {err}") from None
        handle = response.response.user_handle
        if handle and handle != self._user_handle(username):
            raise incorrect("userHandle is not this user's user.id")
        count = response.response.authenticator_data.counter
        # A counter that does not move forward means two authenticators hold
        # the key (W3C WebAuthn 7.2, step 21); both zero: it keeps no counter.
        if (count or record["sign_count"]) and count <= record["sign_count"]:
            raise incorrect(f"sign count {count} is not above {record['sign_count']}: a cloned authenticator?")
        record.update(sign_count=count, last_used=time.time())
        return self._sign_in_tokens(username, device_key)
