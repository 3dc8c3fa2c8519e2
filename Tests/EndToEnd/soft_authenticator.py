"""A software FIDO2 authenticator (a virtual security key) for the end-to-end tests.

cog-cred speaks to security keys through libfido2; the tests give it this key
instead of a USB one, through libfido2's own hook for custom transports
(fido_dev_set_io_functions) and a device path `unix:/path/to/socket`.

The wire, which the product depends on:

- a UNIX stream socket, in a private directory (0700), the socket itself 0600;
- every message, both ways, is exactly one 64-byte CTAPHID report, with no
  report-ID byte (libfido2 hands its write function 65 bytes, report ID 0
  first: the product drops that byte; its read function gets 64);
- one connection is one device session (libfido2 connects once per
  fido_dev_open); a client that goes away mid-operation just ends its
  session. Several may be open at once, as several handles on one USB key:
  each gets its channel, and the key does one CTAP2 operation at a time (a
  request that cannot wait for the one under way, two seconds, is
  answered CTAPHID_ERROR CHANNEL_BUSY, as a real key does at once).

On it, CTAPHID (CTAP 2.0, section 8.1: INIT, CBOR, PING, CANCEL, WINK,
KEEPALIVE, ERROR, continuation packets) and the CTAP 2.0 commands a login
needs: GetInfo, MakeCredential, GetAssertion, GetNextAssertion, ClientPIN
(PIN protocol 1: getRetries, getKeyAgreement, setPIN, changePIN,
getPINToken) and Reset. It says it is a FIDO_2_0 key and nothing newer, so
libfido2 1.12 takes the CTAP 2.0 paths: a PIN becomes a pinToken
(ClientPIN subcommand 5) and a pinAuth, never a token with permissions; a
"uv" option is sent only when the caller asks for UV with no PIN.

Behaviour that tests choose (see SoftAuthenticator):

- presence: "auto" (touched at once), "deny" (OPERATION_DENIED), "never"
  (KEEPALIVE "touch needed" every 100 ms until CANCEL, answered
  KEEPALIVE_CANCEL, or the client leaves), "wait" (until `touch()`), or a
  threading.Event (until it is set). `waiting_for_touch` is set while a
  request waits, so a test can watch the product's "Touch your security key"
  without sleeping.
- a PIN (CTAP 2.0 rules: 8 retries, 3 wrong in one power cycle block the PIN
  until `power_cycle()`, 0 retries block it for good; MakeCredential needs
  the PIN once one is set, GetAssertion without it just leaves UV off);
- built-in user verification (the "uv" option), off unless asked for.

Everything is built from python-fido2's pieces (its CBOR, COSE keys,
authenticator data, Info, PIN protocol 1) and `cryptography`'s keys.

To try cog-cred with a virtual key by hand:

    python3 Tests/EndToEnd/soft_authenticator.py --socket /tmp/my-key/key.sock [--pin 1234] [--presence enter]

(or `python3 -m soft_authenticator ...` from Tests/EndToEnd) and give
cog-cred the device `unix:/tmp/my-key/key.sock`. The socket's directory is
made private if it does not exist, and refused if it exists readable by
others. It prints the device path and the name of each command it gets;
never the PIN, keys or credentials. With `--presence enter`, each Enter on
its terminal is one touch. Ctrl-C stops it and removes the socket.
"""
from __future__ import annotations

import argparse
import hmac
import os
import select
import signal
import socket
import stat
import struct
import sys
import tempfile
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from fido2 import cbor
from fido2.cose import ES256
from fido2.ctap import STATUS, CtapError
from fido2.ctap2 import Ctap2, Info
from fido2.ctap2.pin import ClientPin, PinProtocolV1
from fido2.hid import CAPABILITY, CTAPHID
from fido2.utils import bytes2int, sha256
from fido2.webauthn import Aaguid, AttestedCredentialData, AuthenticatorData

