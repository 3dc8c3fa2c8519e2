"""Checks of bench/slow_link.py, the delaying loopback proxy of the bench's
slow-link rows, so its figures can be trusted.

Only what follows from its design is asserted, and only as lower bounds:
a machine under load makes things slower, never faster, so no check here
can fail for being slow. An echo server (in-process, threads) stands
upstream, or the fault server with TLS as in the bench; no binary is
needed.
"""
import http.client
import json
import os
import socket
import socketserver
import ssl
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from fault_server import start_fault_server

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from slow_link import SlowLink  # noqa: E402

DELAY = 0.05
# loop.time() and time.monotonic() are the same clock; asyncio may run a
# timer up to its clock resolution early (nanoseconds). A millisecond of
# slack keeps the bounds exact in substance.
SLACK = 0.001


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while data := self.request.recv(65536):
            self.request.sendall(data)
        self.request.shutdown(socket.SHUT_WR)  # end of stream once the client's has come


@pytest.fixture
def echo():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield server.server_address
    server.shutdown()
    server.server_close()


@pytest.fixture
def link(echo):
    with SlowLink(*echo, delay=DELAY) as link:
        yield link


def connect(link):
    sock = socket.create_connection(("127.0.0.1", link.port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def receive(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        assert chunk, f"end of stream after {len(data)} of {count} bytes"
        data += chunk
    return data


def test_bytes_arrive_intact_and_in_order_both_ways_then_the_end_of_stream(link):
    payload = os.urandom(1 << 20)
    sock = connect(link)
    received = []
    reader = threading.Thread(target=lambda: received.append(receive(sock, len(payload))))
    reader.start()
    # Many writes of uneven sizes, so the link sees many chunks in a row.
    at, size = 0, 1
    while at < len(payload):
        sock.sendall(payload[at:at + size])
        at += size
        size = size * 3 % 65521 + 1
    reader.join(timeout=30)
    assert received and received[0] == payload
    sock.shutdown(socket.SHUT_WR)
    assert sock.recv(1) == b"", "the echo's end of stream came through"
    sock.close()


def test_a_new_connection_pays_the_handshake_round_trip_then_each_exchange_one(link):
    started = time.monotonic()
    sock = connect(link)
    sock.sendall(b"first")
    assert receive(sock, 5) == b"first"
    first = time.monotonic() - started
    # SYN / SYN-ACK (2 × delay), the request (delay), the answer (delay).
    assert first >= 4 * DELAY - SLACK, first
    started = time.monotonic()
    sock.sendall(b"second")
    assert receive(sock, 6) == b"second"
    second = time.monotonic() - started
    assert second >= 2 * DELAY - SLACK, second
    sock.close()


def test_connections_are_counted_and_keep_the_delay_they_were_accepted_with(link):
    assert link.connections == 0
    socks = [connect(link) for _ in range(3)]
    for sock in socks:  # an answer means the link accepted it
        sock.sendall(b"x")
        assert receive(sock, 1) == b"x"
    assert link.connections == 3
    link.delay = 0  # for connections accepted from now on
    started = time.monotonic()
    socks[0].sendall(b"y")
    assert receive(socks[0], 1) == b"y"
    assert time.monotonic() - started >= 2 * DELAY - SLACK
    fast = connect(link)
    fast.sendall(b"z")
    assert receive(fast, 1) == b"z"
    assert link.connections == 4
    for sock in socks + [fast]:
        sock.close()


def test_https_through_the_link_pays_tcp_then_tls_1_3_then_the_request():
    """The bench's chain: what its floors charge a new connection (TCP and
    TLS 1.3, a round trip each) is charged. The fault server answers its own
    /_fault/plan, so no upstream is needed behind it."""
    server, url, ca = start_fault_server("http://127.0.0.1:9/", tls=True)
    try:
        with SlowLink("127.0.0.1", urlsplit(url).port, delay=DELAY) as link:
            connection = http.client.HTTPSConnection("127.0.0.1", link.port, timeout=10,
                                                     context=ssl.create_default_context(cafile=ca))
            times = []
            for _ in range(2):
                started = time.monotonic()
                connection.request("GET", "/_fault/plan")
                answer = connection.getresponse()
                assert answer.status == 200 and json.loads(answer.read()) == {"faults": []}
                times.append(time.monotonic() - started)
            assert connection.sock.version() == "TLSv1.3"
            # SYN / SYN-ACK, ClientHello / ServerHello..Finished, request / answer.
            assert times[0] >= 3 * 2 * DELAY - SLACK, times
            assert times[1] >= 2 * DELAY - SLACK, times  # kept: the request's round trip only
            assert link.connections == 1
            connection.close()
    finally:
        server.shutdown()
        server.server_close()
