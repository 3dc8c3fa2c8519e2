"""The helpers driven by the real clients their users run, against servers
that admit only the pool's tokens (token_servers.py):

- kubectl: Debian's kubectl 1.20 (v1beta1 only; scripts/install-deps unpacks
  it into the test venv), the kubectl on PATH when there is one (1.22+), and
  the Python `kubernetes` client, each with a v1beta1 and, where it knows
  it, a v1 kubeconfig;
- docker's credential helpers: skopeo (Debian) and docker-py's credential
  store, on success and on every kind of failure, which the protocol wants
  as exit status 1 with the message on stdout.
"""
import json
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

import token_servers
from conftest import Bus
from support import KUBECTL_120, V1, V1BETA1, admitted, kubeconfig, kubectl, lock_collection, stored

# --- kubectl ------------------------------------------------------------------------------------------

@pytest.fixture
def cluster(signed_in, tmp_path):
    server = token_servers.start_kubernetes(signed_in, tmp_path)
    yield server
    server.stop()


def python_client(cog, config):
    """The Python client's pod list, run as its own program."""
    program = ("import sys, kubernetes; kubernetes.config.load_kube_config(config_file=sys.argv[1]);"
               "print(kubernetes.client.CoreV1Api().list_namespaced_pod('default').kind)")
    return subprocess.run([sys.executable, "-c", program, str(config)], env=cog.env, capture_output=True, text=True,
                          timeout=60)


def test_debian_kubectl_1_20_with_a_v1beta1_kubeconfig(cog, signed_in, cluster, helper_bin, tmp_path):
    result = kubectl(KUBECTL_120, cog, kubeconfig(tmp_path, cluster, V1BETA1))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["kind"] == "PodList"
    assert admitted(cluster, signed_in), cluster.seen
    # A v1 kubeconfig is beyond 1.20, which says so itself.
    refused = kubectl(KUBECTL_120, cog, kubeconfig(tmp_path, cluster, V1))
    assert refused.returncode != 0


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl on PATH")
@pytest.mark.parametrize("api_version", [V1, V1BETA1])
def test_current_kubectl_with_either_apiversion(cog, signed_in, cluster, helper_bin, tmp_path, api_version):
    version = subprocess.run(["kubectl", "version", "--client", "-o", "json"], capture_output=True, text=True)
    minor = int(json.loads(version.stdout)["clientVersion"]["minor"].rstrip("+"))
    if minor < 22:
        pytest.skip(f"kubectl 1.{minor} on PATH knows v1beta1 only")
    result = kubectl(shutil.which("kubectl"), cog, kubeconfig(tmp_path, cluster, api_version, "Never"))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["kind"] == "PodList"
    assert admitted(cluster, signed_in)