__all__ = ["AAGUID", "Credential", "SoftAuthenticator"]

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


@dataclass(eq=False)
class Credential:
    """One credential the key holds. Resident (discoverable) ones are found by
    rp_id alone; the others only through an allowList, as if their ID
    wrapped the key (they are kept here so tests can inspect them too)."""

    rp_id: str
    credential_id: bytes
    user_id: bytes
    user_name: str | None
    display_name: str | None
    private_key: ec.EllipticCurvePrivateKey = field(repr=False)
    resident: bool = True
    sign_count: int = 0

    @property
    def public_key(self) -> ES256:
        """The COSE (ES256) public key, able to verify(message, signature)."""
        return ES256.from_cryptography_key(self.private_key.public_key())

    @property
    def credential_data(self) -> AttestedCredentialData:
        """What a relying party stores (for fido2.server.Fido2Server)."""
        return AttestedCredentialData.create(AAGUID, self.credential_id, self.public_key)

    def sign(self, message: bytes) -> bytes:
        return self.private_key.sign(message, ec.ECDSA(hashes.SHA256()))

    @classmethod
    def new(cls, rp_id, user_id, user_name=None, display_name=None, resident=True):
        return cls(rp_id=rp_id, credential_id=os.urandom(CREDENTIAL_ID_LENGTH), user_id=bytes(user_id),
                   user_name=user_name, display_name=display_name,
                   private_key=ec.generate_private_key(ec.SECP256R1()), resident=resident)


class _Restart(Exception):
    """The host sent INIT during an operation: the operation ends unanswered."""


class _SessionOver(Exception):
    """The client went away, or the key is stopping: the session ends."""


@dataclass
class _NextAssertions:
    """What GetNextAssertion continues: the rest of one GetAssertion's credentials."""

    session: object
    rp_id: str
    client_data_hash: bytes
    flags: int
    remaining: list
    deadline: float


def _param(params, key, kind, required=False):
    """params[key] when it is a `kind`, CTAP's errors otherwise."""
    if key not in params:
        if required:
            raise CtapError(ERR.MISSING_PARAMETER)
        return None
    value = params[key]
    # bool is an int to Python, not to CBOR.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise CtapError(ERR.CBOR_UNEXPECTED_TYPE)
    return value


def _options(params, key):
    options = _param(params, key, dict) or {}
    for name, value in options.items():
        if not isinstance(name, str) or not isinstance(value, bool):
            raise CtapError(ERR.CBOR_UNEXPECTED_TYPE)
    return options


def _descriptor_ids(descriptors):
    """The IDs of the public-key credential descriptors in a list."""
    ids = []
    for descriptor in descriptors:
        if not isinstance(descriptor, dict) or not isinstance(descriptor.get("id"), bytes):
            raise CtapError(ERR.CBOR_UNEXPECTED_TYPE)
        if descriptor.get("type") == "public-key":
            ids.append(descriptor["id"])
    return ids


