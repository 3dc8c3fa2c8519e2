"""The key's model and CTAP's numbers: the AAGUID, CTAPHID's framing, the
limits GetInfo promises, and the names the key logs its commands by."""
from fido2.ctap import CtapError
from fido2.ctap2 import Ctap2
from fido2.ctap2.pin import ClientPin, PinProtocolV1
from fido2.webauthn import Aaguid, AuthenticatorData

ERR = CtapError.ERR
FLAG = AuthenticatorData.FLAG

# The key's model: a made-up AAGUID, stable so tests can check it.
AAGUID = Aaguid.parse("5e7a1c0d-c06c-4ed0-9b1e-50f7a0e7c0de")

# CTAPHID framing (CTAP 2.0, 8.1.4): a 64-byte report; an initialization
# packet carries CID(4) CMD(1) BCNT(2) and 57 bytes of data, a continuation
# packet CID(4) SEQ(1) and 59; SEQ runs 0..127, so a message is at most
# 57 + 128 * 59 bytes.
PACKET = 64
INIT_DATA = PACKET - 7
CONT_DATA = PACKET - 5
MAX_MESSAGE = INIT_DATA + 128 * CONT_DATA
BROADCAST = 0xFFFFFFFF
TYPE_INIT = 0x80
KEEPALIVE_EVERY = 0.1
POLL = 0.02
BUSY_WAIT = 2.0  # how long a request waits for the operation of another session

MAX_MSG_SIZE = 1200  # what GetInfo promises for a CBOR request
PIN_RETRIES_MAX = 8
CREDENTIAL_ID_LENGTH = 32
NEXT_ASSERTION_WINDOW = 30  # seconds GetNextAssertion stays possible (CTAP 2.0)
PRESENCE_MODES = ("auto", "deny", "never", "wait")
SOCKET_NAME = "key.sock"
# sockaddr_un holds 108 bytes with the terminating NUL; leave some room.
MAX_SOCKET_PATH = 100

CLIENT_PIN_NAMES = {
    ClientPin.CMD.GET_PIN_RETRIES: "getRetries",
    ClientPin.CMD.GET_KEY_AGREEMENT: "getKeyAgreement",
    ClientPin.CMD.SET_PIN: "setPIN",
    ClientPin.CMD.CHANGE_PIN: "changePIN",
    ClientPin.CMD.GET_TOKEN_USING_PIN_LEGACY: "getPINToken",
}
COMMAND_NAMES = {
    Ctap2.CMD.GET_INFO: "GetInfo",
    Ctap2.CMD.MAKE_CREDENTIAL: "MakeCredential",
    Ctap2.CMD.GET_ASSERTION: "GetAssertion",
    Ctap2.CMD.GET_NEXT_ASSERTION: "GetNextAssertion",
    Ctap2.CMD.CLIENT_PIN: "ClientPIN",
    Ctap2.CMD.RESET: "Reset",
}
# GetInfo members a CTAP 2.0 key has: versions, extensions, aaguid, options,
# maxMsgSize, pinProtocols. python-fido2's Info fills in later ones with
# defaults; they are left out, as a 2.0 key would.
CTAP20_INFO_MEMBERS = (1, 2, 3, 4, 5, 6)

PIN = PinProtocolV1()  # AES-256-CBC with a zero IV, HMAC-SHA-256 cut to 16 bytes, SHA-256 KDF