@pytest.mark.parametrize("api_version", [V1, V1BETA1])
def test_the_python_kubernetes_client_with_either_apiversion(cog, signed_in, cluster, helper_bin, tmp_path,
                                                             api_version):
    result = python_client(cog, kubeconfig(tmp_path, cluster, api_version, "Never"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "PodList"
    # The client sends a request even when the plugin's answer is refused:
    # only an admitted, verified token proves the apiVersion was right.
    assert admitted(cluster, signed_in), cluster.seen
    assert all(entry.get("admitted") for entry in cluster.seen), cluster.seen


def test_kubectl_shows_why_when_not_signed_in(cog, signed_in, cluster, helper_bin, tmp_path):
    cog.ok("sign-out", "--local")
    result = kubectl(KUBECTL_120, cog, kubeconfig(tmp_path, cluster, V1BETA1))
    assert result.returncode != 0
    assert "not signed in" in result.stderr
    assert not admitted(cluster, signed_in)


@pytest.mark.parametrize("info, fragment", [
    ('{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1alpha1","spec":{"interactive":false}}',
     "apiVersion client.authentication.k8s.io/v1alpha1"),
    ('{"kind":"Pod","apiVersion":"client.authentication.k8s.io/v1","spec":{}}', "not an ExecCredential"),
    ("not json", "not a JSON object"),
])
def test_an_exec_info_kubectl_would_not_send_is_a_data_error(cog, bus, signed_in, info, fragment):
    result = cog.run("kubectl-credential", env={"KUBERNETES_EXEC_INFO": info})
    assert result.returncode == 65 and result.stdout == ""
    assert fragment in result.stderr


def test_the_answer_follows_the_asked_apiversion(cog, bus, signed_in):
    for info, expected in ((None, V1), (f'{{"kind":"ExecCredential","apiVersion":"{V1BETA1}","spec":{{"interactive":true}}}}', V1BETA1),
                           (f'{{"kind":"ExecCredential","apiVersion":"{V1}","spec":{{"interactive":false}}}}', V1)):
        answer = json.loads(cog.ok("kubectl-credential", env={"KUBERNETES_EXEC_INFO": info}).stdout)
        assert answer["apiVersion"] == expected and answer["kind"] == "ExecCredential"
        assert answer["status"]["token"] == stored(bus, "access")


# --- docker: skopeo and docker-py ---------------------------------------------------------------------

@pytest.fixture
def registry(signed_in, cog):
    server = token_servers.start_registry(signed_in)
    host = server.url.split("//")[1]
    server.host = host
    cog.ok("configure", "--docker-registry", host)
    docker = Path(cog.env["HOME"]) / ".docker"
    docker.mkdir()
    (docker / "config.json").write_text(json.dumps({"credHelpers": {host: "cog-cred"}}))
    yield server
    server.stop()


def skopeo(cog, registry):
    env = {**cog.env, "REGISTRY_AUTH_FILE": str(Path(cog.env["HOME"]) / "no-auth.json")}
    return subprocess.run(["skopeo", "list-tags", "--tls-verify=false", f"docker://{registry.host}/team/app"],
                          env=env, capture_output=True, text=True, timeout=60)


def docker_py(cog, registry):
    """docker-py's credential store asked for the registry, in its own process: (ok, text)."""
    program = ("import sys, json, docker.credentials as c\n"
               "try:\n"
               "    print(json.dumps(c.Store('cog-cred', environment=None).get(sys.argv[1])))\n"
               "except c.StoreError as e:\n"
               "    print('StoreError: ' + str(e)); sys.exit(3)\n")
    result = subprocess.run([sys.executable, "-c", program, registry.host], env=cog.env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode in (0, 3), result.stderr
    return result.returncode == 0, result.stdout.strip()


def open_registry(registry, username, secret):
    import base64

    request = urllib.request.Request(registry.url + "/v2/team/app/tags/list", headers={
        "Authorization": "Basic " + base64.b64encode(f"{username}:{secret}".encode()).decode()})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as response:
        return json.loads(response.read())


@pytest.mark.skipif(shutil.which("skopeo") is None, reason="skopeo is installed by scripts/install-deps")
def test_skopeo_lists_tags_with_the_helper(cog, bus, signed_in, registry, helper_bin):
    result = skopeo(cog, registry)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["Tags"] == ["latest"]
    assert admitted(registry, signed_in)


def test_docker_py_gets_credentials_that_open_the_registry(cog, bus, signed_in, registry, helper_bin):
    ok, text = docker_py(cog, registry)
    assert ok, text
    credential = json.loads(text)
    assert credential["Secret"] == stored(bus, "access")
    assert open_registry(registry, credential["Username"], credential["Secret"])["tags"] == ["latest"]


def make_unreachable(cog, bus, signed_in, tmp_path):
    """A token that must be refreshed, from an endpoint nobody listens on (set
    in the environment: a changed --endpoint-url would drop the tokens)."""
    from conftest import free_port

    cog.env["AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER"] = f"http://127.0.0.1:{free_port()}/"
    bus.secret_tool("clear", "service", "cog-cred", "profile", "default", "kind", "access")


FAILURES = {
    # name: (set up, what the message says)
    "not signed in": (lambda cog, bus, pool, tmp: cog.ok("sign-out", "--local"), "not signed in"),
    "locked keyring": (None, "locked"),
    "no session bus": (lambda cog, bus, pool, tmp: cog.env.update(DBUS_SESSION_BUS_ADDRESS=f"unix:path={tmp}/no-bus"),
                       "session bus"),
    "network": (make_unreachable, "127.0.0.1"),
}


@pytest.fixture(params=list(FAILURES))
def failure(request, cog, bus, signed_in, registry, helper_bin, tmp_path):
    name = request.param
    setup, fragment = FAILURES[name]
    if name == "locked keyring":
        # A keyring of its own, signed in there, then locked.
        private = Bus(tmp_path / "own-bus")
        request.addfinalizer(private.stop)
        cog.env.update(private.env)
        cog.ok("sign-in", "--password-stdin", input=signed_in.password + "\n")
        lock_collection(private)
    else:
        setup(cog, bus, signed_in, tmp_path)
    return name, fragment


def test_every_failure_reaches_docker_py_from_stdout_with_exit_1(cog, registry, failure):
    name, fragment = failure
    helper = subprocess.run(["docker-credential-cog-cred", "get"], input=registry.host, env=cog.env,
                            capture_output=True, text=True, timeout=60)
    assert helper.returncode == 1, (name, helper.returncode, helper.stderr)
    assert fragment in helper.stdout, (name, helper.stdout)
    assert "eyJ" not in helper.stdout
    ok, text = docker_py(cog, registry)
    assert not ok and fragment in text, (name, text)


@pytest.mark.skipif(shutil.which("skopeo") is None, reason="skopeo is installed by scripts/install-deps")
def test_every_failure_reaches_skopeo(cog, registry, failure):
    name, fragment = failure
    result = skopeo(cog, registry)
    assert result.returncode != 0
    # skopeo quotes the helper's stdout: "err: exit status 1, out: `...`".
    said = result.stderr.partition("exit status 1, out: `")[2]
    assert said.startswith("cog-cred: ") and fragment in said, (name, result.stderr)
    assert not any(entry.get("admitted") for entry in registry.seen)


def test_usage_errors_follow_the_docker_protocol(cog, helper_bin):
    for args in ([], ["bogus"], ["get", "extra"]):
        result = subprocess.run(["docker-credential-cog-cred", *args], input="", env=cog.env, capture_output=True,
                                text=True, timeout=30)
        assert result.returncode == 1, (args, result.stderr)
        assert result.stdout.startswith("cog-cred: "), (args, result.stdout)