class _Session:
    """One connection: CTAPHID framing and the waits for a touch."""

    def __init__(self, key, conn):
        self.key = key
        self.conn = conn
        self.buffer = bytearray()
        self.pending = deque()  # packets read early (an INIT that interrupted a wait)
        self.channels = set()

    # --- packets -------------------------------------------------------------

    def read_packet(self, timeout=None):
        """The next 64-byte report; None if `timeout` passes first."""
        if self.pending:
            return self.pending.popleft()
        deadline = None if timeout is None else time.monotonic() + timeout
        while len(self.buffer) < PACKET:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.conn, self.key._wake_r], [], [], wait)
            if self.key._wake_r in ready:
                raise _SessionOver("stopping")
            if not ready:
                return None
            try:
                chunk = self.conn.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:
                raise _SessionOver("the client went away")
            self.buffer += chunk
        packet = bytes(self.buffer[:PACKET])
        del self.buffer[:PACKET]
        return packet

    def send(self, cid, cmd, data=b""):
        """One CTAPHID message, split into an initialization packet and continuations."""
        packets = [struct.pack(">IBH", cid, TYPE_INIT | cmd, len(data)) + data[:INIT_DATA]]
        rest, seq = data[INIT_DATA:], 0
        while rest:
            packets.append(struct.pack(">IB", cid, seq) + rest[:CONT_DATA])
            rest, seq = rest[CONT_DATA:], seq + 1
        try:
            for packet in packets:
                self.conn.sendall(packet.ljust(PACKET, b"\0"))
        except OSError:
            raise _SessionOver("the client went away")

    def error(self, cid, code):
        self.send(cid, CTAPHID.ERROR, bytes([code]))

    # --- messages ------------------------------------------------------------

    def run(self):
        while True:
            cid, cmd, payload = self.read_message()
            self.handle(cid, cmd, payload)

    def read_message(self):
        """The next whole request (cid, command, payload). INIT is answered here,
        and framing errors are answered with CTAPHID_ERROR, as CTAPHID says."""
        while True:
            packet = self.read_packet()
            cid, first = struct.unpack_from(">IB", packet)
            if not first & TYPE_INIT:
                continue  # a continuation with no message begun: ignored (8.1.5.3)
            cmd = first & ~TYPE_INIT
            length = struct.unpack_from(">H", packet, 5)[0]
            if cmd == CTAPHID.INIT:
                self.init(cid, packet[7:7 + length] if length <= INIT_DATA else None)
                continue
            if cid == BROADCAST or cid not in self.channels:
                self.error(cid, ERR.INVALID_CHANNEL)
                continue
            if length > MAX_MESSAGE:
                self.error(cid, ERR.INVALID_LENGTH)
                continue
            data = bytearray(packet[7:7 + min(length, INIT_DATA)])
            seq = 0
            while len(data) < length:
                packet = self.read_packet()
                other, first = struct.unpack_from(">IB", packet)
                if first & TYPE_INIT and first & ~TYPE_INIT == CTAPHID.INIT:
                    self.pending.appendleft(packet)  # INIT wins over the half-read message
                    data = None
                    break
                if other != cid:
                    if first & TYPE_INIT:
                        self.error(other, ERR.CHANNEL_BUSY)
                    continue
                if first & TYPE_INIT or first != seq:
                    self.error(cid, ERR.INVALID_SEQ)
                    data = None
                    break
                data += packet[5:5 + min(CONT_DATA, length - len(data))]
                seq += 1
            if data is not None:
                return cid, cmd, bytes(data)

    def init(self, cid, nonce):
        """CTAPHID_INIT: on the broadcast channel, a new channel; on an allocated one,
        the same channel again (a resync)."""
        if nonce is None or len(nonce) != 8:
            self.error(cid, ERR.INVALID_LENGTH)
            return
        if cid == BROADCAST:
            new_cid = self.key._allocate_channel()
        elif cid in self.channels:
            new_cid = cid
        else:
            self.error(cid, ERR.INVALID_CHANNEL)
            return
        self.channels.add(new_cid)
        capabilities = CAPABILITY.WINK | CAPABILITY.CBOR | CAPABILITY.NMSG  # no U2F
        # nonce, CID, CTAPHID protocol version 2, device version 1.0.0, capabilities
        self.send(cid, CTAPHID.INIT, nonce + struct.pack(">IBBBBB", new_cid, 2, 1, 0, 0, capabilities))

    def handle(self, cid, cmd, payload):
        if cmd == CTAPHID.PING:
            self.send(cid, CTAPHID.PING, payload)
        elif cmd == CTAPHID.WINK:
            self.send(cid, CTAPHID.WINK)
        elif cmd == CTAPHID.CANCEL:
            pass  # nothing is waiting: nothing to cancel, and CANCEL is never answered
        elif cmd == CTAPHID.CBOR:
            if not payload:
                self.error(cid, ERR.INVALID_LENGTH)
                return
            # One operation at a time, whichever session asks.
            if not self.key._busy.acquire(timeout=BUSY_WAIT):
                self.error(cid, ERR.CHANNEL_BUSY)
                return
            try:
                answer = self.key._ctap2(self, cid, payload)
            except _Restart:
                return
            finally:
                self.key._busy.release()
            self.send(cid, CTAPHID.CBOR, answer)
        else:
            # MSG (U2F) and LOCK included: this key does neither.
            self.error(cid, ERR.INVALID_COMMAND)

    # --- user presence -------------------------------------------------------

    def wait_for_presence(self, cid):
        """Returns once the user touched the key. Raises OPERATION_DENIED when the
        user says no, KEEPALIVE_CANCEL on CANCEL; the session ends if the client
        goes away, and the operation if it sends INIT."""
        touched = self.key._presence_now()
        if touched is True:
            return
        if touched is False:
            raise CtapError(ERR.OPERATION_DENIED)
        self.key.waiting_for_touch.set()
        self.key._note("  waiting for a touch")
        try:
            next_keepalive = time.monotonic()
            while True:
                touched = self.key._presence_now()
                if touched is True:
                    return
                if touched is False:
                    raise CtapError(ERR.OPERATION_DENIED)
                now = time.monotonic()
                if now >= next_keepalive:
                    self.send(cid, CTAPHID.KEEPALIVE, bytes([STATUS.UPNEEDED]))
                    next_keepalive = now + KEEPALIVE_EVERY
                packet = self.read_packet(timeout=min(POLL, max(0.0, next_keepalive - now)))
                if packet is None:
                    continue
                other, first = struct.unpack_from(">IB", packet)
                if first == TYPE_INIT | CTAPHID.CANCEL:
                    if other == cid:
                        raise CtapError(ERR.KEEPALIVE_CANCEL)
                    continue  # another channel has nothing to cancel
                if first == TYPE_INIT | CTAPHID.INIT:
                    self.pending.appendleft(packet)
                    raise _Restart()
                if first & TYPE_INIT:
                    self.error(other, ERR.CHANNEL_BUSY)  # one operation at a time
        finally:
            self.key.waiting_for_touch.clear()


