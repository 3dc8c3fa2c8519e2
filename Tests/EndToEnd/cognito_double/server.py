"""A small, honest test double of the Amazon Cognito user pool JSON API
(README.md): its HTTP server (Handler, DoubleServer), make_server,
start_double and main. main's --help shows the first line of this docstring."""
import argparse
import copy
import json
import sys
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from serving import ConnectionCounter, QuietServer, read_body, run_until_signalled, serve_in_background

from .constants import CONNECTION_HEADER, VERBOSE
from .double import CognitoDouble


class Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keep-alive like the real endpoint; every reply sets Content-Length.
    protocol_version = "HTTP/1.1"
    server_version = "CognitoDouble/1"

    def setup(self):
        super().setup()
        # One handler a connection: its number tells the requests a client
        # sent on one connection from those it opened anew for.
        self.connection_number = self.server.next_connection()

    def do_POST(self):
        double, body = self.server.double, read_body(self)
        headers = {k.lower(): v for k, v in self.headers.items()}
        headers[CONNECTION_HEADER] = str(self.connection_number)  # never the client's own
        if self.path == "/":
            self._send(*double.handle(headers, body))
            return
        # The managed login domain's POSTs: the sign-in form, the app's token and revocation calls.
        oauth = {"/login": double.oauth_login, "/oauth2/token": double.oauth_token,
                 "/oauth2/revoke": double.oauth_revoke}
        if urlsplit(self.path).path in oauth:
            self._send(*oauth[urlsplit(self.path).path](headers, body))
            return
        admin = {"/_double/reset": lambda _: double.reset(),
                 "/_double/config": double.configure,
                 "/_double/users": double.put_user,
                 "/_double/revoke": double.revoke,
                 "/_double/expire_codes": double.expire_codes,
                 "/_double/forget_device": double.forget_device_admin}
        if self.path not in admin:
            return self._json(404, {"error": f"no route POST {self.path}"})
        self._admin(lambda: admin[self.path](self._object(body)))

    def do_GET(self):
        double = self.server.double
        with double.lock:
            jwks_path = f"/{double.config['pool_id']}/.well-known/jwks.json"
            config = copy.deepcopy(double.config)
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if url.path == "/_double/stats":
            self._json(200, double.stats())
        elif url.path == "/_double/config":
            self._json(200, config)
        elif url.path == "/_double/users":
            self._admin(lambda: double.user_info(query.get("username")))
        elif url.path == "/_double/codes":
            self._admin(lambda: double.codes(query.get("username")))
        elif url.path == "/_double/devices":
            self._admin(lambda: double.devices_info(query.get("username")))
        elif url.path == "/_double/passkeys":
            self._admin(lambda: double.passkeys_info(query.get("username")))
        elif url.path == "/_double/last_authorize":
            self._admin(double.last_authorize_request)
        elif url.path == "/_double/aws_credentials":
            self._admin(lambda: double.aws_credentials_info(query.get("access_key_id")))
        elif url.path == jwks_path:
            self._json(200, double.jwks())
        elif url.path == "/oauth2/userInfo":
            self._send(*double.oauth_user_info({k.lower(): v for k, v in self.headers.items()}))
        elif url.path in ("/oauth2/authorize", "/logout"):
            headers = {k.lower(): v for k, v in self.headers.items()}
            page = double.oauth_authorize if url.path == "/oauth2/authorize" else double.oauth_logout
            self._send(*page(headers, url.query))
        else:
            self._json(404, {"error": f"no route GET {self.path}"})

    def _admin(self, call) -> None:
        try:
            self._json(200, call())
        except LookupError as err:
            self._json(404, {"error": str(err)})
        except (ValueError, TypeError) as err:
            self._json(400, {"error": str(err)})

    @staticmethod
    def _object(body: bytes) -> dict:
        payload = json.loads(body or b"{}")
        if not isinstance(payload, dict):
            raise ValueError("body must be a JSON object")
        return payload

    def _json(self, status: int, obj) -> None:
        self._send(status, "application/json", {}, json.dumps(obj).encode())

    def _send(self, status: int, content_type, headers: dict, body: bytes) -> None:
        self.send_response(status)
        if content_type is not None:  # None: an empty body of no type (a redirect, a revocation)
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, str(value))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        if VERBOSE:
            sys.stderr.write("cognito-double: " + (format % args) + "\n")


class DoubleServer(QuietServer):
    """One port of a double. More ports serving the same double (`also_ports`)
    are other hosts to a client, as cognito-idp, cognito-identity and STS
    are: each keeps its own connections, numbered in one series."""
    verbose = VERBOSE

    def __init__(self, address, double=None, next_connection=None):
        super().__init__(address, Handler)
        self.double = double
        self.next_connection = next_connection or ConnectionCounter()
        self.others = []  # the double's other ports, stopped with this one

    def also_serve(self, host: str, port: int) -> str:
        """Serves this double on another port too; its base URL."""
        other = DoubleServer((host, port), self.double, self.next_connection)
        self.others.append(other)
        serve_in_background(other, "cognito-double")
        return f"http://{host}:{other.server_address[1]}/"

    def shutdown(self):
        for other in self.others:
            other.shutdown()
        super().shutdown()

    def server_close(self):
        for other in self.others:
            other.server_close()
        super().server_close()


def make_server(host: str = "127.0.0.1", port: int = 0):
    server = DoubleServer((host, port))
    base_url = f"http://{host}:{server.server_address[1]}/"
    server.double = CognitoDouble(base_url)
    return server, base_url


def start_double(host: str = "127.0.0.1", port: int = 0, also_ports=()):
    """Serve on a background thread; stop with server.shutdown(); server.server_close().
    `also_ports`: more ports for the same double (0 picks one); their URLs
    are in server.other_urls."""
    server, base_url = make_server(host, port)
    server.other_urls = [server.also_serve(host, extra) for extra in also_ports]
    serve_in_background(server, "cognito-double")
    return server, base_url


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--also-port", type=int, action="append", default=[], metavar="PORT",
                        help="serve the same double on this port too: another host to a client "
                             "(cognito-identity, STS); may be repeated")
    args = parser.parse_args(argv)
    return run_until_signalled(lambda: start_double(args.host, args.port, args.also_port))


if __name__ == "__main__":
    sys.exit(main())
