"""ClientPIN with PIN protocol 1 (CTAP 2.0, section 5.5): getRetries,
getKeyAgreement, setPIN, changePIN, getPINToken, the PIN's retries and
blocks, and the pinAuth the other commands carry; a mixin of SoftAuthenticator's."""
import hmac

from cryptography.hazmat.primitives.asymmetric import ec

from fido2.cose import ES256
from fido2.ctap import CtapError
from fido2.ctap2.pin import ClientPin, PinProtocolV1
from fido2.utils import bytes2int, sha256

from .constants import ERR, PIN, PIN_RETRIES_MAX
from .parameters import param


class ClientPinCommands:
    """SoftAuthenticator's ClientPIN subcommands and PIN checks."""

    def _client_pin(self, session, cid, params):
        protocol = param(params, 1, int, required=True)
        sub = param(params, 2, int, required=True)
        if protocol != PinProtocolV1.VERSION:
            raise CtapError(ERR.INVALID_PARAMETER)
        if sub == ClientPin.CMD.GET_PIN_RETRIES:
            return {ClientPin.RESULT.PIN_RETRIES: self.pin_retries}
        if sub == ClientPin.CMD.GET_KEY_AGREEMENT:
            key = dict(ES256.from_cryptography_key(self._key_agreement.public_key()))
            key[3] = -25  # ECDH-ES+HKDF-256, as the spec says, though that is not what is done
            return {ClientPin.RESULT.KEY_AGREEMENT: key}
        if sub == ClientPin.CMD.SET_PIN:
            return self._set_pin(params)
        if sub == ClientPin.CMD.CHANGE_PIN:
            return self._change_pin(params)
        if sub == ClientPin.CMD.GET_TOKEN_USING_PIN_LEGACY:
            return self._get_pin_token(params)
        raise CtapError(ERR.INVALID_SUBCOMMAND)

    def _set_pin(self, params):
        pin_auth = param(params, 4, bytes, required=True)
        new_pin_enc = param(params, 5, bytes, required=True)
        if self.pin_is_set:
            raise CtapError(ERR.PIN_AUTH_INVALID)  # CTAP 2.0: a PIN is changed, not set again
        shared = self._shared_secret(params)
        if not hmac.compare_digest(pin_auth, PIN.authenticate(shared, new_pin_enc)):
            raise CtapError(ERR.PIN_AUTH_INVALID)
        self._pin_hash = sha256(self._new_pin(shared, new_pin_enc))[:16]
        self.pin_retries = PIN_RETRIES_MAX
        self._pin_failures = 0
        return None

    def _change_pin(self, params):
        pin_auth = param(params, 4, bytes, required=True)
        new_pin_enc = param(params, 5, bytes, required=True)
        pin_hash_enc = param(params, 6, bytes, required=True)
        self._pin_usable()
        shared = self._shared_secret(params)
        if not hmac.compare_digest(pin_auth, PIN.authenticate(shared, new_pin_enc + pin_hash_enc)):
            raise CtapError(ERR.PIN_AUTH_INVALID)
        self._check_pin_hash(shared, pin_hash_enc)
        self._pin_hash = sha256(self._new_pin(shared, new_pin_enc))[:16]
        return None

    def _get_pin_token(self, params):
        pin_hash_enc = param(params, 6, bytes, required=True)
        self._pin_usable()
        shared = self._shared_secret(params)
        self._check_pin_hash(shared, pin_hash_enc)
        return {ClientPin.RESULT.PIN_UV_TOKEN: PIN.encrypt(shared, self._pin_token)}

    def _pin_usable(self):
        if not self.pin_is_set:
            raise CtapError(ERR.PIN_NOT_SET)
        if self.pin_retries <= 0:
            raise CtapError(ERR.PIN_BLOCKED)
        if self._pin_failures >= 3:
            raise CtapError(ERR.PIN_AUTH_BLOCKED)

    def _check_pin_hash(self, shared, pin_hash_enc):
        """The PIN check of CTAP 2.0 (5.5.5): a try is counted before it is
        judged; a wrong one also changes the key-agreement key."""
        if len(pin_hash_enc) != 16:
            raise CtapError(ERR.INVALID_PARAMETER)
        self.pin_retries -= 1
        if not hmac.compare_digest(PIN.decrypt(shared, pin_hash_enc), self._pin_hash):
            self._key_agreement = ec.generate_private_key(ec.SECP256R1())
            self._pin_failures += 1
            if self.pin_retries <= 0:
                raise CtapError(ERR.PIN_BLOCKED)
            if self._pin_failures >= 3:
                raise CtapError(ERR.PIN_AUTH_BLOCKED)
            raise CtapError(ERR.PIN_INVALID)
        self.pin_retries = PIN_RETRIES_MAX
        self._pin_failures = 0

    def _shared_secret(self, params):
        """SHA-256 of the ECDH x-coordinate with the platform's key (PIN protocol 1)."""
        peer = param(params, 3, dict, required=True)
        try:
            if peer[1] != 2 or peer[-1] != 1:
                raise ValueError("not an EC2 P-256 key")
            numbers = ec.EllipticCurvePublicNumbers(bytes2int(peer[-2]), bytes2int(peer[-3]), ec.SECP256R1())
            public_key = numbers.public_key()
        except (KeyError, TypeError, ValueError):
            raise CtapError(ERR.INVALID_PARAMETER)
        return PIN.kdf(self._key_agreement.exchange(ec.ECDH(), public_key))

    @staticmethod
    def _new_pin(shared, new_pin_enc):
        if len(new_pin_enc) < 64 or len(new_pin_enc) % 16:
            raise CtapError(ERR.INVALID_PARAMETER)
        pin = PIN.decrypt(shared, new_pin_enc).rstrip(b"\0")
        if not 4 <= len(pin) <= 63:
            raise CtapError(ERR.PIN_POLICY_VIOLATION)
        return pin

    def _check_pin_auth(self, pin_auth, pin_protocol, client_data_hash):
        """True when a pinAuth came and proves the PIN; False when none came."""
        if pin_auth is None:
            return False
        if pin_protocol != PinProtocolV1.VERSION:
            raise CtapError(ERR.PIN_AUTH_INVALID)
        if not self.pin_is_set:
            raise CtapError(ERR.PIN_NOT_SET)
        if not hmac.compare_digest(pin_auth, PIN.authenticate(self._pin_token, client_data_hash)):
            raise CtapError(ERR.PIN_AUTH_INVALID)
        return True

    def _touch_probe(self, session, cid):
        """A zero-length pinAuth: "which key did the user touch?" (libfido2's
        fido_dev_get_touch_begin, python-fido2's selection). After the touch,
        PIN_NOT_SET or PIN_INVALID, which tell the platform the PIN state."""
        session.wait_for_presence(cid)
        raise CtapError(ERR.PIN_INVALID if self.pin_is_set else ERR.PIN_NOT_SET)
