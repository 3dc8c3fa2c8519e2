"""What the project's test servers (cognito_double, git_server, fault_server)
share: a threading HTTP server that keeps quiet about clients hanging up,
and the command-line loop that serves until SIGTERM or SIGINT."""
import signal
import sys
import threading
from http.server import ThreadingHTTPServer


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True  # idle keep-alive connections must not block exit
    verbose = False  # subclasses set it from their own *_VERBOSE variable

    def handle_error(self, request, client_address):
        if self.verbose:  # clients hanging up mid-request are normal in tests
            super().handle_error(request, client_address)


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
