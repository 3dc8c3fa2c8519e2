"""Two small servers that admit only Cognito access tokens whose RS256
signature verifies against the pool's JWKS (git_server.TokenVerifier), for
the real clients of cog-cred's kubectl and docker helpers:

- a Kubernetes API stand-in: Bearer tokens, as kubectl and the Python
  client send what an exec plugin gave them; it answers `/version`, `/api`,
  `/apis` and the pod list of `default`, over TLS with a certificate made
  for the run (kubectl runs no exec plugin for a plain-http server);
- a registry stand-in speaking the Docker Registry HTTP API v2's Basic
  authentication, as skopeo and docker-py send `Username:Secret` from a
  credential helper; it answers `/v2/` and a tag list.

Each records what it admitted and what it refused (`.seen`)."""
import base64
import json
import threading

from git_server import Rejected, TokenVerifier, token_from
from serving import QuietHandler, QuietServer, serve_tls


class Handler(QuietHandler):
    """What the stand-ins' handlers share: quiet, keep-alive, whole answers."""
    protocol_version = "HTTP/1.1"

    def send_json(self, status, value, headers=()):
        self.send(status, "application/json", json.dumps(value).encode(), headers)

    def admitted(self, scheme_wanted):
        """The verified claims, or None after a 401 was sent."""
        scheme, token = token_from(self.headers.get("Authorization"))
        entry = {"path": self.path, "scheme": scheme}
        try:
            if scheme != scheme_wanted or not token:
                raise Rejected(f"no {scheme_wanted} credentials")
            claims = self.server.verifier.verify(token)
            entry.update(admitted=True, username=claims.get("username"))
            return claims
        except Rejected as e:
            entry.update(admitted=False, reason=str(e))
            self.refuse(str(e))
            return None
        finally:
            with self.server.lock:
                self.server.seen.append(entry)


class KubernetesHandler(Handler):
    def refuse(self, reason):
        self.send_json(401, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": reason,
                             "reason": "Unauthorized", "code": 401})

    def do_GET(self):
        if self.admitted("Bearer") is None:
            return
        path = self.path.split("?")[0]
        answers = {
            "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0"},
            "/api": {"kind": "APIVersions", "versions": ["v1"],
                     "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
            "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
            "/api/v1/namespaces/default/pods": {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": []},
        }
        if path in answers:
            self.send_json(200, answers[path])
        else:
            self.send_json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404})


class RegistryHandler(Handler):
    def refuse(self, reason):
        self.send_json(401, {"errors": [{"code": "UNAUTHORIZED", "message": reason}]},
                       headers=[("WWW-Authenticate", 'Basic realm="cog-cred test registry"'),
                                ("Docker-Distribution-API-Version", "registry/2.0")])

    def do_GET(self):
        if self.admitted("Basic") is None:
            return
        path = self.path.split("?")[0]
        if path == "/v2/":
            self.send_json(200, {}, headers=[("Docker-Distribution-API-Version", "registry/2.0")])
        elif path.startswith("/v2/") and path.endswith("/tags/list"):
            self.send_json(200, {"name": path[len("/v2/"):-len("/tags/list")], "tags": ["latest"]})
        else:
            self.send_json(404, {"errors": [{"code": "NOT_FOUND", "message": path}]})


class TokenServer(QuietServer):
    def __init__(self, handler, verifier, tls_dir=None):
        super().__init__(("127.0.0.1", 0), handler)
        self.verifier = verifier
        self.lock = threading.Lock()
        self.seen = []
        scheme = "http"
        if tls_dir is not None:
            cert = serve_tls(self, tls_dir)
            self.certificate_data = base64.b64encode(cert.read_bytes()).decode()
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self):
        self.shutdown()
        self.server_close()


def start_kubernetes(pool, tls_dir):
    """The API stand-in for a MotoPool, over TLS (its certificate in `.certificate_data`)."""
    return TokenServer(KubernetesHandler, _verifier(pool), tls_dir)


def start_registry(pool):
    """The registry stand-in for a MotoPool, over plain HTTP (skopeo --tls-verify=false)."""
    return TokenServer(RegistryHandler, _verifier(pool))


def _verifier(pool):
    issuer = f"https://cognito-idp.us-east-1.amazonaws.com/{pool.pool_id}"
    return TokenVerifier(f"{pool.url}{pool.pool_id}/.well-known/jwks.json", [issuer], pool.client_id)
