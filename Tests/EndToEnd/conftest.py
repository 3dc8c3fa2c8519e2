"""End-to-end fixtures: the built cog-cred binary against real parts.

- a private D-Bus session bus with an unlocked gnome-keyring on it (the real
  Secret Service, never the developer's own keyring);
- moto's Cognito emulator on 127.0.0.1;
- the project's Cognito test double (cognito_double/) for what moto does
  not do: expiring tokens, counting refreshes, answering with faults;
- Debian's tinyproxy, a real forward proxy (`tinyproxy`).

Each test gets fresh config and home directories; the keyring is shared by
the session and emptied of cog-cred items before every test.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from support import DOMAIN_PASSWORD, DOMAIN_USER, PROXY_USER, SOCKS_PASSWORD, configure_on_double

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, what, attempts=300, pause=0.02):
    """Polls for a service to come up; a start-up wait, not a test timing."""
    for _ in range(attempts):
        if predicate():
            return
        time.sleep(pause)
    raise RuntimeError(f"{what} did not start")


def listening(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


class Tinyproxy:
    """Debian's tinyproxy, a real forward proxy, on a port of its own,
    logging each request to a file (the `tinyproxy` fixture starts them)."""

    def __init__(self, directory, basic_auth=None):
        if shutil.which("tinyproxy") is None:
            pytest.skip("Debian's tinyproxy is not installed (scripts/install-deps installs it)")
        directory.mkdir(exist_ok=True)
        self.port = free_port()
        self.log_file = directory / "tinyproxy.log"
        config = directory / "tinyproxy.conf"
        lines = [f"Port {self.port}", "Listen 127.0.0.1", "Timeout 30", f'LogFile "{self.log_file}"', "LogLevel Connect",
                 "MaxClients 20"]
        if basic_auth:
            lines.append(f"BasicAuth {basic_auth[0]} {basic_auth[1]}")
        config.write_text("\n".join(lines) + "\n")
        self.proc = subprocess.Popen(["tinyproxy", "-d", "-c", str(config)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        wait_until(lambda: listening(self.port), "tinyproxy")
        self.address = f"127.0.0.1:{self.port}"

    def url(self, user=None, password=None):
        userinfo = f"{user}:{password}@" if user else ""
        return f"http://{userinfo}{self.address}"

    def requests(self):
        """What it was asked: `CONNECT host:port` or `POST http://...`, in order."""
        text = self.log_file.read_text() if self.log_file.exists() else ""
        return re.findall(r"Request \(file descriptor \d+\): (\S+ \S+)", text)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


@pytest.fixture
def tinyproxy(tmp_path):
    started = []

    def start(basic_auth=None):
        proxy = Tinyproxy(tmp_path / f"tinyproxy{len(started)}", basic_auth)
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.stop()


@pytest.fixture
def microsocks():
    """Debian's microsocks, a SOCKS5 proxy that takes PROXY_USER and
    SOCKS_PASSWORD (support.py), on 127.0.0.1: its port."""
    if shutil.which("microsocks") is None:
        pytest.skip("Debian's microsocks is not installed (scripts/install-deps installs it)")
    port = free_port()
    proc = subprocess.Popen(["microsocks", "-i", "127.0.0.1", "-p", str(port), "-u", PROXY_USER, "-P", SOCKS_PASSWORD],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: listening(port), "microsocks")
    yield port
    proc.terminate()
    proc.wait(timeout=10)


RELEASE_FRONT = REPO / ".build" / "front" / "cog-cred"
DEBUG_FRONT = REPO / ".build" / "debug" / "cog-cred"


def binary_under_test():
    """The cog-cred these tests run, and what it is: $COG_CRED_BIN when set
    (scripts/test sets the release build's), else the release front when
    scripts/build has made it (what ships), else the debug build."""
    if os.environ.get("COG_CRED_BIN"):
        return Path(os.environ["COG_CRED_BIN"]), "from $COG_CRED_BIN"
    if RELEASE_FRONT.exists():
        return RELEASE_FRONT, "the release build (scripts/build), what ships"
    return DEBUG_FRONT, "the debug build (swift build), not what ships: scripts/build makes the release one"


def stale_source(path):
    """A file under Sources/ changed after the binary and cog-cred-cli beside
    it were built: the tests would run older code than the tree's."""
    built = [p.stat().st_mtime for p in (path, path.resolve().parent / "cog-cred-cli") if p.exists()]
    if not built:
        return None
    newest = max(built)
    for source in (REPO / "Sources").rglob("*"):
        if source.is_file() and source.stat().st_mtime > newest:
            return source.relative_to(REPO)
    return None


def binary_report():
    path, what = binary_under_test()
    lines = [f"cog-cred under test: {path}, {what}"]
    if path.exists() and (source := stale_source(path)):
        lines.append(f"WARNING: {source} is newer than this binary: rebuild it (scripts/build, or swift build), "
                     "or these tests run older code")
    return lines


def pytest_report_header(config):
    return binary_report()


def pytest_terminal_summary(terminalreporter):
    # Again at the end, where a stale binary's warning is not scrolled away.
    for line in binary_report():
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def binary():
    path, _ = binary_under_test()
    if not path.exists():
        pytest.exit(f"no cog-cred binary at {path}: run `scripts/build` (or `swift build`) first; "
                    "scripts/test --e2e builds and runs these tests", returncode=2)
    return str(path)


class Bus:
    """A private dbus-daemon; with `secrets=True`, gnome-keyring unlocked on it."""

    def __init__(self, root, secrets=True, config_file=None):
        self.root = Path(root)
        self.procs = []
        for d in ("data", "runtime"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        os.chmod(self.root / "runtime", 0o700)
        read_fd, write_fd = os.pipe()
        args = ["dbus-daemon", "--nofork", "--nopidfile", f"--print-address={write_fd}"]
        args += [f"--config-file={config_file}"] if config_file else ["--session"]
        daemon = subprocess.Popen(args, pass_fds=(write_fd,), stderr=subprocess.DEVNULL)
        os.close(write_fd)
        self.procs.append(daemon)
        with os.fdopen(read_fd) as f:
            self.address = f.readline().strip()
        self.env = {
            "DBUS_SESSION_BUS_ADDRESS": self.address,
            "XDG_DATA_HOME": str(self.root / "data"),
            "XDG_RUNTIME_DIR": str(self.root / "runtime"),
        }
        if secrets:
            self.start_keyring()

    def start_keyring(self):
        # gnome-keyring reads the new keyring's password up to EOF: no newline.
        keyring = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, **self.env},
        )
        keyring.stdin.write(b"test-keyring-password")
        keyring.stdin.close()
        self.procs.append(keyring)
        self.keyring = keyring
        wait_until(self.has_secret_service, "gnome-keyring")

    def has_secret_service(self):
        out = subprocess.run(
            ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
             "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"],
            env={**os.environ, **self.env}, capture_output=True, text=True)
        return "boolean true" in out.stdout

    def secret_tool(self, *args, input=None):
        return subprocess.run(["secret-tool", *args], env={**os.environ, **self.env}, input=input,
                              capture_output=True, text=True, timeout=30)

    def items(self, **attributes):
        """Every item matching `attributes`: {"attributes": {...}, "secret": ...}."""
        args = [a for pair in attributes.items() for a in pair]
        # secret-tool prints attributes on stderr and the rest on stdout, each
        # line flushed: one pipe for both keeps them in order.
        result = subprocess.run(["secret-tool", "search", "--all", *args], env={**os.environ, **self.env},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
        found = []
        for line in result.stdout.splitlines():
            if line.startswith("["):
                found.append({"attributes": {}, "secret": None})
            elif line.startswith("secret = "):
                found[-1]["secret"] = line[len("secret = "):]
            elif line.startswith("schema = "):
                found[-1]["attributes"]["xdg:schema"] = line[len("schema = "):]
            elif line.startswith("attribute."):
                key, _, value = line[len("attribute."):].partition(" = ")
                found[-1]["attributes"][key] = value
        return found

    def store(self, attributes, secret, label="cog-cred test item"):
        """Stores an item with exactly these attributes, as another program would."""
        args = [a for pair in attributes.items() for a in pair]
        result = self.secret_tool("store", f"--label={label}", *args, input=secret)
        assert result.returncode == 0, result.stderr

    def stop(self):
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def bus_config_without_activation(path):
    """A session bus that starts nothing on demand: no service directories.
    With it, a killed keyring daemon stays gone instead of being restarted
    (locked) by D-Bus activation, and "no Secret Service at all" can be shown."""
    path.write_text("""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>""")
    return path


@pytest.fixture(scope="session")
def bus(tmp_path_factory):
    b = Bus(tmp_path_factory.mktemp("bus"))
    yield b
    b.stop()


class Server:
    """A Python HTTP server process (moto or the test double) on loopback."""

    def __init__(self, args, url, ready):
        self.url = url
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(ready, args[0], attempts=400, pause=0.05)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def http_ok(url):
    try:
        urllib.request.urlopen(url, timeout=1).read()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def moto():
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    server = Server([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], url,
                    lambda: http_ok(url + "moto-api/"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def double_server():
    port, *also = free_port(), free_port(), free_port()
    url = f"http://127.0.0.1:{port}/"
    # Two more ports for the same double: other hosts to a client, for the
    # identity pool and STS (test_connections counts connections per host).
    also_args = [arg for extra in also for arg in ("--also-port", str(extra))]
    server = Server([sys.executable, str(HERE / "cognito_double"), "--host", "127.0.0.1", "--port", str(port), *also_args],
                    url, lambda: all(http_ok(f"http://127.0.0.1:{p}/_double/stats") for p in (port, *also)))
    server.other_urls = [f"http://127.0.0.1:{extra}/" for extra in also]
    yield server
    server.stop()


class Double:
    """Admin calls to the Cognito test double."""

    def __init__(self, url):
        self.url = url

    def admin(self, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + "_double/" + path, data=data, method="POST" if data is not None else "GET")
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"{}")

    def reset(self):
        return self.admin("reset", {})

    def configure(self, **config):
        return self.admin("config", config)

    def add_user(self, username, password, confirmed=True):
        return self.admin("users", {"username": username, "password": password, "confirmed": confirmed})

    def add_totp_user(self, username, password, **extra):
        """A user whose MFA is an authenticator app (TOTP); returns its pyotp.TOTP, the app's codes."""
        import pyotp

        totp = pyotp.TOTP(pyotp.random_base32())
        self.admin("users", {"username": username, "password": password, "mfa": "totp", "totp_secret": totp.secret,
                             **extra})
        return totp

    def revoke(self, username):
        return self.admin("revoke", {"username": username})

    def stats(self):
        return self.admin("stats")

    def codes(self, username):
        """What the last emails to the user carried: {"signup": ..., "reset": ...}."""
        return self.admin("codes?username=" + urllib.parse.quote(username))

    def expire_codes(self, username):
        return self.admin("expire_codes", {"username": username})

    def user(self, username):
        return self.admin("users?username=" + urllib.parse.quote(username))

    def calls(self, key):
        return self.stats()["calls"].get(key, 0)

    def requests(self, since=0):
        """What the double recorded of each request since the test began, in
        order, after the first `since` (count them before a step, read after):
        its action, auth flow, challenge, the parameters' names, ..."""
        return self.stats()["requests"][since:]

    def sign_in_steps(self, since=0):
        """The sign-in steps among those requests, named as `calls` names them:
        ["InitiateAuth:USER_PASSWORD_AUTH"] is a sign-in Cognito asked nothing
        more of; a challenge answered adds "RespondToAuthChallenge:EMAIL_OTP"."""
        return [f"{r['action']}:{r.get('challenge') or r.get('auth_flow')}" for r in self.requests(since)
                if r.get("action") in ("InitiateAuth", "RespondToAuthChallenge")]


@pytest.fixture(scope="module")
def server():
    """The double started in this process, for one test module: the double's
    self-checks, which call it directly."""
    from cognito_double import start_double

    srv, url = start_double()
    yield url
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def double(double_server):
    d = Double(double_server.url)
    d.other_urls = double_server.other_urls
    d.reset()
    return d


@pytest.fixture(scope="module")
def proxy(double_server):
    """fault_server.py in front of the double, for one test module: what it
    answers is planned with support.plan, and it logs every request."""
    import fault_server

    server, url, _ = fault_server.start_fault_server(double_server.url)
    server.url = url
    yield server
    server.shutdown()
    server.server_close()


class CogCred:
    """Runs the built binary as a user would, in this test's environment."""

    def __init__(self, binary, env, home):
        self.binary = binary
        self.env = env
        self.home = home
        self.secrets_seen = set()

    def run(self, *args, input=None, env=None, timeout=60):
        full_env = {**self.env, **(env or {})}
        full_env = {k: v for k, v in full_env.items() if v is not None}
        # Its own session, so without a controlling terminal whoever runs
        # the tests: a command that asks on a terminal (/dev/tty) asks only
        # in the tests that give it one (on_terminal).
        result = subprocess.run([self.binary, *args], input=input, capture_output=True, text=True, env=full_env,
                                timeout=timeout, start_new_session=True)
        # Whatever happened, no token or password may reach stderr.
        for secret in self.secrets_seen:
            assert secret not in result.stderr, f"a secret leaked to stderr of {args}"
        return result

    def ok(self, *args, **kw):
        result = self.run(*args, **kw)
        assert result.returncode == 0, f"{args} exited {result.returncode}: {result.stderr}"
        return result

    def answer_when_asked(self, *args, first_lines=(), answer):
        """Runs cog-cred with `first_lines` on stdin (a password), waits for
        the line on stderr that says a code is wanted (one sent only then),
        and writes `answer(that line)`. Returns (status, that line, stdout, stderr)."""
        proc = subprocess.Popen([self.binary, *args], env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        for line in first_lines:
            proc.stdin.write(line + "\n")
        proc.stdin.flush()
        said = proc.stderr.readline()
        proc.stdin.write(answer(said) + "\n")
        proc.stdin.close()
        status = proc.wait(timeout=60)
        return status, said, proc.stdout.read(), proc.stderr.read()

    def remember_secret(self, *values):
        self.secrets_seen.update(v for v in values if v)

    @property
    def config_file(self):
        return Path(self.env["XDG_CONFIG_HOME"]) / "cog-cred" / "config.json"


@pytest.fixture
def cog(binary, bus, tmp_path):
    # Start every test with no cog-cred items in the shared keyring.
    bus.secret_tool("clear", "service", "cog-cred")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "LANG": "C.UTF-8",
        **bus.env,
    }
    return CogCred(binary, env, home)


def boto_client(url):
    import boto3

    return boto3.client("cognito-idp", endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


class MotoPool:
    """A user pool, app client and confirmed user in moto, made for one test."""

    password = "Correct-Horse-Battery-9"

    def __init__(self, url):
        self.url = url
        self.idp = boto_client(url)
        self.pool_id = self.idp.create_user_pool(PoolName="e2e")["UserPool"]["Id"]
        self.client_id = self.idp.create_user_pool_client(
            UserPoolId=self.pool_id, ClientName="cli",
            ExplicitAuthFlows=["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
        )["UserPoolClient"]["ClientId"]
        self.username = "alice@example.com"
        self.add_user(self.username, self.password)

    def add_user(self, username, password, confirmed=True):
        if confirmed:
            self.idp.admin_create_user(UserPoolId=self.pool_id, Username=username, MessageAction="SUPPRESS")
            self.idp.admin_set_user_password(UserPoolId=self.pool_id, Username=username, Password=password,
                                             Permanent=True)
        else:
            self.idp.sign_up(ClientId=self.client_id, Username=username, Password=password)

    def fresh_tokens(self):
        """A fresh, valid set of tokens for the pool's user, straight from moto."""
        result = self.idp.initiate_auth(
            ClientId=self.client_id, AuthFlow="USER_PASSWORD_AUTH",
            AuthParameters={"USERNAME": self.username, "PASSWORD": self.password})
        return result["AuthenticationResult"]


@pytest.fixture
def pool(moto):
    return MotoPool(moto.url)


@pytest.fixture
def signed_in(cog, pool):
    """A `default` profile on moto, signed in as the pool's user."""
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id,
           "--endpoint-url", pool.url, "--username", pool.username)
    cog.remember_secret(pool.password)
    cog.ok("sign-in", "--password-stdin", input=pool.password + "\n")
    return pool


@pytest.fixture
def own_bus(cog, tmp_path):
    """A private D-Bus session and gnome-keyring for this test alone (free to lock)."""
    private = Bus(tmp_path / "own-bus")
    cog.env.update(private.env)
    yield private
    private.stop()


@pytest.fixture
def locked_service(cog, bus, signed_in, tmp_path):
    """Starts the stand-in holding this profile's real items, locked; returns (start, calls)."""
    items = [item for item in bus.items(service="cog-cred", profile="default")]
    assert len(items) == 3
    log = tmp_path / "calls.log"
    started = []

    def start(answer, unlocked=False, first=(), fail_once=()):
        (tmp_path / "items.json").write_text(json.dumps([*first, *items]))
        private = Bus(tmp_path / f"bus-{answer}", secrets=False,
                      config_file=bus_config_without_activation(tmp_path / f"bus-{answer}.conf"))
        proc = subprocess.Popen([sys.executable, str(HERE / "locked_secret_service.py"), "--address", private.address,
                                 "--items", str(tmp_path / "items.json"), "--answer", answer, "--log", str(log)]
                                + (["--unlocked"] if unlocked else [])
                                + [argument for method in fail_once for argument in ("--fail-once", method)])
        started.append((proc, private))
        wait_until(private.has_secret_service, "the locked Secret Service", attempts=500)
        cog.env.update(private.env)
        return private

    def calls(details=False):
        records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        return records if details else [record["call"] for record in records]

    yield start, calls
    for proc, private in started:
        proc.terminate()
        proc.wait(timeout=10)
        private.stop()


@pytest.fixture(scope="session")
def browser():
    """A real headless browser: Debian's chromium through chromedriver, driven by selenium."""
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        pytest.skip("Debian's chromium and chromium-driver are not installed (scripts/install-deps installs them)")
    # Imported only here, so the rest of the file runs without it; when the
    # browser is there, selenium must be too (scripts/install-deps puts it in the venv).
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    # --no-sandbox: Chromium's sandbox refuses to run as root (CI here is root);
    # --no-proxy-server: loopback only, whatever the environment says.
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--no-proxy-server", "--no-first-run", "--window-size=800,600"):
        options.add_argument(argument)
    # Naming the driver keeps Selenium Manager out: it never downloads a driver or a browser.
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


# --- what several files' tests share --------------------------------------------------------------

@pytest.fixture
def repos(tmp_path):
    """A bare repository with one commit, served over HTTP."""
    root = tmp_path / "repos"
    root.mkdir()
    seed = tmp_path / "seed"
    env = {**os.environ, "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q", "--bare", "-b", "main", str(root / "project.git")],
                 ["init", "-q", "-b", "main", str(seed)]):
        subprocess.run(["git", *args], check=True, env=env)
    (seed / "README").write_text("hello\n")
    for args in (["add", "README"], ["-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "first"],
                 ["push", "-q", (root / "project.git").as_uri(), "main"]):
        subprocess.run(["git", *args], check=True, cwd=seed, env=env)
    return root


@pytest.fixture
def helper_bin(cog, tmp_path):
    """The names git, docker, kubectl, skopeo and docker-py run, as links to
    the built binary (as the package ships them), first on the test's PATH."""
    directory = tmp_path / "bin"
    directory.mkdir()
    for name in ("cog-cred", "git-credential-cog-cred", "docker-credential-cog-cred"):
        (directory / name).symlink_to(cog.binary)
    cog.env["PATH"] = f"{directory}:{cog.env['PATH']}"
    return directory


@pytest.fixture
def domain(cog, double):
    """A profile that signs in at the double's managed login, on a port of its
    own, as DOMAIN_USER (support.py); the double, its `callback` set."""
    callback = f"http://localhost:{free_port()}/callback"
    double.configure(callback_urls=[callback], logout_urls=["http://localhost:9/signed-out"])
    double.add_user(DOMAIN_USER, DOMAIN_PASSWORD)
    configure_on_double(cog, double.url, "--domain", double.url, "--auth-flow", "browser",
                        "--redirect-uri", callback, "--logout-uri", "http://localhost:9/signed-out")
    cog.remember_secret(DOMAIN_PASSWORD)
    double.callback = callback
    return double
