"""Checks of the software security key (the soft_authenticator package), so the end-to-end tests can trust it.

The key is driven only by clients that know nothing of it:

- python-fido2's own CTAP stack: its CTAPHID framing (CtapHidDevice, over a
  connection object that carries its 64-byte reports on the key's UNIX
  socket), Ctap2, ClientPin with PIN protocol 1, and Fido2Client; what comes
  back is verified by its Fido2Server, the relying party's side, with the
  "packed" attestation checked;
- libfido2 1.12 itself, through ctypes, with the io-function hooks cog-cred
  uses (fido_dev_set_io_functions and a `unix:` path), so the requests it
  really sends (its GetInfo at open, getKeyAgreement + getPINToken for a
  PIN, a "uv" option only without one, CANCEL from another thread) are met
  here first, not in a failing end-to-end test;
- for the framing's error paths, a few hand-made packets.

They need no cog-cred binary and run in seconds. Waits for a touch are
watched through the key's `waiting_for_touch` event, never by sleeping.
"""
import ctypes
import os
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest
from fido2 import cbor
from fido2.attestation import AttestationType, PackedAttestation
from fido2.client import ClientError, DefaultClientDataCollector, Fido2Client, UserInteraction
from fido2.ctap import STATUS, CtapError
from fido2.ctap2 import Ctap2
from fido2.ctap2.pin import ClientPin, PinProtocolV1
from fido2.hid import CTAPHID, CtapHidDevice
from fido2.hid.base import CtapHidConnection, HidDescriptor
from fido2.server import Fido2Server
from fido2.utils import sha256
from fido2.webauthn import (AttestationConveyancePreference, AuthenticatorData, ResidentKeyRequirement,
                            UserVerificationRequirement)

from soft_authenticator import AAGUID, SoftAuthenticator

ERR = CtapError.ERR
RP = {"id": "example.com", "name": "Example"}
ORIGIN = "https://example.com"
PIN = "1234"
ES256_ONLY = [{"type": "public-key", "alg": -7}]
WAIT = 10  # seconds: only ever reached when something is broken


# --- the key, and python-fido2 on its socket ------------------------------------------

@pytest.fixture
def make_key(tmp_path):
    """Starts keys with the given options; stops them after the test, which fails
    if the key met anything it did not expect (a traceback in key.errors)."""
    keys = []

    def make(**options):
        key = SoftAuthenticator(tmp_path, **options).start()
        keys.append(key)
        return key

    yield make
    for key in keys:
        key.stop()
    assert [error for key in keys for error in key.errors] == []


@pytest.fixture
def key(make_key):
    return make_key()


class SocketConnection(CtapHidConnection):
    """python-fido2's HID connection, carried on the key's socket: one report,
    64 bytes with no report ID, per write or read. Counts both, for the
    framing checks.

    A broken key fails the test instead of hanging it: reads time out, and so
    does a wait of more than WAIT seconds since the last request, however many
    KEEPALIVEs come meanwhile (python-fido2 would wait through them forever)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(WAIT)
        self.sock.connect(path)
        self.written = self.read = 0
        self.last_write = time.monotonic()

    def write_packet(self, data):
        assert len(data) == 64
        self.sock.sendall(data)
        self.written += 1
        self.last_write = time.monotonic()

    def read_packet(self):
        if time.monotonic() - self.last_write > WAIT:
            raise TimeoutError(f"no answer {WAIT} s after the request")
        data = b""
        while len(data) < 64:
            chunk = self.sock.recv(64 - len(data))
            if not chunk:
                raise ConnectionError("the key closed the connection")
            data += chunk
        self.read += 1
        return data

    def close(self):
        self.sock.close()


def hid(key):
    """A python-fido2 HID device on the key (it sends CTAPHID_INIT at once)."""
    descriptor = HidDescriptor(key.path, 0, 0, 64, 64, "soft key", None)
    return CtapHidDevice(descriptor, SocketConnection(key.path))


def ctap(key):
    """python-fido2's CTAP2 client on a new connection (it sends GetInfo at once)."""
    return Ctap2(hid(key))


class GivesPin(UserInteraction):
    def __init__(self, pin):
        self.pin = pin

    def request_pin(self, permissions, rp_id):
        return self.pin


def client(key, pin=None):
    return Fido2Client(hid(key), DefaultClientDataCollector(ORIGIN), user_interaction=GivesPin(pin))


def verify_packed_self_attestation(attestation_object, client_data_hash):
    """The relying party's check of the attestation: "packed", signed by the
    credential's own key (self attestation), the signature right."""
    assert attestation_object.fmt == "packed"
    result = PackedAttestation().verify(attestation_object.att_stmt, attestation_object.auth_data, client_data_hash)
    assert result.attestation_type == AttestationType.SELF


def relying_party():
    # The origin must be exactly the page's: no other host, scheme or port.
    return Fido2Server(RP, attestation=AttestationConveyancePreference.DIRECT, verify_origin=lambda o: o == ORIGIN,
                       verify_attestation=verify_packed_self_attestation)


def register(key, user_id=b"user-1", name="alice", resident=ResidentKeyRequirement.DISCOURAGED,
             verification=UserVerificationRequirement.DISCOURAGED, pin=None, existing=None):
    """A registration as a web page would make it; returns the relying party's
    stored credential (AttestedCredentialData) and the authenticator data."""
    server = relying_party()
    options, state = server.register_begin({"id": user_id, "name": name, "displayName": name.title()},
                                           credentials=existing, resident_key_requirement=resident,
                                           user_verification=verification)
    response = client(key, pin).make_credential(options.public_key)
    auth_data = server.register_complete(state, response)
    return auth_data.credential_data, auth_data


