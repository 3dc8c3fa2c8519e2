"""Helpers the end-to-end tests share: plain functions, imported by name
(`from support import stored, configure_on_double`). Fixtures, and the
classes they hand out (the bus, the double, the pool, `cog`), are in
conftest.py; what only one test file needs stays in that file.

- tokens: `claims` (a JWT's payload), `b64url`, `b64url_decode`;
- the keyring: `stored`, `all_stored` (what cog-cred stored, as secret-tool
  reads it), `lock_collection`;
- running cog-cred: `configure_on_double` (a profile on the Cognito test
  double), `no_terminal` (no controlling terminal, as in a script),
  `on_terminal` (on a pseudo-terminal, answering its prompts), `cli_path`
  and `run` (cog-cred-cli, or any binary, run as `cog.run` runs cog-cred);
- waiting: `poll` (until a state is reached), `waiting_on_lock` and
  `holding_lock` (a process's flock on a file, from /proc/locks);
- the fault proxy (fault_server.py, the `proxy` fixture): `plan`,
  `fault_log`, `clear_fault_log`, `wait_for_request`, `release`;
- HTTP: `NoRedirects` (a 302 comes back to be read), `double_admin` (the
  double's admin API, for its self-checks);
- the real clients: `git` (git with the test's environment, a credential
  helper if named) and `git_server_admin` (git_server.py's admin API);
  `GIT_REFUSALS` and `git_refusal` (what the git helper refuses, and says);
  `KUBECTL_120`, `V1BETA1`, `V1`, `kubeconfig` (one with cog-cred as its
  exec plugin), `kubectl` and `admitted` (what token_servers.py's
  Kubernetes stand-in let in);
- an authenticator app: `add_authenticator` (`mfa enable totp` answered with
  the app's code);
- the managed login: `DOMAIN_USER` and `DOMAIN_PASSWORD` (the `domain`
  fixture's user), `sign_in_without_a_browser` (its sign-in page posted by
  urllib) and `sign_in_by_pasting` (`sign-in --no-browser` on a terminal);
- what a command left behind: `files_under` (every file below some
  directories, to search for a secret).
"""
import base64
import json
import os
import re
import select
import subprocess
import time
import urllib.parse
import urllib.error
import urllib.request
from pathlib import Path

# --- tokens ---------------------------------------------------------------------------------------


def b64url(data: bytes) -> str:
    """Base64url without padding, as in a JWT."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def claims(jwt):
    """A JWT's payload, unverified."""
    return json.loads(b64url_decode(jwt.split(".")[1]))


# --- the keyring ----------------------------------------------------------------------------------


def stored(bus, kind, profile="default"):
    """The profile's stored `kind` (access, id, refresh, ...) byte for byte, or None."""
    result = bus.secret_tool("lookup", "service", "cog-cred", "profile", profile, "kind", kind)
    return result.stdout if result.returncode == 0 else None


def all_stored(bus, profile="default"):
    """The profile's stored access, ID and refresh tokens (None for one not
    stored), read with one secret-tool search rather than a lookup each."""
    found = {item["attributes"].get("kind"): item["secret"]
             for item in bus.items(service="cog-cred", profile=profile)}
    return {kind: found.get(kind) for kind in ("access", "id", "refresh")}


def lock_collection(bus):
    """Locks the login collection through the Secret Service's own Lock call."""
    result = subprocess.run(
        ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
         "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login"],
        env={**os.environ, **bus.env}, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr


# --- running cog-cred -----------------------------------------------------------------------------

# The Cognito test double's user pool and app client (cognito_double's DEFAULT_CONFIG).
DOUBLE_POOL_ID = "us-east-1_double"
DOUBLE_CLIENT_ID = "doubleclient"