class SoftAuthenticator:
    """A virtual FIDO2 (CTAP 2.0) security key on a UNIX socket.

    `directory`: a new private directory is made in it for the socket (or, if
    that path would be too long for a UNIX socket, in the system's temporary
    directory). `socket_path` instead puts the socket exactly there (the
    command line uses it). `pin`: a PIN already set. `builtin_uv`: the key
    can verify the user itself (option uv). `presence`: see the module's
    docstring; settable at any time. `pin_retries`: the retries left to
    begin with (a right PIN sets them back to 8).
    """

    def __init__(self, directory=None, *, pin=None, builtin_uv=False, presence="auto", pin_retries=PIN_RETRIES_MAX,
                 socket_path=None):
        if (directory is None) == (socket_path is None):
            raise ValueError("give a directory or a socket_path")
        self._made_directory = None
        if socket_path is not None:
            self.path = str(socket_path)
        else:
            self._made_directory = _private_directory(Path(directory))
            self.path = str(self._made_directory / SOCKET_NAME)
        self.device = "unix:" + self.path
        self.builtin_uv = builtin_uv
        self.presence = presence
        self.pin_retries = pin_retries
        self._pin_hash = None if pin is None else sha256(pin.encode())[:16]
        self._pin_failures = 0  # wrong PINs in a row in this power cycle
        self._credentials = []
        self._touched = threading.Event()
        self.waiting_for_touch = threading.Event()
        self.commands = []   # the name of every CTAP2 command received, in order
        self.requests = []   # (name, decoded parameters) of each, for tests that look closer
        self.errors = []     # tracebacks of anything unexpected in the key itself
        self.log = None      # a callable given one line per command, if wanted
        self._next = None
        self._next_cid = 1
        self._busy = threading.Lock()       # held through each CTAP2 operation
        self._channel_lock = threading.Lock()
        self._thread = None
        self._sessions = set()              # the threads serving connections
        self._listener = None
        self._wake_r = self._wake_w = None
        self.power_cycle()

    # --- the test's side -----------------------------------------------------

    @property
    def presence(self):
        return self._presence

    @presence.setter
    def presence(self, mode):
        if not (isinstance(mode, threading.Event) or mode in PRESENCE_MODES):
            raise ValueError(f"presence is one of {PRESENCE_MODES} or a threading.Event, not {mode!r}")
        self._presence = mode

    @property
    def credentials(self):
        """The credentials held, oldest first (a copy of the list; the Credential
        objects are live: their sign_count moves)."""
        return list(self._credentials)

    @property
    def pin_is_set(self):
        return self._pin_hash is not None

    def add_credential(self, rp_id, user_id, user_name=None, display_name=None, resident=True):
        """Puts a credential on the key as if it had been made earlier."""
        credential = Credential.new(rp_id, user_id, user_name, display_name, resident)
        self._store(credential)
        return credential

    def touch(self):
        """In presence mode "wait": one touch, for the request waiting now or the next one."""
        self._touched.set()

    def power_cycle(self):
        """As if the key were unplugged and plugged in again: a new pinToken and
        key-agreement key, wrong PINs in a row forgotten, no GetNextAssertion."""
        self._key_agreement = ec.generate_private_key(ec.SECP256R1())
        self._pin_token = os.urandom(32)
        self._pin_failures = 0
        self._next = None

    def start(self):
        if self._thread is not None:
            return self
        if self._made_directory is None:
            _prepare_socket_path(Path(self.path))
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        # The directory is private already; the socket is too, whatever the umask.
        os.chmod(self.path, 0o600)
        listener.listen(8)
        self._listener = listener
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._serve, name="soft-authenticator", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._thread is None:
            return
        os.write(self._wake_w, b"x")  # never read: every select sees it from now on
        self._thread.join(timeout=10)
        for thread in list(self._sessions):
            thread.join(timeout=10)
        self._listener.close()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        self._thread = None
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        if self._made_directory is not None:
            try:
                self._made_directory.rmdir()
            except OSError:
                pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # --- serving -------------------------------------------------------------

    def _serve(self):
        while True:
            ready, _, _ = select.select([self._listener, self._wake_r], [], [])
            if self._wake_r in ready:
                return
            conn, _ = self._listener.accept()
            thread = threading.Thread(target=self._serve_connection, args=(conn,), daemon=True,
                                      name="soft-authenticator-session")
            self._sessions.add(thread)
            thread.start()

    def _serve_connection(self, conn):
        session = _Session(self, conn)
        try:
            session.run()
        except _SessionOver:
            pass
        except Exception:
            self.errors.append(traceback.format_exc())
        finally:
            conn.close()
            if self._next is not None and self._next.session is session:
                self._next = None
            self._sessions.discard(threading.current_thread())

    def _allocate_channel(self):
        with self._channel_lock:
            cid = self._next_cid
            self._next_cid = self._next_cid % 0xFFFFFFFE + 1  # never 0, never broadcast
            return cid

    def _presence_now(self):
        """True: touched; False: refused; None: not yet."""
        mode = self._presence
        if isinstance(mode, threading.Event):
            return True if mode.is_set() else None
        if mode == "auto":
            return True
        if mode == "deny":
            return False
        if mode == "wait" and self._touched.is_set():
            self._touched.clear()
            return True
        return None

    def _note(self, line):
        if self.log is not None:
            self.log(line)

    def _ctap2(self, session, cid, payload):
        """One CTAP2 request (command byte, CBOR map) to its answer (status byte, CBOR map)."""
        command = payload[0]
        try:
            params = cbor.decode(payload[1:]) if len(payload) > 1 else {}
        except Exception:
            params = None
        name = COMMAND_NAMES.get(command, f"0x{command:02x}")
        if command == Ctap2.CMD.CLIENT_PIN and isinstance(params, dict):
            sub = params.get(2)
            name += "." + CLIENT_PIN_NAMES.get(sub, str(sub))
        self.commands.append(name)
        self.requests.append((name, params))
        self._note(name)
        # Any command but GetNextAssertion ends a run of assertions (CTAP 2.0, 5.3).
        if command != Ctap2.CMD.GET_NEXT_ASSERTION:
            self._next = None
        handlers = {
            Ctap2.CMD.GET_INFO: self._get_info,
            Ctap2.CMD.MAKE_CREDENTIAL: self._make_credential,
            Ctap2.CMD.GET_ASSERTION: self._get_assertion,
            Ctap2.CMD.GET_NEXT_ASSERTION: self._get_next_assertion,
            Ctap2.CMD.CLIENT_PIN: self._client_pin,
            Ctap2.CMD.RESET: self._reset,
        }
        try:
            if command not in handlers:
                raise CtapError(ERR.INVALID_COMMAND)
            if len(payload) > MAX_MSG_SIZE:
                raise CtapError(ERR.INVALID_LENGTH)
            if params is None:
                raise CtapError(ERR.INVALID_CBOR)
            if not isinstance(params, dict):
                raise CtapError(ERR.CBOR_UNEXPECTED_TYPE)
            result = handlers[command](session, cid, params)
        except CtapError as e:
            self._note(f"  -> {e.code.name}")
            return bytes([e.code])
        except (_Restart, _SessionOver):
            raise
        except Exception:
            self.errors.append(traceback.format_exc())
            return bytes([ERR.OTHER])
        return b"\0" + (cbor.encode(result) if result is not None else b"")

    # --- CTAP2 commands ------------------------------------------------------

    def _get_info(self, session, cid, params):
        options = {"rk": True, "up": True, "plat": False, "clientPin": self.pin_is_set}
        if self.builtin_uv:
            options["uv"] = True
        info = Info(versions=["FIDO_2_0"], aaguid=AAGUID, options=options, max_msg_size=MAX_MSG_SIZE,
                    pin_uv_protocols=[PinProtocolV1.VERSION])
        return {k: v for k, v in info.items() if k in CTAP20_INFO_MEMBERS and v != []}

    def _make_credential(self, session, cid, params):
        client_data_hash = _param(params, 1, bytes, required=True)
        rp = _param(params, 2, dict, required=True)
        user = _param(params, 3, dict, required=True)
        algorithms = _param(params, 4, list, required=True)
        exclude = _descriptor_ids(_param(params, 5, list) or [])
        options = _options(params, 7)
        pin_auth = _param(params, 8, bytes)
        pin_protocol = _param(params, 9, int)
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
        rp_id = _param(params, 1, str, required=True)
        client_data_hash = _param(params, 2, bytes, required=True)
        allow = _param(params, 3, list)
        options = _options(params, 5)
        pin_auth = _param(params, 6, bytes)
        pin_protocol = _param(params, 7, int)
        if pin_auth == b"":
            self._touch_probe(session, cid)
        # 1. The credentials: those allowed, or with no allowList the resident
        # ones for the RP, newest first.
        if allow:
            found = [self._find(rp_id, credential_id) for credential_id in _descriptor_ids(allow)]
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
            self._next = _NextAssertions(session, rp_id, client_data_hash, flags, credentials[1:],
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

    # --- ClientPIN (PIN protocol 1) ------------------------------------------

    def _client_pin(self, session, cid, params):
        protocol = _param(params, 1, int, required=True)
        sub = _param(params, 2, int, required=True)
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
        pin_auth = _param(params, 4, bytes, required=True)
        new_pin_enc = _param(params, 5, bytes, required=True)
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
        pin_auth = _param(params, 4, bytes, required=True)
        new_pin_enc = _param(params, 5, bytes, required=True)
        pin_hash_enc = _param(params, 6, bytes, required=True)
        self._pin_usable()
        shared = self._shared_secret(params)
        if not hmac.compare_digest(pin_auth, PIN.authenticate(shared, new_pin_enc + pin_hash_enc)):
            raise CtapError(ERR.PIN_AUTH_INVALID)
        self._check_pin_hash(shared, pin_hash_enc)
        self._pin_hash = sha256(self._new_pin(shared, new_pin_enc))[:16]
        return None

    def _get_pin_token(self, params):
        pin_hash_enc = _param(params, 6, bytes, required=True)
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
        peer = _param(params, 3, dict, required=True)
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

    # --- the store -----------------------------------------------------------

    def _find(self, rp_id, credential_id):
        for credential in self._credentials:
            if credential.credential_id == credential_id and credential.rp_id == rp_id:
                return credential
        return None

    def _store(self, credential):
        if credential.resident:
            # A resident credential replaces the RP's earlier one for the same user.
            self._credentials[:] = [c for c in self._credentials
                                    if not (c.resident and c.rp_id == credential.rp_id
                                            and c.user_id == credential.user_id)]
        self._credentials.append(credential)


def _private_directory(base):
    """A new directory only we can enter (mkdtemp makes it 0700), short enough
    for a socket path."""
    made = Path(tempfile.mkdtemp(prefix="soft-key-", dir=base))
    if len(str(made / SOCKET_NAME).encode()) > MAX_SOCKET_PATH:
        made.rmdir()
        made = Path(tempfile.mkdtemp(prefix="soft-key-"))
    os.chmod(made, 0o700)
    return made


def _prepare_socket_path(path):
    """For a socket at a chosen path: its directory made private if new, refused
    if others can enter it; a stale socket there removed."""
    if len(str(path).encode()) > MAX_SOCKET_PATH:
        raise ValueError(f"{path}: too long for a UNIX socket path")
    directory = path.parent
    if not directory.exists():
        directory.mkdir(mode=0o700, parents=True)
    info = directory.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ValueError(f"{directory} is not private to this user: chmod 700 it, or choose another")
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise ValueError(f"{path} exists and is not a socket")
        path.unlink()


def main(argv=None):
    parser = argparse.ArgumentParser(description="A virtual FIDO2 security key on a UNIX socket, for trying cog-cred.")
    parser.add_argument("--socket", required=True, help="where to put the socket (its directory must be private)")
    parser.add_argument("--pin", help="a PIN already set on the key")
    parser.add_argument("--uv", action="store_true", help="the key verifies the user itself (built-in UV)")
    parser.add_argument("--presence", choices=("auto", "deny", "never", "enter"), default="auto",
                        help="touches: at once (auto), refused, never, or each Enter on this terminal")
    args = parser.parse_args(argv)
    try:
        key = SoftAuthenticator(socket_path=args.socket, pin=args.pin, builtin_uv=args.uv,
                                presence="wait" if args.presence == "enter" else args.presence)
        key.start()
    except (OSError, ValueError) as e:
        print(f"soft_authenticator: {e}", file=sys.stderr)
        return 1
    key.log = lambda line: print(line, flush=True)
    print(f"virtual security key at {key.device}" + (" (a PIN is set)" if args.pin else ""), flush=True)
    if args.presence == "enter":
        print("press Enter to touch it; Ctrl-C to stop", flush=True)
    signal.signal(signal.SIGTERM, _interrupt)  # stop as on Ctrl-C, removing the socket
    try:
        if args.presence == "enter":
            for _ in sys.stdin:
                key.touch()
        else:
            while True:
                signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        key.stop()
    return 0


def _interrupt(*_):
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