def cdh(label=b"request"):
    """A client data hash: any 32 bytes do for the key."""
    return sha256(label)


def make_credential(ctap2, user_id=b"user-1", rp=RP, rk=True, **extra):
    options = {"rk": True} if rk else None
    return ctap2.make_credential(cdh(), rp, {"id": user_id, "name": user_id.decode()}, ES256_ONLY,
                                 options=extra.pop("options", options), **extra)


def fails_with(code, call, *args, **kwargs):
    with pytest.raises(CtapError) as failure:
        call(*args, **kwargs)
    assert failure.value.code == code


def in_background(call, *args, **kwargs):
    """Runs a call that will wait for a touch; .result() gives its outcome."""
    pool = ThreadPoolExecutor(1)
    future = pool.submit(call, *args, **kwargs)
    pool.shutdown(wait=False)
    return future


def waits_for_touch(key):
    assert key.waiting_for_touch.wait(WAIT), "the key never waited for a touch"


# --- GetInfo and the socket ------------------------------------------------------------

def test_get_info_says_a_ctap_2_0_key_with_pin_protocol_1(make_key):
    info = ctap(make_key()).info
    assert info.versions == ["FIDO_2_0"]  # no U2F, nothing newer: libfido2 takes its CTAP 2.0 paths
    assert info.aaguid == AAGUID
    assert info.options == {"rk": True, "up": True, "plat": False, "clientPin": False}
    assert info.pin_uv_protocols == [1]
    assert info.max_msg_size == 1200
    assert info.extensions == []

    with_pin = make_key(pin=PIN, builtin_uv=True)
    assert ctap(with_pin).info.options == {"rk": True, "up": True, "plat": False, "clientPin": True, "uv": True}
    assert with_pin.commands == ["GetInfo"]


def test_the_socket_is_private_and_named_by_the_device(key):
    assert key.device == "unix:" + key.path
    directory = os.stat(os.path.dirname(key.path))
    assert stat.S_IMODE(directory.st_mode) == 0o700
    assert stat.S_ISSOCK(os.stat(key.path).st_mode)
    assert stat.S_IMODE(os.stat(key.path).st_mode) == 0o600
    key.stop()
    assert not os.path.exists(key.path)


