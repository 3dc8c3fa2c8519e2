"""The CTAP2 commands a login needs (CTAP 2.0, section 5): GetInfo,
MakeCredential, GetAssertion, GetNextAssertion and Reset; a mixin of
SoftAuthenticator's, as the double's parts are of CognitoDouble's."""
import time

from fido2.cose import ES256
from fido2.ctap import CtapError
from fido2.ctap2 import Info
from fido2.ctap2.pin import PinProtocolV1
from fido2.utils import sha256
from fido2.webauthn import AuthenticatorData

from .constants import AAGUID, CTAP20_INFO_MEMBERS, ERR, FLAG, MAX_MSG_SIZE, NEXT_ASSERTION_WINDOW, PIN_RETRIES_MAX
from .credential import Credential, NextAssertions
from .parameters import descriptor_ids, options_in, param


class Ctap2Commands:
    """SoftAuthenticator's CTAP2 commands; each takes the session, the channel
    and the request's parameters, and returns the answer's CBOR map (or None)."""

    def _get_info(self, session, cid, params):
        options = {"rk": True, "up": True, "plat": False, "clientPin": self.pin_is_set}
        if self.builtin_uv:
            options["uv"] = True
        info = Info(versions=["FIDO_2_0"], aaguid=AAGUID, options=options, max_msg_size=MAX_MSG_SIZE,
                    pin_uv_protocols=[PinProtocolV1.VERSION])
        return {k: v for k, v in info.items() if k in CTAP20_INFO_MEMBERS and v != []}

    def _make_credential(self, session, cid, params):
        client_data_hash = param(params, 1, bytes, required=True)
        rp = param(params, 2, dict, required=True)
        user = param(params, 3, dict, required=True)
        algorithms = param(params, 4, list, required=True)
        exclude = descriptor_ids(param(params, 5, list) or [])
        options = options_in(params, 7)
        pin_auth = param(params, 8, bytes)
        pin_protocol = param(params, 9, int)
        rp_id, user_id = rp.get("id"), user.get("id")
        if not isinstance(rp_id, str) or not isinstance(user_id, bytes):
            raise CtapError(ERR.MISSING_PARAMETER if rp_id is None or user_id is None else ERR.CBOR_UNEXPECTED_TYPE)
        if pin_auth == b"":
            self._touch_probe(session, cid)
        # 1. A credential on the exclude list: refused, but only after a touch,
        # so a page cannot learn silently which keys a user has.
        if any(self._find(rp_id, credential_id) for credential_id in exclude):
            session.wait_for_presence(cid)
            raise CtapError(ERR.CREDENTIAL_EXCLUDED)
        # 2. ES256 only.
        if not any(isinstance(p, dict) and p.get("type") == "public-key" and p.get("alg") == ES256.ALGORITHM
                   for p in algorithms):
            raise CtapError(ERR.UNSUPPORTED_ALGORITHM)
        # 3. Options.
        uv = options.get("uv", False)
        if uv and not self.builtin_uv:
            raise CtapError(ERR.UNSUPPORTED_OPTION)
        if options.get("up") is False:
            raise CtapError(ERR.INVALID_OPTION)
        # 5-7. The PIN: a pinAuth proves it; without one, a key with a PIN makes
        # no credential (CTAP 2.0 step 6: CTAP2_ERR_PIN_REQUIRED, 0x36).
        verified = self._check_pin_auth(pin_auth, pin_protocol, client_data_hash)
        if not verified and self.pin_is_set and not uv:
            raise CtapError(ERR.PUAT_REQUIRED)
        session.wait_for_presence(cid)
        credential = Credential.new(rp_id, user_id, user.get("name"), user.get("displayName"),
                                    resident=options.get("rk", False))
        self._store(credential)
        flags = FLAG.UP | FLAG.AT | (FLAG.UV if verified or uv else 0)
        auth_data = AuthenticatorData.create(sha256(rp_id.encode()), flags, credential.sign_count,
                                             credential.credential_data)
        # "packed" self attestation: signed by the credential's own key, no x5c.
        statement = {"alg": ES256.ALGORITHM, "sig": credential.sign(auth_data + client_data_hash)}
        return {1: "packed", 2: auth_data, 3: statement}

    def _get_assertion(self, session, cid, params):
        rp_id = param(params, 1, str, required=True)
        client_data_hash = param(params, 2, bytes, required=True)
        allow = param(params, 3, list)
        options = options_in(params, 5)
        pin_auth = param(params, 6, bytes)
        pin_protocol = param(params, 7, int)
        if pin_auth == b"":
            self._touch_probe(session, cid)
        # 1. The credentials: those allowed, or with no allowList the resident
        # ones for the RP, newest first.
        if allow:
            found = [self._find(rp_id, credential_id) for credential_id in descriptor_ids(allow)]
            credentials = list(dict.fromkeys(c for c in found if c is not None))
        else:
            credentials = [c for c in reversed(self._credentials) if c.resident and c.rp_id == rp_id]
        # 3. Options: up (default true) and uv.
        up, uv = options.get("up", True), options.get("uv", False)
        if uv and not self.builtin_uv:
            raise CtapError(ERR.UNSUPPORTED_OPTION)
        # 5-7. A pinAuth proves the PIN; without one, the assertion comes with UV off.
        verified = self._check_pin_auth(pin_auth, pin_protocol, client_data_hash)
        # 6. The touch comes before saying whether there are credentials.
        if up or uv:
            session.wait_for_presence(cid)
        if not credentials:
            raise CtapError(ERR.NO_CREDENTIALS)
        flags = (FLAG.UP if up else 0) | (FLAG.UV if verified or uv else 0)
        several = not allow and len(credentials) > 1
        answer = self._assertion(credentials[0], rp_id, client_data_hash, flags, several)
        if several:
            answer[5] = len(credentials)
            self._next = NextAssertions(session, rp_id, client_data_hash, flags, credentials[1:],
                                         time.monotonic() + NEXT_ASSERTION_WINDOW)
        return answer

    def _get_next_assertion(self, session, cid, params):
        state = self._next
        if state is None or state.session is not session or not state.remaining \
                or time.monotonic() > state.deadline:
            self._next = None
            raise CtapError(ERR.NOT_ALLOWED)
        credential = state.remaining.pop(0)
        return self._assertion(credential, state.rp_id, state.client_data_hash, state.flags, several=True)

    def _assertion(self, credential, rp_id, client_data_hash, flags, several):
        credential.sign_count += 1
        auth_data = AuthenticatorData.create(sha256(rp_id.encode()), flags, credential.sign_count)
        answer = {
            1: {"type": "public-key", "id": credential.credential_id},
            2: auth_data,
            3: credential.sign(auth_data + client_data_hash),
        }
        if credential.resident:
            # The user handle; names only when the user was verified and the
            # platform has to choose among several accounts (CTAP 2.0, 5.2).
            user = {"id": credential.user_id}
            if several and flags & FLAG.UV:
                user.update({k: v for k, v in (("name", credential.user_name),
                                               ("displayName", credential.display_name)) if v is not None})
            answer[4] = user
        return answer

    def _reset(self, session, cid, params):
        session.wait_for_presence(cid)
        self._credentials.clear()
        self._pin_hash = None
        self.pin_retries = PIN_RETRIES_MAX
        self.power_cycle()
        return None
