"""SoftAuthenticator: the key's state, the test's side of it (presence, PIN,
credentials, touches, what it was asked), serving its socket, and the
dispatch of each CTAP2 request to its command (commands.py, client_pin.py)."""
from __future__ import annotations

import os
import select
import socket
import threading
import traceback
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import ec

from fido2 import cbor
from fido2.ctap import CtapError
from fido2.ctap2 import Ctap2
from fido2.utils import sha256

from .client_pin import ClientPinCommands
from .commands import Ctap2Commands
from .constants import CLIENT_PIN_NAMES, COMMAND_NAMES, ERR, MAX_MSG_SIZE, PIN_RETRIES_MAX, PRESENCE_MODES, \
    SOCKET_NAME
from .credential import Credential
from .ctaphid import Restart, Session, SessionOver
from .socket_path import prepare_socket_path, private_directory


class SoftAuthenticator(Ctap2Commands, ClientPinCommands):
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
            self._made_directory = private_directory(Path(directory))
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
            prepare_socket_path(Path(self.path))
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
        session = Session(self, conn)
        try:
            session.run()
        except SessionOver:
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
        except (Restart, SessionOver):
            raise
        except Exception:
            self.errors.append(traceback.format_exc())
            return bytes([ERR.OTHER])
        return b"\0" + (cbor.encode(result) if result is not None else b"")

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
