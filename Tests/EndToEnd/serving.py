"""What the project's test servers (cognito_double, git_server, fault_server)
share: a threading HTTP server that keeps quiet about clients hanging up
and sends small writes at once (TCP_NODELAY, as real endpoints do),
a request handler that logs nothing, reading a request body, and the
command-line loop that serves until SIGTERM or SIGINT."""
import signal
import itertools
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ConnectionCounter:
    """Numbers the connections a server accepts, 1, 2, ... (the double's
    ports share one), for the tests that count them."""

    def __init__(self):
        self._next, self._lock = itertools.count(1), threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            return next(self._next)


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True  # idle keep-alive connections must not block exit
    verbose = False  # subclasses set it from their own *_VERBOSE variable

    def get_request(self):
        sock, address = super().get_request()
        # Small writes go at once, as real endpoints send them. With Nagle's
        # algorithm on (Python's default), an answer's body, written after
        # its headers, waits on a kept connection for the client's delayed
        # ACK of them: 40 ms a request, measured on an SRP sign-in against
        # the double (199 ms, 156 with this), that Cognito does not cost.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock, address

    def handle_error(self, request, client_address):
        if self.verbose:  # clients hanging up mid-request are normal in tests
            super().handle_error(request, client_address)


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing and sends whole answers."""

    def send(self, status, content_type, body, headers=()):
        """Answers `status` with `body` (bytes), its type and length, and `headers`."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, text in headers:
            self.send_header(name, text)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


def serve_tls(server, directory):
    """Makes `server` speak HTTPS with a self-signed certificate for
    127.0.0.1 made for the run, in `directory`; the certificate's path (a
    client's CA bundle)."""
    import ssl
    import subprocess

    directory.mkdir(parents=True, exist_ok=True)
    key, cert = directory / "server.key", directory / "server.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    return cert


def body_chunks(handler, size=64 * 1024):
    """The request body in pieces of at most `size`, de-chunked (Python's
    http.server does not decode Transfer-Encoding: chunked itself) or by
    Content-Length, never held whole. ValueError for a connection closed
    inside the body."""
    if "chunked" in handler.headers.get("Transfer-Encoding", "").lower():
        while True:
            line = handler.rfile.readline(65537)
            if not line:
                raise ValueError("connection closed inside a chunked body")
            length = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if length == 0:
                while handler.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return
            yield from _exactly(handler.rfile, length, size)
            handler.rfile.readline(65537)  # the CRLF after the chunk
    else:
        yield from _exactly(handler.rfile, int(handler.headers.get("Content-Length") or 0), size)


def _exactly(stream, length, size):
    while length > 0:
        data = stream.read(min(size, length))
        if not data:
            raise ValueError("connection closed inside the body")
        length -= len(data)
        yield data


def read_body(handler, limit=None) -> bytes:
    """A request's whole body (body_chunks). It must always be consumed, or
    keep-alive connections desync. ValueError for a body over `limit`
    bytes (a Content-Length over it before anything is read) or a
    connection closed inside the body."""
    if limit is not None and int(handler.headers.get("Content-Length") or 0) > limit:
        raise ValueError("request body too large")
    chunks, total = [], 0
    for piece in body_chunks(handler):
        total += len(piece)
        if limit is not None and total > limit:
            raise ValueError("request body too large")
        chunks.append(piece)
    return b"".join(chunks)


def serve_in_background(server, name, **serve_args):
    threading.Thread(target=server.serve_forever, kwargs=serve_args, name=name, daemon=True).start()


def run_until_signalled(start):
    """Runs `start()` -> (server, base_url, ...), prints the one LISTENING
    line, and serves until SIGTERM or SIGINT. The server runs on a helper
    thread because shutdown() deadlocks when called from the serving thread,
    which is where signal handlers run."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server, base_url = start()[:2]
    print(f"LISTENING {base_url}", flush=True)
    while not stop.wait(0.5):
        pass
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit("a module for the test servers, not a program")
