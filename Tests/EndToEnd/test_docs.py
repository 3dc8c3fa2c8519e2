"""Every shell example in README.md and docs/ runs, so the docs cannot rot.

Fenced shell blocks (```sh, ```bash, ```shell) carry a mark after the
language, and a block without one fails `test_every_shell_block_is_marked`:

  ```sh runnable [double | machine | browser] [configured | signed-in] [devices]
      Run here, each block in a fresh environment, against moto (or, with
      `double`, the project's Cognito test double, for what moto lacks:
      RevokeToken, ResendConfirmationCode, a code the test knows).
  ```sh ci
      Steps CI itself runs (scripts/demo, scripts/test, the packaging
      tests): checked to be in CI's scripts, not run a second time here.

What a runnable block gets (a reader's machine, with the emulator standing in
for Cognito and a local HTTPS server standing in for "your API"):
- bash with -euo pipefail and inherit_errexit, in a pseudo-terminal, so the
  interactive examples really prompt; "Password for ...:" is answered.
- PATH starting with cog-cred, git-credential-cog-cred and
  docker-credential-cog-cred (links to the built binary); fresh HOME,
  XDG_CONFIG_HOME, XDG_DATA_HOME and XDG_RUNTIME_DIR; the shared private
  keyring emptied of cog-cred items.
- AWS_ENDPOINT_URL pointing at the emulator, so no example needs
  --endpoint-url. The docs' placeholder pool ids (us-east-1_Abc123,
  eu-west-1_Abc123) and client id (1example23456789) are replaced by the
  emulator's; the user alice@example.com exists with the password $PW.
  `--domain my-app` (a domain prefix) becomes the emulator's URL, which also
  serves the OAuth 2.0 domain; `machine`: the double's app client has the
  secret $CLIENT_SECRET and may use the client-credentials grant for the
  scopes orders/read and orders/write; `browser`: $BROWSER is a stand-in
  for a person at a browser, who signs in as alice on the managed login's
  page and lets the browser return to http://localhost:8400/callback.
- $PW, $NEW, $OLD, $CLIENT_SECRET, $COGNITO_PASSWORD, $KEYRING_PASSWORD, $CODE.
- https://api.example.com: curl goes (through $CURL_HOME/.curlrc:
  connect-to and cacert) to a local HTTPS server that answers 200 only to a
  valid access token of the pool (RS256 against the pool's JWKS, issuer,
  client, expiry) and 401 otherwise. A block that names it must have had an
  accepted request.
- `configured`: profiles `default` and `work` configured for alice;
  `signed-in`: and signed in. `devices`: the double's pool tracks devices
  and lets the user choose whether to remember one (signed in: this
  machine is a device of alice's, not remembered).
- ./deploy.sh in the working directory: calls the API with the
  $COG_CRED_AUTHORIZATION that `cog-cred exec` gives it.

The kubeconfig (```yaml) and docker config (```json) examples are checked too:
kubectl's exec entry is run as kubectl would run it, and docker's helper
name must be a program the package installs.
"""
import json
import os
import re
import shlex
import signal
import sys
import ssl
from pathlib import Path

import pytest

from conftest import REPO, CogCred, Double, MotoPool
from fault_server import make_tls_material
from git_server import Rejected, TokenVerifier, token_from
from serving import QuietHandler, QuietServer, serve_in_background

DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
SHELLS = {"sh", "bash", "shell"}
PLACEHOLDER_POOLS = ("us-east-1_Abc123", "eu-west-1_Abc123")
PLACEHOLDER_CLIENT = "1example23456789"
PLACEHOLDER_DOMAIN = "my-app"
USER = "alice@example.com"
SECRETS = {
    "PW": "Correct-Horse-Battery-9",
    "OLD": "Correct-Horse-Battery-9",
    "NEW": "Another-Horse-Battery-8",
    "COGNITO_PASSWORD": "Correct-Horse-Battery-9",
    "CLIENT_SECRET": "docs-example-client-secret",
    "KEYRING_PASSWORD": "docs-example-keyring-password",
    "CODE": "123456",  # the double takes any well-formed code
}
# What CI runs: a `ci` block's commands must appear in these.
CI_SCRIPTS = [".ci/run", "scripts/test", "packaging/test-deb.sh", "packaging/test-deb-bookworm.sh"]