def test_run_on_its_own_it_serves_a_pin_key_until_sigterm_and_removes_its_socket(tmp_path):
    """`python3 Tests/EndToEnd/soft_authenticator --socket PATH --pin PIN`, as
    docs/passkeys.md shows it: the package run as a directory."""
    path = tmp_path / "key" / "key.sock"
    package = Path(__file__).resolve().parent / "soft_authenticator"
    process = subprocess.Popen([sys.executable, str(package), "--socket", str(path), "--pin", PIN],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline() == f"virtual security key at unix:{path} (a PIN is set)\n"
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        descriptor = HidDescriptor(str(path), 0, 0, 64, 64, "soft key", None)
        info = Ctap2(CtapHidDevice(descriptor, SocketConnection(str(path)))).info
        assert info.aaguid == AAGUID and info.options["clientPin"] is True
    finally:
        process.terminate()
        out, err = process.communicate(timeout=WAIT)
    assert (process.returncode, err) == (0, "")
    assert out == "GetInfo\n"  # the name of each command, never a PIN or a key
    assert not path.exists()


# --- registration and assertion, checked by a relying party --------------------------

def test_registration_then_assertion_verify_at_the_relying_party(key):
    credential, auth_data = register(key)
    assert auth_data.flags & AuthenticatorData.FLAG.UP
    assert not auth_data.flags & AuthenticatorData.FLAG.UV
    assert credential.aaguid == AAGUID
    [held] = key.credentials
    assert (held.rp_id, held.credential_id, held.user_id, held.resident) == (
        "example.com", credential.credential_id, b"user-1", False)

    server = relying_party()
    options, state = server.authenticate_begin([credential], user_verification=UserVerificationRequirement.DISCOURAGED)
    response = client(key).get_assertion(options.public_key).get_response(0)
    assert server.authenticate_complete(state, [credential], response) == credential
    # A signature over other data would not pass: the check above means something.
    options, state = server.authenticate_begin([credential], user_verification=UserVerificationRequirement.DISCOURAGED)
    with pytest.raises(ValueError, match="challenge"):
        server.authenticate_complete(state, [credential], response)


def test_a_resident_credential_is_found_without_an_allow_list_and_gives_its_user_handle(key):
    credential, _ = register(key, user_id=b"user-42", resident=ResidentKeyRequirement.REQUIRED)
    assert key.credentials[0].resident

    server = relying_party()
    options, state = server.authenticate_begin(user_verification=UserVerificationRequirement.DISCOURAGED)
    assert options.public_key.allow_credentials is None
    response = client(key).get_assertion(options.public_key).get_response(0)
    assert response.response.user_handle == b"user-42"
    assert server.authenticate_complete(state, [credential], response) == credential


def test_a_credential_on_the_exclude_list_is_refused_after_a_touch(key):
    ctap2 = ctap(key)
    made = make_credential(ctap2)
    listed = [{"type": "public-key", "id": made.auth_data.credential_data.credential_id}]

    key.presence = "wait"
    attempt = in_background(make_credential, ctap2, user_id=b"user-2", exclude_list=listed)
    waits_for_touch(key)  # the refusal waits for the user: a page cannot probe silently
    assert not attempt.done()
    key.touch()
    fails_with(ERR.CREDENTIAL_EXCLUDED, attempt.result, WAIT)
    assert len(key.credentials) == 1

    # A listed credential of another RP excludes nothing.
    key.presence = "auto"
    other = make_credential(ctap2, rp={"id": "other.example", "name": "Other"})
    make_credential(ctap2, user_id=b"user-3",
                    exclude_list=[{"type": "public-key", "id": other.auth_data.credential_data.credential_id}])
    assert len(key.credentials) == 3


def test_the_allow_list_chooses_the_credential(key):
    ctap2 = ctap(key)
    first = make_credential(ctap2, user_id=b"one", rk=False).auth_data.credential_data
    second = make_credential(ctap2, user_id=b"two", rk=False).auth_data.credential_data

    for chosen in (first, second):
        assertion = ctap2.get_assertion("example.com", cdh(), [{"type": "public-key", "id": chosen.credential_id}])
        assert assertion.credential["id"] == chosen.credential_id
        assertion.verify(cdh(), chosen.public_key)
        assert assertion.user is None  # not resident: no user handle kept
        assert assertion.number_of_credentials is None

    # Another RP's ID for the same credential finds nothing, nor does an unknown ID.
    fails_with(ERR.NO_CREDENTIALS, ctap2.get_assertion, "other.example", cdh(),
               [{"type": "public-key", "id": first.credential_id}])
    fails_with(ERR.NO_CREDENTIALS, ctap2.get_assertion, "example.com", cdh(), [{"type": "public-key", "id": b"\0"}])
    # Non-resident credentials are not found without the list.
    fails_with(ERR.NO_CREDENTIALS, ctap2.get_assertion, "example.com", cdh())


def test_no_credentials_is_said_only_after_the_touch(key):
    key.add_credential("other.example", b"u", "someone")
    ctap2 = ctap(key)
    key.presence = "wait"
    attempt = in_background(ctap2.get_assertion, "example.com", cdh())
    waits_for_touch(key)
    assert not attempt.done()
    key.touch()
    fails_with(ERR.NO_CREDENTIALS, attempt.result, WAIT)

    # Without user presence asked for (a client's silent pre-flight), at once.
    key.presence = "never"
    fails_with(ERR.NO_CREDENTIALS, ctap2.get_assertion, "example.com", cdh(), options={"up": False})


def test_several_resident_credentials_come_one_by_one_through_get_next_assertion(key):
    ctap2 = ctap(key)
    made = {user: make_credential(ctap2, user_id=user).auth_data.credential_data for user in (b"ann", b"bob")}
    make_credential(ctap2, user_id=b"cat", rp={"id": "other.example", "name": "Other"})

    assertions = ctap2.get_assertions("example.com", cdh())
    assert assertions[0].number_of_credentials == 2
    assert [a.user for a in assertions] == [{"id": b"bob"}, {"id": b"ann"}]  # newest first
    for assertion in assertions:
        assertion.verify(cdh(), made[assertion.user["id"]].public_key)
    assert key.commands[-2:] == ["GetAssertion", "GetNextAssertion"]
    fails_with(ERR.NOT_ALLOWED, ctap2.get_next_assertion)  # no more of them

    # A relying party accepts each one the client offers.
    server = relying_party()
    options, state = server.authenticate_begin(user_verification=UserVerificationRequirement.DISCOURAGED)
    selection = client(key).get_assertion(options.public_key)
    responses = [selection.get_response(i) for i in range(len(selection.get_assertions()))]
    assert [r.response.user_handle for r in responses] == [b"bob", b"ann"]
    for response in responses:
        server.authenticate_complete(state, list(made.values()), response)


def test_the_sign_count_rises_with_each_assertion(key):
    ctap2 = ctap(key)
    credential = make_credential(ctap2).auth_data
    assert credential.counter == 0
    counts = [ctap2.get_assertion("example.com", cdh()).auth_data.counter for _ in range(3)]
    assert counts == [1, 2, 3]
    assert key.credentials[0].sign_count == 3


def test_add_credential_puts_a_resident_credential_on_the_key(key):
    added = key.add_credential("example.com", b"user-7", "grace")
    assertion = ctap(key).get_assertion("example.com", cdh())
    assert (assertion.credential["id"], assertion.user) == (added.credential_id, {"id": b"user-7"})
    assertion.verify(cdh(), added.public_key)


def test_only_es256_is_made(key):
    fails_with(ERR.UNSUPPORTED_ALGORITHM, ctap(key).make_credential, cdh(), RP, {"id": b"u"},
               [{"type": "public-key", "alg": -257}])
    assert key.credentials == []


# --- the PIN (protocol 1) ---------------------------------------------------------------

def pin_client(ctap2):
    return ClientPin(ctap2, PinProtocolV1())


def pin_auth(token, client_data_hash=None):
    return PinProtocolV1().authenticate(token, client_data_hash or cdh())


def test_a_pin_once_set_gives_a_token_whose_pin_auth_verifies_the_user(key):
    pin_client(ctap(key)).set_pin(PIN)
    ctap2 = ctap(key)  # a new session sees the PIN in GetInfo
    assert ctap2.info.options["clientPin"] is True
    pins = pin_client(ctap2)
    assert pins.get_pin_retries()[0] == 8
    token = pins.get_pin_token(PIN)

    made = make_credential(ctap2, pin_uv_param=pin_auth(token), pin_uv_protocol=1)
    assert made.auth_data.flags & AuthenticatorData.FLAG.UV
    assertion = ctap2.get_assertion("example.com", cdh(), pin_uv_param=pin_auth(token), pin_uv_protocol=1)
    assert assertion.auth_data.flags & AuthenticatorData.FLAG.UV
    # A pinAuth over another client data hash is refused.
    fails_with(ERR.PIN_AUTH_INVALID, ctap2.get_assertion, "example.com", cdh(),
               pin_uv_param=pin_auth(token, cdh(b"other")), pin_uv_protocol=1)
    assert "ClientPIN.setPIN" in key.commands and "ClientPIN.getPINToken" in key.commands


def test_with_a_pin_set_make_credential_needs_it_and_get_assertion_only_loses_uv(make_key):
    key = make_key(pin=PIN)
    ctap2 = ctap(key)
    # CTAP 2.0, makeCredential step 6: CTAP2_ERR_PIN_REQUIRED (0x36).
    fails_with(ERR.PUAT_REQUIRED, make_credential, ctap2)
    key.add_credential("example.com", b"u", "ursula")
    assertion = ctap2.get_assertion("example.com", cdh())
    assert assertion.auth_data.flags & AuthenticatorData.FLAG.UP
    assert not assertion.auth_data.flags & AuthenticatorData.FLAG.UV


def test_a_wrong_pin_costs_a_retry_and_three_in_a_row_need_a_power_cycle(make_key):
    key = make_key(pin=PIN)
    pins = pin_client(ctap(key))
    fails_with(ERR.PIN_INVALID, pins.get_pin_token, "0000")
    assert pins.get_pin_retries()[0] == 7 == key.pin_retries
    fails_with(ERR.PIN_INVALID, pins.get_pin_token, "0000")
    fails_with(ERR.PIN_AUTH_BLOCKED, pins.get_pin_token, "0000")
    assert pins.get_pin_retries()[0] == 5
    # Blocked until a power cycle, even for the right PIN, and without costing a retry.
    fails_with(ERR.PIN_AUTH_BLOCKED, pins.get_pin_token, PIN)
    assert pins.get_pin_retries()[0] == 5

    key.power_cycle()
    assert len(pins.get_pin_token(PIN)) == 32
    assert pins.get_pin_retries()[0] == 8  # the right PIN gives them all back


def test_retries_at_zero_block_the_pin_for_good(make_key):
    key = make_key(pin=PIN, pin_retries=2)
    pins = pin_client(ctap(key))
    fails_with(ERR.PIN_INVALID, pins.get_pin_token, "0000")
    fails_with(ERR.PIN_BLOCKED, pins.get_pin_token, "0000")
    assert pins.get_pin_retries()[0] == 0
    key.power_cycle()
    fails_with(ERR.PIN_BLOCKED, pins.get_pin_token, PIN)


def test_a_pin_is_set_once_and_of_four_characters_at_least(make_key):
    key = make_key()
    ctap2 = ctap(key)
    fails_with(ERR.PIN_NOT_SET, pin_client(ctap2).get_pin_token, PIN)

    # Three characters, padded and sent by hand (python-fido2 refuses to).
    protocol = PinProtocolV1()
    agreement = ctap2.client_pin(1, ClientPin.CMD.GET_KEY_AGREEMENT)[1]
    platform_key, shared = protocol.encapsulate(agreement)
    short = protocol.encrypt(shared, b"123".ljust(64, b"\0"))
    fails_with(ERR.PIN_POLICY_VIOLATION, ctap2.client_pin, 1, ClientPin.CMD.SET_PIN, key_agreement=platform_key,
               pin_uv_param=protocol.authenticate(shared, short), new_pin_enc=short)
    assert not key.pin_is_set

    pin_client(ctap2).set_pin(PIN)
    assert key.pin_is_set
    # CTAP 2.0: once set, a PIN is changed, never set again.
    fails_with(ERR.PIN_AUTH_INVALID, pin_client(ctap2).set_pin, "5678")
    pin_client(ctap2).change_pin(PIN, "5678")
    fails_with(ERR.PIN_INVALID, pin_client(ctap2).get_pin_token, PIN)
    assert len(pin_client(ctap2).get_pin_token("5678")) == 32


def test_fido2_client_asks_for_the_pin_and_the_relying_party_sees_uv(make_key):
    key = make_key(pin=PIN)
    credential, auth_data = register(key, resident=ResidentKeyRequirement.REQUIRED,
                                     verification=UserVerificationRequirement.REQUIRED, pin=PIN)
    assert auth_data.is_user_verified()
    server = relying_party()
    options, state = server.authenticate_begin(user_verification=UserVerificationRequirement.REQUIRED)
    response = client(key, PIN).get_assertion(options.public_key).get_response(0)
    assert server.authenticate_complete(state, [credential], response) == credential
    assert "ClientPIN.getPINToken" in key.commands
    with pytest.raises(ClientError):
        client(key, "9999").make_credential(relying_party().register_begin({"id": b"x", "name": "x"})[0].public_key)


def test_the_uv_option_needs_built_in_user_verification(make_key):
    ctap2 = ctap(make_key())
    fails_with(ERR.UNSUPPORTED_OPTION, make_credential, ctap2, options={"uv": True})
    fails_with(ERR.UNSUPPORTED_OPTION, ctap2.get_assertion, "example.com", cdh(), options={"uv": True})

    verifying = make_key(builtin_uv=True, pin=PIN)
    ctap2 = ctap(verifying)
    made = make_credential(ctap2, options={"rk": True, "uv": True})  # built-in UV stands in for the PIN
    assert made.auth_data.flags & AuthenticatorData.FLAG.UV
    assertion = ctap2.get_assertion("example.com", cdh(), options={"uv": True})
    assert assertion.auth_data.flags & AuthenticatorData.FLAG.UV


def test_a_zero_length_pin_auth_asks_which_key_was_touched(make_key):
    for pin, answer in ((None, ERR.PIN_NOT_SET), (PIN, ERR.PIN_INVALID)):
        key = make_key(pin=pin)
        key.presence = "wait"
        attempt = in_background(make_credential, ctap(key), pin_uv_param=b"", pin_uv_protocol=1)
        waits_for_touch(key)
        key.touch()
        fails_with(answer, attempt.result, WAIT)
        assert key.credentials == []
        key.presence = "auto"
        client(key).selection()  # python-fido2's own "touch the key you mean" takes either answer


# --- user presence ----------------------------------------------------------------------

def test_presence_deny_refuses_at_once_or_while_waiting(key):
    ctap2 = ctap(key)
    key.add_credential("example.com", b"u", "ursula")
    key.presence = "deny"
    fails_with(ERR.OPERATION_DENIED, make_credential, ctap2)
    fails_with(ERR.OPERATION_DENIED, ctap2.get_assertion, "example.com", cdh())

    key.presence = "never"
    attempt = in_background(ctap2.get_assertion, "example.com", cdh())
    waits_for_touch(key)
    key.presence = "deny"  # the user says no while the key blinks
    fails_with(ERR.OPERATION_DENIED, attempt.result, WAIT)
    assert key.credentials[0].sign_count == 0


def test_presence_never_keeps_alive_until_cancelled(key):
    ctap2 = ctap(key)
    key.add_credential("example.com", b"u", "ursula")
    key.presence = "never"
    cancel, statuses = threading.Event(), []
    attempt = in_background(ctap2.get_assertion, "example.com", cdh(), event=cancel, on_keepalive=statuses.append)
    waits_for_touch(key)
    cancel.set()  # python-fido2 then sends CTAPHID_CANCEL
    fails_with(ERR.KEEPALIVE_CANCEL, attempt.result, WAIT)
    assert statuses == [STATUS.UPNEEDED]
    assert not key.waiting_for_touch.is_set()
    # The same session goes on.
    key.presence = "auto"
    assert ctap2.get_assertion("example.com", cdh()).user == {"id": b"u"}


def test_a_presence_event_touches_when_set(key):
    touched = threading.Event()
    key.presence = touched
    attempt = in_background(make_credential, ctap(key))
    waits_for_touch(key)
    assert not attempt.done()
    touched.set()
    assert attempt.result(WAIT).auth_data.flags & AuthenticatorData.FLAG.UP
    with pytest.raises(ValueError):
        key.presence = "sometimes"


# --- CTAPHID framing --------------------------------------------------------------------

def test_messages_longer_than_a_packet_go_in_continuation_packets(key):
    device = hid(key)
    connection = device._connection
    message = os.urandom(1000)
    before = connection.written, connection.read
    assert device.ping(message) == message
    # 57 bytes in the first packet, 59 in each continuation: 1 + 16 packets each way.
    assert (connection.written - before[0], connection.read - before[1]) == (17, 17)


def test_two_connections_in_a_row_each_get_a_channel(key):
    first = hid(key)
    first.close()
    second = hid(key)
    assert first._channel_id != second._channel_id
    assert Ctap2(second).info.versions == ["FIDO_2_0"]
    assert key.commands == ["GetInfo"]


@contextmanager
def raw_connection(key):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(WAIT)
    sock.connect(key.path)
    try:
        yield sock
    finally:
        sock.close()


def send(sock, cid, cmd, data=b"", declared=None):
    """The first packet of a message (and only it when the data fits)."""
    length = len(data) if declared is None else declared
    sock.sendall((struct.pack(">IBH", cid, 0x80 | cmd, length) + data[:57]).ljust(64, b"\0"))


def receive(sock, whole=True):
    """(cid, command, data) of the next answer that is not a KEEPALIVE, when it
    fits one packet (whole); else (cid, command, (length, first part))."""
    while True:
        packet = sock.recv(64, socket.MSG_WAITALL)
        assert len(packet) == 64, "the key closed the connection"
        cid, cmd, length = struct.unpack_from(">IBH", packet)
        if cmd != 0x80 | CTAPHID.KEEPALIVE:
            if whole:
                assert length <= 57
                return cid, cmd & 0x7F, packet[7:7 + length]
            return cid, cmd & 0x7F, (length, packet[7:7 + min(57, length)])


def receive_all(sock):
    """(cid, command, data) of the next answer that is not a KEEPALIVE, continuations included."""
    cid, cmd, data = receive(sock, whole=False)
    length, data = data
    seq = 0
    while len(data) < length:
        packet = sock.recv(64, socket.MSG_WAITALL)
        assert struct.unpack_from(">IB", packet) == (cid, seq)
        data += packet[5:5 + min(59, length - len(data))]
        seq += 1
    return cid, cmd, data


def open_channel(sock):
    nonce = os.urandom(8)
    send(sock, 0xFFFFFFFF, CTAPHID.INIT, nonce)
    cid, cmd, data = receive(sock)
    assert (cid, cmd, data[:8]) == (0xFFFFFFFF, CTAPHID.INIT, nonce)
    return struct.unpack_from(">I", data, 8)[0]


def test_framing_errors_are_answered_with_ctaphid_error_and_the_channel_goes_on(key):
    with raw_connection(key) as sock:
        cid = open_channel(sock)
        send(sock, cid + 1000, CTAPHID.PING, b"hi")
        assert receive(sock) == (cid + 1000, CTAPHID.ERROR, bytes([ERR.INVALID_CHANNEL]))
        send(sock, cid, CTAPHID.MSG, b"\0" * 7)  # U2F: not this key
        assert receive(sock) == (cid, CTAPHID.ERROR, bytes([ERR.INVALID_COMMAND]))
        send(sock, cid, CTAPHID.PING, b"x" * 57, declared=100)
        sock.sendall(struct.pack(">IB", cid, 5).ljust(64, b"\0"))  # continuation 5 where 0 was due
        assert receive(sock) == (cid, CTAPHID.ERROR, bytes([ERR.INVALID_SEQ]))
        # INIT on an allocated channel resynchronizes it and keeps it.
        nonce = os.urandom(8)
        send(sock, cid, CTAPHID.INIT, nonce)
        answer = receive(sock)
        assert answer[:2] == (cid, CTAPHID.INIT) and answer[2][:12] == nonce + struct.pack(">I", cid)
        send(sock, cid, CTAPHID.PING, b"still here")
        assert receive(sock) == (cid, CTAPHID.PING, b"still here")


def test_a_client_gone_mid_wait_leaves_the_key_serving(key):
    key.presence = "never"
    with raw_connection(key) as sock:
        cid = open_channel(sock)
        send(sock, cid, CTAPHID.CBOR, bytes([Ctap2.CMD.GET_ASSERTION]) + cbor.encode({1: "example.com", 2: cdh()}))
        waits_for_touch(key)
    # The key does one operation at a time: GetInfo is answered, not refused
    # CHANNEL_BUSY, only if the key gave up the wait when the client went away.
    with raw_connection(key) as sock:
        cid = open_channel(sock)
        send(sock, cid, CTAPHID.CBOR, bytes([Ctap2.CMD.GET_INFO]))
        answer = receive_all(sock)
        assert answer[:2] == (cid, CTAPHID.CBOR) and answer[2][0] == 0
        assert cbor.decode(answer[2][1:])[1] == ["FIDO_2_0"]
    assert not key.waiting_for_touch.is_set()
    assert key.commands == ["GetAssertion", "GetInfo"]


def test_a_second_session_is_refused_busy_while_the_first_waits_for_a_touch(key):
    key.presence = "never"
    first = ctap(key)
    cancel = threading.Event()
    attempt = in_background(make_credential, first, event=cancel)
    waits_for_touch(key)
    with raw_connection(key) as sock:
        cid = open_channel(sock)  # INIT is answered whatever the key is doing
        send(sock, cid, CTAPHID.CBOR, bytes([Ctap2.CMD.GET_INFO]))
        assert receive(sock) == (cid, CTAPHID.ERROR, bytes([ERR.CHANNEL_BUSY]))
    cancel.set()
    fails_with(ERR.KEEPALIVE_CANCEL, attempt.result, WAIT)
    assert ctap(key).info.versions == ["FIDO_2_0"]


# --- libfido2 1.12, as cog-cred drives it -------------------------------------------------

FIDO_OK = 0
FIDO_OPT_OMIT, FIDO_OPT_FALSE, FIDO_OPT_TRUE = 0, 1, 2
COSE_ES256 = -7
UP, UV = 0x01, 0x04


class Libfido2:
    """libfido2 through ctypes, with a transport over the key's socket set up as
    cog-cred does: fido_dev_set_io_functions and the path `unix:<socket>`.
    libfido2 writes a report ID (0) and 64 bytes; the write function drops
    that byte and sends 64; the read function gives it 64 back."""

    OPEN = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_char_p)
    CLOSE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    READ = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_ubyte), ctypes.c_size_t,
                            ctypes.c_int)
    WRITE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_ubyte), ctypes.c_size_t)

    class IO(ctypes.Structure):
        pass

    IO._fields_ = [("open", OPEN), ("close", CLOSE), ("read", READ), ("write", WRITE)]

    # name: (result type, argument types); every pointer declared, or ctypes cuts it to an int.
    P, S, I, B = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_char_p
    FUNCTIONS = {
        "fido_init": (None, [I]),
        "fido_strerr": (B, [I]),
        "fido_dev_new": (P, []),
        "fido_dev_free": (None, [P]),
        "fido_dev_set_io_functions": (I, [P, P]),
        "fido_dev_open": (I, [P, B]),
        "fido_dev_close": (I, [P]),
        "fido_dev_cancel": (I, [P]),
        "fido_dev_get_retry_count": (I, [P, ctypes.POINTER(I)]),
        "fido_dev_make_cred": (I, [P, P, B]),
        "fido_dev_get_assert": (I, [P, P, B]),
        "fido_cred_new": (P, []),
        "fido_cred_free": (None, [P]),
        "fido_cred_set_type": (I, [P, I]),
        "fido_cred_set_clientdata_hash": (I, [P, B, S]),
        "fido_cred_set_rp": (I, [P, B, B]),
        "fido_cred_set_user": (I, [P, B, S, B, B, B]),
        "fido_cred_set_rk": (I, [P, I]),
        "fido_cred_set_uv": (I, [P, I]),
        "fido_cred_verify_self": (I, [P]),
        "fido_cred_flags": (ctypes.c_uint8, [P]),
        "fido_cred_fmt": (B, [P]),
        "fido_cred_id_ptr": (P, [P]),
        "fido_cred_id_len": (S, [P]),
        "fido_cred_pubkey_ptr": (P, [P]),
        "fido_cred_pubkey_len": (S, [P]),
        "fido_assert_new": (P, []),
        "fido_assert_free": (None, [P]),
        "fido_assert_set_clientdata_hash": (I, [P, B, S]),
        "fido_assert_set_rp": (I, [P, B]),
        "fido_assert_set_uv": (I, [P, I]),
        "fido_assert_allow_cred": (I, [P, B, S]),
        "fido_assert_count": (S, [P]),
        "fido_assert_flags": (ctypes.c_uint8, [P, S]),
        "fido_assert_sigcount": (ctypes.c_uint32, [P, S]),
        "fido_assert_user_id_ptr": (P, [P, S]),
        "fido_assert_user_id_len": (S, [P, S]),
        "fido_assert_verify": (I, [P, S, I, P]),
        "es256_pk_new": (P, []),
        "es256_pk_free": (None, [P]),
        "es256_pk_from_ptr": (I, [P, P, S]),
    }

    def __init__(self, lib):
        self.lib = lib
        for name, (restype, argtypes) in self.FUNCTIONS.items():
            function = getattr(lib, name)
            function.restype, function.argtypes = restype, argtypes
        lib.fido_init(0)
        self.sockets = {}
        self.write_sizes = set()
        # Kept here: libfido2 holds only the pointers.
        self.io = self.IO(self.OPEN(self._open), self.CLOSE(self._close), self.READ(self._read),
                          self.WRITE(self._write))

    def _open(self, path):
        assert path.startswith(b"unix:")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path[len(b"unix:"):].decode())
        handle = len(self.sockets) + 1
        self.sockets[handle] = sock
        return handle

    def _close(self, handle):
        self.sockets.pop(handle).close()

    def _read(self, handle, buffer, size, ms):
        sock = self.sockets[handle]
        sock.settimeout(WAIT if ms < 0 else ms / 1000)
        data = b""
        try:
            while len(data) < size:
                chunk = sock.recv(size - len(data))
                if not chunk:
                    return -1
                data += chunk
        except OSError:
            return -1
        ctypes.memmove(buffer, data, size)
        return size

    def _write(self, handle, buffer, size):
        report = ctypes.string_at(buffer, size)
        self.write_sizes.add(size)
        assert report[0] == 0  # the report ID
        self.sockets[handle].sendall(report[1:])
        return size

    def error(self, code):
        return f"{code} ({self.lib.fido_strerr(code).decode()})"

    @contextmanager
    def device(self, key):
        dev = self.lib.fido_dev_new()
        assert self.lib.fido_dev_set_io_functions(dev, ctypes.byref(self.io)) == FIDO_OK
        result = self.lib.fido_dev_open(dev, key.device.encode())
        assert result == FIDO_OK, self.error(result)
        try:
            yield dev
        finally:
            self.lib.fido_dev_close(dev)
            self.lib.fido_dev_free(ctypes.byref(ctypes.c_void_p(dev)))

    def make_cred(self, key, pin=None, uv=FIDO_OPT_OMIT, user_id=b"user-1"):
        """fido_dev_make_cred on a fresh open, as cog-cred would: (result, fmt,
        flags, credential ID, public key, verify_self result)."""
        lib = self.lib
        cred = lib.fido_cred_new()
        try:
            lib.fido_cred_set_type(cred, COSE_ES256)
            lib.fido_cred_set_clientdata_hash(cred, cdh(), 32)
            lib.fido_cred_set_rp(cred, b"example.com", b"Example")
            lib.fido_cred_set_user(cred, user_id, len(user_id), b"alice", b"Alice", None)
            lib.fido_cred_set_rk(cred, FIDO_OPT_TRUE)
            lib.fido_cred_set_uv(cred, uv)
            with self.device(key) as dev:
                result = lib.fido_dev_make_cred(dev, cred, None if pin is None else pin.encode())
            if result != FIDO_OK:
                return result, None
            return result, {
                "fmt": lib.fido_cred_fmt(cred).decode(),
                "flags": lib.fido_cred_flags(cred),
                "id": ctypes.string_at(lib.fido_cred_id_ptr(cred), lib.fido_cred_id_len(cred)),
                "public_key": ctypes.string_at(lib.fido_cred_pubkey_ptr(cred), lib.fido_cred_pubkey_len(cred)),
                "verify_self": lib.fido_cred_verify_self(cred),
            }
        finally:
            lib.fido_cred_free(ctypes.byref(ctypes.c_void_p(cred)))

    def get_assert(self, key, pin=None, uv=FIDO_OPT_OMIT, allow=(), public_key=None, dev=None):
        """fido_dev_get_assert: (result, [per assertion: flags, sign count, user
        ID, and fido_assert_verify's result with `public_key`])."""
        lib = self.lib
        assertion = lib.fido_assert_new()
        try:
            lib.fido_assert_set_clientdata_hash(assertion, cdh(), 32)
            lib.fido_assert_set_rp(assertion, b"example.com")
            lib.fido_assert_set_uv(assertion, uv)
            for credential_id in allow:
                lib.fido_assert_allow_cred(assertion, credential_id, len(credential_id))
            if dev is None:
                with self.device(key) as opened:
                    result = lib.fido_dev_get_assert(opened, assertion, None if pin is None else pin.encode())
            else:
                result = lib.fido_dev_get_assert(dev, assertion, None if pin is None else pin.encode())
            if result != FIDO_OK:
                return result, None
            return result, [self._statement(assertion, i, public_key) for i in range(lib.fido_assert_count(assertion))]
        finally:
            lib.fido_assert_free(ctypes.byref(ctypes.c_void_p(assertion)))

    def _statement(self, assertion, i, public_key):
        lib = self.lib
        found = {
            "flags": lib.fido_assert_flags(assertion, i),
            "sign_count": lib.fido_assert_sigcount(assertion, i),
            "user_id": ctypes.string_at(lib.fido_assert_user_id_ptr(assertion, i),
                                        lib.fido_assert_user_id_len(assertion, i)),
        }
        if public_key is not None:
            pk = lib.es256_pk_new()
            lib.es256_pk_from_ptr(pk, public_key, len(public_key))
            found["verify"] = lib.fido_assert_verify(assertion, i, COSE_ES256, pk)
            lib.es256_pk_free(ctypes.byref(ctypes.c_void_p(pk)))
        return found

    def retry_count(self, key):
        retries = ctypes.c_int(-1)
        with self.device(key) as dev:
            result = self.lib.fido_dev_get_retry_count(dev, ctypes.byref(retries))
        assert result == FIDO_OK, self.error(result)
        return retries.value


