"""CTAPHID on one connection (CTAP 2.0, section 8.1): 64-byte reports,
channels, framing errors, and the waits for a touch with their KEEPALIVEs.
A session hands each whole CBOR request to its key (SoftAuthenticator._ctap2)."""
import select
import struct
import time
from collections import deque

from fido2.ctap import STATUS, CtapError
from fido2.hid import CAPABILITY, CTAPHID

from .constants import BROADCAST, BUSY_WAIT, CONT_DATA, ERR, INIT_DATA, KEEPALIVE_EVERY, MAX_MESSAGE, PACKET, POLL, \
    TYPE_INIT


class Restart(Exception):
    """The host sent INIT during an operation: the operation ends unanswered."""


class SessionOver(Exception):
    """The client went away, or the key is stopping: the session ends."""


class Session:
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
                raise SessionOver("stopping")
            if not ready:
                return None
            try:
                chunk = self.conn.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:
                raise SessionOver("the client went away")
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
            raise SessionOver("the client went away")

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
            except Restart:
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
                    raise Restart()
                if first & TYPE_INIT:
                    self.error(other, ERR.CHANNEL_BUSY)  # one operation at a time
        finally:
            self.key.waiting_for_touch.clear()