def fenced_blocks(path):
    """(info words, first line number, text) of each fenced block in a Markdown file."""
    blocks, lines = [], path.read_text().splitlines()
    i = 0
    while i < len(lines):
        opening = re.match(r"^(`{3,})(.*)$", lines[i])
        if not opening:
            i += 1
            continue
        fence, info, start = opening.group(1), opening.group(2).split(), i + 1
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        blocks.append((info, start, "\n".join(body) + "\n"))
        i += 1
    return blocks


def all_blocks(language):
    found = []
    for path in DOCS:
        for info, line, text in fenced_blocks(path):
            if info and info[0] in language:
                found.append((path.relative_to(REPO), line, info[1:], text))
    return found


def block_id(block):
    return f"{block[0]}:{block[1]}"


SHELL_BLOCKS = all_blocks(SHELLS)
RUNNABLE = [b for b in SHELL_BLOCKS if b[2][:1] == ["runnable"]]
CI_BLOCKS = [b for b in SHELL_BLOCKS if b[2][:1] == ["ci"]]


def commands(text):
    """The commands of a block: comments, continuations and && chains resolved."""
    joined = re.sub(r"\\\n\s*", " ", text)
    result = []
    for line in joined.splitlines():
        line = re.sub(r"\s#.*$", "", line).strip()
        if line and not line.startswith("#"):
            result += [part.strip() for part in line.split("&&")]
    return result


# --- the marks ---------------------------------------------------------------------------

def test_the_docs_have_shell_examples():
    assert len(RUNNABLE) >= 10 and CI_BLOCKS, "the block extraction found too little"


def test_every_shell_block_is_marked():
    allowed = {"runnable", "ci"}
    unmarked = [block_id(b) for b in SHELL_BLOCKS if not b[2] or b[2][0] not in allowed]
    assert not unmarked, f"shell blocks without `runnable` or `ci`: {unmarked}"
    options = {"double", "machine", "browser", "configured", "signed-in", "devices"}
    for block in RUNNABLE:
        assert set(block[2][1:]) <= options, f"{block_id(block)}: unknown options {block[2][1:]}"


@pytest.mark.parametrize("block", CI_BLOCKS, ids=block_id)
def test_ci_blocks_are_what_ci_runs(block):
    ci_text = "\n".join((REPO / script).read_text() for script in CI_SCRIPTS)
    for command in commands(block[3]):
        words = shlex.split(command)
        if words[0] == "sudo":
            words = words[1:]
        program = words[0]
        if "/" in program:
            assert os.access(REPO / program, os.X_OK), f"{program} is not an executable in the repository"
        # "swift test", "make install", "apt-get install", "python3 -m pytest".
        key = " ".join(words[:3] if words[1:2] == ["-m"] else words[:2] if len(words) > 1 and
                       not words[1].startswith(("-", ".", "/")) else words[:1])
        assert key in ci_text, f"{block_id(block)}: `{command}` is not run by CI ({key!r} is in none of {CI_SCRIPTS})"


# --- a stand-in for "your API" ------------------------------------------------------------

class API:
    """HTTPS on 127.0.0.1 for https://api.example.com: 200 for a valid access token."""

    def __init__(self, tls_dir):
        self.ca, cert, key = make_tls_material(str(tls_dir), dns_names=("api.example.com",))
        self.verifier = None
        self.accepted = 0
        self.rejected = []
        api = self

        class Handler(QuietHandler):
            def do_GET(self):
                _, token = token_from(self.headers.get("Authorization"))
                try:
                    if not token or api.verifier is None:
                        raise Rejected("no bearer token")
                    claims = api.verifier.verify(token)
                    api.accepted += 1
                    status, body = 200, {"things": [], "user": claims.get("username")}
                except Rejected as e:
                    api.rejected.append(str(e))
                    status, body = 401, {"message": str(e)}
                self.send(status, "application/json", json.dumps(body).encode() + b"\n")

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        serve_in_background(self.server, "docs-api")

    def trust(self, jwks_url, issuers, client_id):
        self.verifier = TokenVerifier(jwks_url, issuers, client_id)
        self.accepted, self.rejected = 0, []


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    server = API(tmp_path_factory.mktemp("api-tls"))
    yield server
    server.server.shutdown()
    server.server.server_close()