def moto_identity_pool(pool):
    """An identity pool in moto whose provider is `pool` (a MotoPool) and its
    app client; its id."""
    import boto3

    identity = boto3.client("cognito-identity", endpoint_url=pool.url, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")
    return identity.create_identity_pool(
        IdentityPoolName="e2e", AllowUnauthenticatedIdentities=False,
        CognitoIdentityProviders=[{"ProviderName": f"cognito-idp.us-east-1.amazonaws.com/{pool.pool_id}",
                                   "ClientId": pool.client_id}])["IdentityPoolId"]


def configure_on_double(cog, url, *options, profile=None, **run):
    """`cog-cred configure` of a profile (`default` unless named) on the
    double's pool and app client at `url` (the double's own, or a fault proxy's
    in front of it), with `options`; `run` is cog.ok's keywords (input, env)."""
    named = ["--profile", profile] if profile else []
    return cog.ok("configure", *named, "--user-pool-id", DOUBLE_POOL_ID, "--client-id", DOUBLE_CLIENT_ID,
                  "--endpoint-url", url, *options, **run)


def signed_in_on_double(cog, url, double, user, password, *options):
    """`user` (made with `password` on the double) signed in with the
    password on a `default` profile at `url` (the double's, or a proxy's)."""
    double.add_user(user, password)
    cog.remember_secret(password)
    configure_on_double(cog, url, "--username", user, *options)
    cog.ok("sign-in", "--password-stdin", input=password + "\n")


def read_line(fd, seconds):
    """The first line written to `fd` (a server's announcement: an agent's
    COG_CRED_AGENT line, a proxy's address), or what came before EOF or the
    time ran out."""
    data = b""
    deadline = time.monotonic() + seconds
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace")


def no_terminal(cog, *args, input=None):
    """Runs the binary without a controlling terminal, as in a script or CI."""
    return subprocess.run([cog.binary, *args], env=cog.env, capture_output=True, text=True, input=input,
                          start_new_session=True, timeout=60)


def on_terminal(cog, args, *exchanges, piped=None):
    """Runs cog-cred on a pseudo-terminal, answering each (prompt, reply) in
    turn, and returns what it wrote after the last one; it must exit 0. A
    reply may be a function, called once the prompt is shown (a code sent only
    then), or None: the prompt is only waited for. `piped`: text on its
    standard input, a pipe (`printf TEXT | cog-cred ...`), the terminal still there."""
    import pytest

    pexpect = pytest.importorskip("pexpect")
    if piped is None:
        child = pexpect.spawn(cog.binary, args, env=cog.env, encoding="utf-8", timeout=30)
    else:
        child = pexpect.spawn("/bin/sh", ["-c", 'text=$1; shift; printf %s "$text" | exec "$0" "$@"', cog.binary, piped,
                                          *args], env=cog.env, encoding="utf-8", timeout=30)
    for prompt, reply in exchanges:
        child.expect(prompt)
        if reply is not None:
            child.sendline(reply() if callable(reply) else reply)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return child.before


def cli_path(binary):
    """cog-cred-cli, beside the cog-cred front."""
    return str(Path(binary).resolve().parent / "cog-cred-cli")


def run(program, args, env, input=None, stdout=subprocess.PIPE, timeout=60):
    """Runs `program` (any binary or link: argv[0] is its path) as `cog.run` runs cog-cred."""
    env = {k: v for k, v in env.items() if v is not None}
    return subprocess.run([program, *args], input=input, stdout=stdout, stderr=subprocess.PIPE, text=True, env=env,
                          timeout=timeout)


# --- waiting --------------------------------------------------------------------------------------


def poll(predicate, what, seconds=20):
    """Waits for a state to be reached (readiness polling, not a timing guess)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")


def lock_state(pid, lock_file):
    """"holding" or "waiting" ("->" in /proc/locks: blocked in flock) when
    `pid` has a lock entry on `lock_file`, else None."""
    inode = os.stat(lock_file).st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if str(pid) in fields and any(f.endswith(f":{inode}") for f in fields):
            return "waiting" if "->" in fields else "holding"
    return None


def waiting_on_lock(pid, lock_file):
    return lock_state(pid, lock_file) == "waiting"


def holding_lock(pid, lock_file):
    return lock_state(pid, lock_file) == "holding"


# --- the fault proxy ------------------------------------------------------------------------------


def plan(proxy, *faults):
    """The faults the proxy applies from now on (none: it passes everything on)."""
    body = json.dumps({"faults": list(faults)}).encode()
    urllib.request.urlopen(urllib.request.Request(proxy.url + "_fault/plan", data=body), timeout=10).read()


def fault_log(proxy, context=None):
    """The proxy's log; `context`: the SSL context that trusts a TLS proxy's CA."""
    with urllib.request.urlopen(proxy.url + "_fault/log", timeout=10, context=context) as r:
        return json.loads(r.read())


def clear_fault_log(proxy):
    urllib.request.urlopen(urllib.request.Request(proxy.url + "_fault/clear_log", data=b"{}"), timeout=10).read()


def release(proxy):
    """Lets the requests a "hold" fault keeps go on."""
    urllib.request.urlopen(urllib.request.Request(proxy.url + "_fault/release", data=b"{}"), timeout=10).read()


def wait_for_request(proxy, action):
    """Until a request for `action` has reached the proxy since the log was
    last cleared: the log outlives a test, and an earlier request must not
    count as this one."""
    for _ in range(500):
        if any(e["action"] == action for e in fault_log(proxy)):
            return
        time.sleep(0.01)
    raise AssertionError(f"no {action} request reached the proxy")


# --- HTTP -----------------------------------------------------------------------------------------


class NoRedirects(urllib.request.HTTPRedirectHandler):
    """For urllib.request.build_opener: a 302 comes back as it is, to be read."""

    def redirect_request(self, *args, **kwargs):
        return None


def double_admin(url, path, body=None, status=200):
    """A call to the double's admin API at `url` (GET, or POST of `body`),
    which must answer `status`; its JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + "_double/" + path, data=data, method="GET" if data is None else "POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            got, answer = r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        got, answer = err.code, json.loads(err.read())
    assert got == status, answer
    return answer


class DoubleClient:
    """A raw client of the Cognito test double, for its self-checks: Cognito
    calls on `POST /` (JSON as the AWS protocol sends it), admin calls under
    /_double/."""

    def __init__(self, url):
        self.url = url

    def _request(self, action, body):
        from cognito_double import TARGET_PREFIX

        return urllib.request.Request(self.url, data=json.dumps(body).encode(), method="POST", headers={
            "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": TARGET_PREFIX + action})

    def call(self, action, **body):
        try:
            with urllib.request.urlopen(self._request(action, body), timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def raw(self, action, **body):
        """(status, headers, body bytes) for answers that may not be JSON."""
        try:
            with urllib.request.urlopen(self._request(action, body), timeout=10) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), err.read()

    def ok(self, action, **body):
        status, answer = self.call(action, **body)
        assert status == 200, answer
        return answer

    def fails(self, action, error, **body):
        """The message of the error `error` that `action` must answer."""
        status, answer = self.call(action, **body)
        assert (status, answer.get("__type")) == (400, error), answer
        return answer["message"]

    def admin(self, path, body=None, status=200):
        return double_admin(self.url, path, body, status)


# --- the real clients: git and kubectl ------------------------------------------------------------


def git(cog, *args, cwd=None, helper=None):
    """git in the test's environment, never asking anyone; `helper`: its credential helper."""
    env = {**cog.env, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "/bin/false",
           "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
           "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    config = ["-c", f"credential.helper={helper}"] if helper is not None else []
    return subprocess.run(["git", *config, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


# What the git helper refuses for a profile named (#61), configured with
# --git-url https://git.example.com/: (what git sends, why no token).
GIT_REFUSALS = [
    ("protocol=http\nhost=git.example.com\n\n",
     "http://git.example.com is not https: a token goes over https only (plain http to this machine aside)"),
    ("protocol=https\nhost=\n\n", "git named no host"),
    ("protocol=https\n\n", "git named no host"),
    ("protocol=https\nhost=git.example.com\rhost=evil.example\n\n", "git's host holds a carriage return, line feed or NUL"),
    ("protocol=https\nhost=elsewhere.example\n\n",
     "https://elsewhere.example is outside profile default's git URLs (cog-cred configure --profile default --git-url URL)"),
]


def git_refusal(why):
    """The one line the git helper says on stderr when it hands out no token."""
    return f"cog-cred: no token for git: {why}; git asks its next helper\n"


def git_server_admin(server, path, body=None):
    """A call to git_server.py's admin API (GET, or POST of `body`); its JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(server.url + "_admin/" + path, data=data), timeout=10) as r:
        return json.loads(r.read() or b"{}")


# Debian's kubectl 1.20, which scripts/install-deps unpacks into the test venv.
KUBECTL_120 = Path(os.environ.get("COG_CRED_VENV", Path.home() / ".cache/cog-cred/venv")) / "kubectl-1.20/usr/bin/kubectl"
V1BETA1 = "client.authentication.k8s.io/v1beta1"
V1 = "client.authentication.k8s.io/v1"


def kubeconfig(tmp_path, cluster, api_version, interactive_mode=None):
    """A kubeconfig for `cluster` whose user's exec plugin is `cog-cred kubectl-credential`."""
    exec_section = {"apiVersion": api_version, "command": "cog-cred", "args": ["kubectl-credential"]}
    if interactive_mode:
        exec_section["interactiveMode"] = interactive_mode
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": cluster.url,
                                               "certificate-authority-data": cluster.certificate_data}}],
        "users": [{"name": "u", "user": {"exec": exec_section}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
    }
    path = tmp_path / f"kubeconfig-{api_version.rsplit('/', 1)[1]}"
    path.write_text(json.dumps(config))  # YAML is a superset of JSON
    return path


def kubectl(binary, cog, config):
    """`binary` (a kubectl) listing pods with `config`."""
    return subprocess.run([str(binary), "--kubeconfig", str(config), "get", "--raw", "/api/v1/namespaces/default/pods"],
                          env=cog.env, capture_output=True, text=True, timeout=60)


def admitted(cluster, pool):
    """What the Kubernetes stand-in let in of `pool`'s user."""
    return [entry for entry in cluster.seen if entry.get("admitted") and entry["username"] == pool.username]


# --- an authenticator app -------------------------------------------------------------------------


def add_authenticator(cog, code_for=None):
    """`mfa enable totp --code - --print-uri` without a terminal: reads the URI
    from stdout (the one place it goes there), answers with the app's code
    (`code_for(secret)`, else the current one); (exit status, secret, stderr)."""
    if code_for is None:
        import pyotp

        def code_for(secret):
            return pyotp.TOTP(secret).now()
    proc = subprocess.Popen([cog.binary, "mfa", "enable", "totp", "--code", "-", "--print-uri"], env=cog.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    uri = proc.stdout.readline()
    assert uri.startswith("otpauth://totp/"), uri
    secret = re.search(r"secret=([A-Z2-7]+)", uri).group(1)
    proc.stdin.write(code_for(secret) + "\n")
    proc.stdin.close()
    status, err = proc.wait(timeout=60), proc.stderr.read()
    assert secret not in err and "otpauth://totp/" not in err
    return status, secret, err


# --- the managed login ----------------------------------------------------------------------------

# The user of the `domain` fixture (conftest.py): a profile at the double's managed login.
DOMAIN_USER = "mia@example.com"
DOMAIN_PASSWORD = "Browser-Password-7"

# The user name every test proxy takes, and the `microsocks` fixture's
# password (conftest.py), which needs percent-encoding in a URL. Both start
# with "Pr0xy", which a test looks for in any output, in any encoding.
PROXY_USER = "Pr0xyUser"
SOCKS_PASSWORD = "Pr0xy-P@ss:w/rd%"


def sign_in_without_a_browser(address, username=DOMAIN_USER, password=DOMAIN_PASSWORD):
    """The sign-in page's form, filled and posted; the address it redirects to."""
    opener = urllib.request.build_opener(NoRedirects)
    page = opener.open(address, timeout=10).read().decode()
    session = re.search(r'name="login_session" value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode({"login_session": session, "username": username, "password": password}).encode()
    login = urllib.parse.urljoin(address, "/login")
    try:
        opener.open(urllib.request.Request(login, data=form, method="POST"), timeout=10)
    except urllib.error.HTTPError as redirected:
        assert redirected.code == 302, redirected
        return redirected.headers["Location"]
    raise AssertionError("the sign-in page did not redirect")


def sign_in_by_pasting(cog, args=("sign-in", "--no-browser"), env=None, said_first=None):
    """`sign-in --no-browser` (or `args`) on a terminal, signed in "on another
    machine" (the managed login's pages with urllib), the address pasted
    back; `said_first`: a line expected before the address."""
    import pytest

    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(cog.binary, list(args), env=env or cog.env, encoding="utf-8", timeout=30)
    if said_first:
        child.expect(said_first)
    child.expect(r"(http://\S+/oauth2/authorize\?\S+)")
    address = child.match.group(1)
    child.expect("paste the address")
    child.sendline(sign_in_without_a_browser(address))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before


def answered(cog, args, how):
    """A command that destroys something, run `how` a person or a script
    would: "n" or "y" typed at its question on a pseudo-terminal, "--yes"
    given on a terminal (no question may come), or "no terminal" (a script:
    nothing is asked). Returns (exit status, what it said: the terminal's
    text, or stderr)."""
    import pytest

    if how == "no terminal":
        result = no_terminal(cog, *args)
        return result.returncode, result.stderr
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(cog.binary, [*args, *(["--yes"] if how == "--yes" else [])], env=cog.env, encoding="utf-8",
                          timeout=30)
    said = ""
    if how in ("n", "y"):
        child.expect(r"\[y/N\] ")
        said = child.before + child.after
        child.sendline(how)
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus, said + child.before


# --- what a command left behind -------------------------------------------------------------------


def files_under(*roots):
    """Every regular file below `roots` (links not followed), to search for a secret."""
    for root in roots:
        for directory, _, names in os.walk(root):
            for name in names:
                path = os.path.join(directory, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    yield path