@pytest.fixture(scope="module")
def libfido2():
    try:
        lib = ctypes.CDLL("libfido2.so.1")
    except OSError:
        pytest.skip("libfido2 (libfido2-1) is not installed")
    return Libfido2(lib)


def test_libfido2_makes_and_asserts_a_resident_credential_without_a_pin(key, libfido2):
    result, made = libfido2.make_cred(key)
    assert result == FIDO_OK, libfido2.error(result)
    assert made["fmt"] == "packed"
    assert made["verify_self"] == FIDO_OK  # libfido2's own check of the self attestation
    assert made["flags"] & UP and not made["flags"] & UV
    assert made["id"] == key.credentials[0].credential_id

    result, statements = libfido2.get_assert(key, public_key=made["public_key"])
    assert result == FIDO_OK, libfido2.error(result)
    assert statements == [{"flags": UP, "sign_count": 1, "user_id": b"user-1", "verify": FIDO_OK}]
    # Each fido_dev_open asks GetInfo; no PIN, so no ClientPIN at all.
    assert key.commands == ["GetInfo", "MakeCredential", "GetInfo", "GetAssertion"]
    assert libfido2.write_sizes == {65}


def test_libfido2_with_a_pin_gets_a_pin_token_and_uv(make_key, libfido2):
    key = make_key(pin=PIN)
    assert libfido2.retry_count(key) == 8
    result, _ = libfido2.make_cred(key)
    assert result == 0x36, libfido2.error(result)  # FIDO_ERR_PIN_REQUIRED: CTAP 2.0 wants the PIN here

    key.commands.clear()
    result, made = libfido2.make_cred(key, pin=PIN)
    assert result == FIDO_OK, libfido2.error(result)
    assert made["flags"] & UV and made["verify_self"] == FIDO_OK
    assert key.commands == ["GetInfo", "ClientPIN.getKeyAgreement", "ClientPIN.getPINToken", "MakeCredential"]
    assert key.requests[-1][1][9] == 1  # pinProtocol 1, and no "uv" option beside the pinAuth
    assert 8 in key.requests[-1][1] and 7 in key.requests[-1][1] and "uv" not in key.requests[-1][1][7]

    for pin, uv, flags in ((PIN, FIDO_OPT_TRUE, UP | UV), (PIN, FIDO_OPT_OMIT, UP | UV), (None, FIDO_OPT_OMIT, UP)):
        result, statements = libfido2.get_assert(key, pin=pin, uv=uv, public_key=made["public_key"])
        assert result == FIDO_OK, libfido2.error(result)
        assert statements[0]["flags"] == flags and statements[0]["verify"] == FIDO_OK

    result, _ = libfido2.get_assert(key, pin="0000")
    assert result == 0x31, libfido2.error(result)  # FIDO_ERR_PIN_INVALID
    assert libfido2.retry_count(key) == 7