# --- running a block ---------------------------------------------------------------------

def kill_leftovers(marker):
    """Ends what a block left running (e.g. a keyring daemon it started)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if marker.encode() in (proc / "environ").read_bytes():
                os.kill(int(proc.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass


@pytest.mark.parametrize("block", RUNNABLE, ids=block_id)
def test_runnable_block(block, binary, bus, moto, double_server, api, tmp_path):
    pexpect = pytest.importorskip("pexpect")
    path, line, options, text = block
    bus.secret_tool("clear", "service", "cog-cred")

    # The emulator standing in for Cognito.
    if set(options) & {"double", "machine", "browser"}:
        emulator = Double(double_server.url)
        emulator.reset()
        emulator.configure(fixed_code="123456")  # what "the email" says in the examples
        if "browser" in options:  # cog-cred's default redirect URI, registered
            emulator.configure(callback_urls=["http://localhost:8400/callback"])
        if "devices" in options:  # the user chooses whether a device is remembered
            emulator.configure(device_tracking="opt_in")
        if "machine" in options:  # an app client with a secret, allowed the client-credentials grant
            emulator.configure(client_secret=SECRETS["CLIENT_SECRET"], oauth_flows=["code", "client_credentials"],
                               custom_scopes=["orders/read", "orders/write"])
        if "sign-up" not in text:  # an example that signs alice up does it itself
            emulator.add_user(USER, SECRETS["PW"])
        pool_id, client_id, url = "us-east-1_double", "doubleclient", double_server.url
        issuers = [f"{url}{pool_id}"]
    else:
        pool = MotoPool(moto.url)  # alice@example.com, password $PW
        assert (pool.username, pool.password) == (USER, SECRETS["PW"])
        pool_id, client_id, url = pool.pool_id, pool.client_id, moto.url
        issuers = [f"https://cognito-idp.us-east-1.amazonaws.com/{pool_id}"]
    api.trust(f"{url}{pool_id}/.well-known/jwks.json", issuers, client_id)

    # A reader's machine: the installed commands on PATH, a home, a private runtime dir.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("cog-cred", "git-credential-cog-cred", "docker-credential-cog-cred"):
        (bin_dir / name).symlink_to(binary)
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / ".curlrc").write_text(f"connect-to = api.example.com:443:127.0.0.1:{api.port}\ncacert = {api.ca}\n")
    deploy = work / "deploy.sh"
    deploy.write_text('#!/bin/sh\n# A deploy script: calls the API with the token `cog-cred exec` gave it.\n'
                      'exec curl -fsS -H "Authorization: $COG_CRED_AUTHORIZATION" https://api.example.com/things\n')
    deploy.chmod(0o755)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = {
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "CURL_HOME": str(home),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_RUNTIME_DIR": str(runtime),
        "DBUS_SESSION_BUS_ADDRESS": bus.env["DBUS_SESSION_BUS_ADDRESS"],
        "AWS_ENDPOINT_URL": url,
        "GIT_TERMINAL_PROMPT": "0",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        **SECRETS,
    }
    if "browser" in options:
        env["BROWSER"] = f"{sys.executable} {REPO / 'Tests' / 'EndToEnd' / 'browser_stand_in.py'} %s"

    cog = CogCred(binary, env, home)
    if "configured" in options or "signed-in" in options:
        for profile in ("default", "work"):
            cog.ok("configure", "--profile", profile, "--user-pool-id", pool_id, "--client-id", client_id,
                   "--username", USER)
            if "signed-in" in options:
                cog.ok("sign-in", "--profile", profile, "--password-stdin", input=SECRETS["PW"] + "\n")

    script = text
    for placeholder in PLACEHOLDER_POOLS:
        script = script.replace(placeholder, pool_id)
    script = script.replace(PLACEHOLDER_CLIENT, client_id)
    # The docs' placeholder domain prefix is the emulator's OAuth domain.
    script = script.replace(f"--domain {PLACEHOLDER_DOMAIN}", f"--domain {url}")
    script_file = tmp_path / "example.sh"
    script_file.write_text("set -euo pipefail\nshopt -s inherit_errexit\n" + script)

    child = pexpect.spawn("bash", ["--noprofile", "--norc", str(script_file)], env=env, cwd=str(work),
                          encoding="utf-8", timeout=60)
    transcript, prompts = [], 0
    try:
        while True:
            # A reader at the terminal: the password, the emailed code, and
            # yes to a question before destroying (what the example asks for).
            index = child.expect([r"Password for \S+: ", r"Enter the 6-digit code from the email: ", r"\[y/N\] ", pexpect.EOF])
            transcript.append(child.before)
            if index == 3:
                break
            prompts += 1
            child.sendline([SECRETS["PW"], SECRETS["CODE"], "y"][index])
        child.close()
    finally:
        kill_leftovers(str(runtime))
    output = "".join(transcript)
    assert child.exitstatus == 0, f"{block_id(block)} exited {child.exitstatus}:\n{output}"
    for secret in ("PW", "NEW", "CLIENT_SECRET", "KEYRING_PASSWORD"):
        assert SECRETS[secret] not in output, f"{block_id(block)}: ${secret} was printed"
    if re.search(r"^cog-cred sign-in\s*(#|$)", text, re.M) and not set(options) & {"machine", "browser"}:
        # The interactive example really asked (a machine and a browser sign-in ask nothing here).
        assert prompts > 0, f"{block_id(block)}: no password prompt"
    if "api.example.com" in text:
        assert api.accepted > 0 and not api.rejected, f"the API saw {api.accepted} good, {api.rejected} bad requests"


# --- the other examples ------------------------------------------------------------------

def test_the_kubeconfig_examples_give_kubectl_an_exec_credential(cog, bus, pool):
    yaml = pytest.importorskip("yaml")
    examples = [yaml.safe_load(text)["users"][0]["user"]["exec"] for _, _, _, text in all_blocks({"yaml"})]
    # One for kubectl 1.22+ (v1), one for Debian's kubectl 1.20 (v1beta1).
    assert sorted(user["apiVersion"] for user in examples) == [
        "client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]
    cog.ok("configure", "--profile", "work", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id,
           "--endpoint-url", pool.url, "--username", pool.username)
    cog.ok("sign-in", "--profile", "work", "--password-stdin", input=pool.password + "\n")
    stored = bus.secret_tool("lookup", "service", "cog-cred", "profile", "work", "kind", "access").stdout
    for user in examples:
        assert user["command"] == "cog-cred"
        # interactiveMode is v1's; kubectl 1.20 knows none.
        assert user.get("interactiveMode") == ("Never" if user["apiVersion"].endswith("/v1") else None)
        # As kubectl runs it: the command with the args, KUBERNETES_EXEC_INFO set.
        info = {"apiVersion": user["apiVersion"], "kind": "ExecCredential", "spec": {"interactive": False}}
        credential = json.loads(cog.ok(*user["args"], env={"KUBERNETES_EXEC_INFO": json.dumps(info)}).stdout)
        assert credential["apiVersion"] == user["apiVersion"] and credential["kind"] == "ExecCredential"
        assert credential["status"]["token"] == stored


def test_the_docker_config_example_names_the_installed_helper():
    (_, _, _, text), = all_blocks({"json"})
    for helper in json.loads(text)["credHelpers"].values():
        name = f"docker-credential-{helper}"
        # build-deb.sh packages what `make install` installs: a link NAME-cog-cred for each of its HELPERS.
        helpers = re.search(r"^HELPERS := (.*)$", (REPO / "Makefile").read_text(), re.M).group(1).split()
        assert name in {f"{command}-cog-cred" for command in helpers}, f"{name} is not installed by `make install`"


def test_the_performance_pages_text_is_bench_notes():
    """docs/performance.md is written by bench/run: its figures, then
    bench/notes.md as it is. Text edited there by hand would be lost at the
    next run, so it is written in bench/notes.md only."""
    page = (REPO / "docs" / "performance.md").read_text()
    notes = (REPO / "bench" / "notes.md").read_text()
    first = notes.splitlines()[0]
    assert first in page, f"{first!r} is not in docs/performance.md"
    assert page[page.index(first + "\n"):] == notes, "docs/performance.md's text differs from bench/notes.md: edit bench/notes.md"