def test_libfido2_asks_uv_without_a_pin_as_the_uv_option(make_key, libfido2):
    plain = make_key()
    plain.add_credential("example.com", b"u", "ursula")
    result, _ = libfido2.get_assert(plain, uv=FIDO_OPT_TRUE)
    assert result == 0x2B, libfido2.error(result)  # FIDO_ERR_UNSUPPORTED_OPTION
    assert plain.requests[-1] == ("GetAssertion", {1: "example.com", 2: cdh(), 5: {"uv": True}})

    verifying = make_key(builtin_uv=True)
    result, made = libfido2.make_cred(verifying, uv=FIDO_OPT_TRUE)
    assert result == FIDO_OK and made["flags"] & UV
    result, statements = libfido2.get_assert(verifying, uv=FIDO_OPT_TRUE, public_key=made["public_key"])
    assert result == FIDO_OK and statements[0]["flags"] == UP | UV and statements[0]["verify"] == FIDO_OK


def test_libfido2_finds_several_accounts_and_none(key, libfido2):
    result, _ = libfido2.get_assert(key)
    assert result == 0x2E, libfido2.error(result)  # FIDO_ERR_NO_CREDENTIALS
    for user in (b"ann", b"bob"):
        key.add_credential("example.com", user, user.decode())
    result, statements = libfido2.get_assert(key)
    assert result == FIDO_OK, libfido2.error(result)
    assert [s["user_id"] for s in statements] == [b"bob", b"ann"]
    result, statements = libfido2.get_assert(key, allow=[key.credentials[0].credential_id])
    assert [s["user_id"] for s in statements] == [b"ann"]


def test_libfido2_cancel_from_another_thread_ends_the_wait(key, libfido2):
    key.add_credential("example.com", b"u", "ursula")
    key.presence = "never"
    with libfido2.device(key) as dev:
        attempt = in_background(libfido2.get_assert, key, dev=dev)
        waits_for_touch(key)
        assert libfido2.lib.fido_dev_cancel(dev) == FIDO_OK
        result, _ = attempt.result(WAIT)
    assert result == 0x2D, libfido2.error(result)  # FIDO_ERR_KEEPALIVE_CANCEL
    assert not key.waiting_for_touch.is_set()
