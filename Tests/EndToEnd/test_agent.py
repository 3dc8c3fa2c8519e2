"""`cog-cred agent` and COG_CRED_AGENT (#49): one process of the user's holds
the sessions and answers on a UNIX socket; every command given
COG_CRED_AGENT uses it as its store, never the Secret Service or a file.

Covered, each against the built binary, the real keyring, moto or the
Cognito double, and the real clients:

- a CI job with no session bus at all: `eval "$(cog-cred agent --memory
  --daemon)"`, configure, sign-in, then token, get-header, real git against
  the test git server, Debian's kubectl against the Kubernetes stand-in, and
  exec; afterwards no file under the test's HOME, XDG directories and TMPDIR,
  /tmp or /dev/shm holds any part of a token;
- the keyring-backed agent reads the keyring at every request: items deleted
  by another program (77) and a locked collection (69) show at the next read;
- a forwarded read from a HOME with no configuration, through a relay that
  records every byte: the agent refreshes the expired token with its own
  configuration (the client's endpoint variables point nowhere), and neither
  the refresh token (before or after rotation) nor the client secret ever
  crosses towards the client, in any reading command; a read's warning
  reaches the client's stderr;
- 64 concurrent reads through the agent on an expired token: one refresh;
- the agent killed or gone: 69 naming the socket, with the keyring right
  there and never used;
- `nobody` connecting, even to a socket made 0777: closed with no byte
  written, and the refusal noted;
- `nobody`'s socket where COG_CRED_AGENT points: the client does not even
  connect (the socket is nobody's) and exits 69 naming uid 65534, and a
  real agent of nobody's holds nothing afterwards (and is not dumpable);
- garbage, oversized and stalled clients: the agent keeps answering others
  and stays up; a stalled client is dropped;
- status, whoami, refresh and sign-out through the agent (the next read 77),
  and `configure --client-secret-stdin` keeping the secret in the agent;
- the agent's own life: `--daemon`'s output evaluated by sh (no descriptor of
  the caller kept, the socket 0600 in a 0700 directory), the foreground line,
  the $TMPDIR fallback, a second agent on a live path (69), a stale socket
  replaced, SIGTERM/SIGINT/SIGHUP removing the socket, a path over 107 bytes
  (64), and a request of another protocol version answered with an error;
- its bounds (#61), for whoever reaches its socket: one profile whose
  endpoint hangs (ten reads of it waiting) holds up no read of another
  profile; hundreds of silent connections shut no reader out, past the
  bound the oldest are closed; 300 writes of 900 KB for profiles the
  agent's machine does not configure are refused and grow it by under 100
  MB; `--log` through a link or onto another user's file is refused; a
  client talks only to a socket itself (no link), of its user or root, in a
  directory no one else can change, and sends nothing otherwise; the git
  helper through the agent hands a token only where it may go.

The tests run as root here; "another user" is nobody (uid 65534), run with
setpriv. Every agent a test starts is stopped by the `agents` fixture.
"""
import json
import os
import re
import resource
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

import git_server
import token_servers
from support import (DOUBLE_CLIENT_ID, DOUBLE_POOL_ID, KUBECTL_120, V1BETA1, admitted, claims, clear_fault_log,
                     configure_on_double, files_under, git, git_server_admin, kubeconfig, kubectl, lock_collection, plan,
                     poll, read_line, release, signed_in_on_double, stored, wait_for_request, GIT_REFUSALS, PROXY_USER,
                     git_refusal)

USER = "agnes@example.com"
PASSWORD = "Agent-Password-1"
CLIENT_SECRET = "agent-client-secret-7c41d9e2"
REGISTRY = "registry.example.com"
GIT_REQUEST = "protocol=https\nhost=git.example.com\n\n"
NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
# A Python nobody can run (the test venv lives under /root).
SYSTEM_PYTHON = "/usr/bin/python3"
AGENT_LINE = re.compile(r"COG_CRED_AGENT=(.+); export COG_CRED_AGENT;\n")

needs_root = pytest.mark.skipif(
    os.getuid() != 0 or shutil.which("setpriv") is None or not os.path.exists(SYSTEM_PYTHON),
    reason="acting as another user (nobody) needs root, setpriv and /usr/bin/python3")


# --- the agents a test starts ---------------------------------------------------------------------


def exited(pid):
    """The process is gone, or a zombie nobody has reaped yet (a daemon's parent is init)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


class Agent:
    """One `cog-cred agent` in the foreground, started by the `agents` fixture."""

    def __init__(self, proc, socket_path, line, log, runtime):
        self.proc = proc
        self.socket = socket_path
        self.line = line
        self.log = log
        self._runtime = runtime

    @property
    def pid(self):
        return self.proc.pid

    def notes(self):
        """What the agent wrote on stderr (its notes) so far."""
        return self.log.read_text(errors="replace")

    def alive(self):
        return self.proc.poll() is None

    def client(self, **extra):
        """Overrides for cog.run: through this agent, with no session bus to fall back on."""
        return {"COG_CRED_AGENT": str(self.socket), "DBUS_SESSION_BUS_ADDRESS": None,
                "XDG_RUNTIME_DIR": str(self._runtime), **extra}

    def stop(self, sig=signal.SIGTERM):
        """Sends `sig` and returns the exit status (SIGKILL after 10 s)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc.stdout.close()
        return self.proc.returncode


class Agents:
    """Starts agents for a test and stops every one of them afterwards, the
    daemons (not our children) included."""

    def __init__(self, cog, tmp_path):
        self.cog = cog
        self.tmp_path = tmp_path
        self.started = []
        self.daemons = []
        # A runtime directory without a `bus`: what a client is given, so
        # nothing could reach a Secret Service even by the default address.
        self.runtime = tmp_path / "client-run"
        self.runtime.mkdir(mode=0o700)

    def start(self, *options, socket_path="default", env=None, user=None, binary=None):
        """`cog-cred agent OPTIONS` in the foreground, once its socket listens.
        `socket_path`: given as --socket (the default: a fresh 0700 directory
        of the test's), or None for the agent's own choice. `env`: overrides
        of cog.env, or with `user` (run as that uid with setpriv) the whole
        environment."""
        n = len(self.started)
        if socket_path == "default":
            directory = self.tmp_path / f"a{n}"
            directory.mkdir(mode=0o700)
            socket_path = directory / "agent"
        args = [binary or self.cog.binary, "agent", *options] + (["--socket", str(socket_path)] if socket_path else [])
        if user is None:
            full_env = {k: v for k, v in {**self.cog.env, **(env or {})}.items() if v is not None}
        else:
            full_env = env
            args = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *args]
        log = self.tmp_path / f"agent-{n}.log"
        with open(log, "wb") as notes:
            proc = subprocess.Popen(args, env=full_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=notes)
        line = read_line(proc.stdout.fileno(), 30)
        agent = Agent(proc, Path(socket_path) if socket_path else None, line, log, self.runtime)
        self.started.append(agent)
        printed = AGENT_LINE.fullmatch(line)
        assert printed, f"the agent printed {line!r}, exit {proc.poll()}, notes: {agent.notes()}"
        if agent.socket is None:
            agent.socket = Path(printed.group(1))
        return agent

    def adopt(self, pid):
        """A daemon's PID, to be stopped at the end of the test."""
        self.daemons.append(pid)

    def stop_all(self):
        for agent in self.started:
            agent.stop()
        for pid in self.daemons:
            try:
                if b"cog-cred" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                    continue  # gone, and the number taken by something else
                os.kill(pid, signal.SIGTERM)
            except (FileNotFoundError, ProcessLookupError):
                continue
            try:
                poll(lambda: exited(pid), f"daemon {pid} to stop", seconds=10)
            except AssertionError:
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def agents(cog, tmp_path):
    keeper = Agents(cog, tmp_path)
    yield keeper
    keeper.stop_all()


# --- talking to a socket ourselves ------------------------------------------------------------------

def exchange(path, data, seconds=10):
    """Sends `data` on a new connection and returns every byte the other end
    sends until it closes (a reset counts as closed)."""
    received = b""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(seconds)
        s.connect(str(path))
        try:
            if data:
                s.sendall(data)
            while chunk := s.recv(65536):
                received += chunk
        except (BrokenPipeError, ConnectionResetError):
            pass
    return received


def answer_of(received):
    """A connection's answer: its last line, after any notes ({"v": 1, "note": ...})."""
    lines = [json.loads(line) for line in received.decode().splitlines()]
    assert lines and all("note" in line for line in lines[:-1]), received
    return lines[-1]


def answers(path):
    """The agent at `path` answers a well-formed request (for a profile it may not have) with a v1 answer."""
    reply = answer_of(exchange(path, b'{"v":1,"op":"status","profile":"no-such-profile"}\n'))
    return reply.get("v") == 1 and ("ok" in reply or "error" in reply)


class Relay:
    """A UNIX socket that passes each connection on to the agent's socket,
    recording every byte each way: what an `ssh -R` forward would carry."""

    def __init__(self, path, target):
        self.path = str(path)
        self.target = str(target)
        self.lock = threading.Lock()
        self.to_client = bytearray()
        self.to_agent = bytearray()
        self.connections = 0
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(128)
        self.listener.settimeout(0.2)
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while self.running:
            try:
                client, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self.connections += 1
            agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                agent.connect(self.target)
            except OSError:
                client.close()  # the client sees the agent gone, as without the relay
                agent.close()
                continue
            pumps = [threading.Thread(target=self._pump, args=(client, agent, self.to_agent), daemon=True),
                     threading.Thread(target=self._pump, args=(agent, client, self.to_client), daemon=True)]
            for pump in pumps:
                pump.start()
            threading.Thread(target=self._close_after, args=(pumps, client, agent), daemon=True).start()

    def _pump(self, source, sink, record):
        try:
            while data := source.recv(65536):
                with self.lock:
                    record.extend(data)
                sink.sendall(data)
        except OSError:
            pass
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    @staticmethod
    def _close_after(pumps, *sockets):
        for pump in pumps:
            pump.join(timeout=120)
        for s in sockets:
            s.close()

    def close(self):
        self.running = False
        self.listener.close()


# --- environments -------------------------------------------------------------------------------------

def forwarded(tmp_path, socket_path):
    """The whole environment of a machine that has only the forwarded
    socket: a fresh HOME with no configuration, no session bus, and endpoint
    variables that lead nowhere (a client's endpoint must never be used)."""
    home = tmp_path / "away"
    (home / "run").mkdir(parents=True, mode=0o700, exist_ok=True)
    nowhere = "http://127.0.0.1:9/"
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"), "XDG_STATE_HOME": str(home / ".local" / "state"),
            "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_RUNTIME_DIR": str(home / "run"),
            "DBUS_SESSION_BUS_ADDRESS": None, "COG_CRED_AGENT": str(socket_path),
            "AWS_ENDPOINT_URL": nowhere, "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER": nowhere}


def expire_tokens(cog, double, env=None):
    """The stored access and ID tokens replaced by expired ones (the refresh token kept)."""
    double.configure(issued_at_offset=-7200)
    cog.ok("refresh", env=env)
    double.configure(issued_at_offset=0)


def pieces(*tokens):
    """24-character slices of each token taken from what is its own: a JWT's
    payload and signature (the header is the same for every token of a
    pool), anywhere in an opaque token."""
    found = set()
    for token in tokens:
        parts = token.split(".")
        for part in (parts[1:] if len(parts) == 3 else [token]):
            for start in (0, max(0, len(part) // 2 - 12), max(0, len(part) - 24)):
                found.add(part[start:start + 24].encode())
    return found


def written_since(root, since, limit=64 << 20):
    """Regular files under `root` changed since `since` (a walk that follows no link and skips the unreadable)."""
    for directory, _, names in os.walk(root, onerror=lambda e: None):
        for name in names:
            path = os.path.join(directory, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_mtime >= since and info.st_size <= limit:
                yield path


def files_holding(pieces_of_tokens, paths):
    held = []
    for path in paths:
        try:
            with open(path, "rb") as f:
                content = f.read()
        except OSError:
            continue
        if any(piece in content for piece in pieces_of_tokens):
            held.append(path)
    return held


def moto_refresh_tokens(pool):
    """The refresh tokens moto issued in `pool`: the memory agent's one cannot be read anywhere else."""
    with urllib.request.urlopen(pool.url + "moto-api/data.json", timeout=30) as r:
        data = json.loads(r.read())
    pools = [p for p in data["cognitoidp"]["CognitoIdpUserPool"] if p["id"] == pool.pool_id]
    return list(pools[0]["refresh_tokens"])


def as_nobody(args, env, input=None, timeout=30):
    return subprocess.run([*AS_NOBODY, *args], env=env, input=input, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def shared_dir():
    """A directory under /tmp that the user nobody can reach (pytest's tmp_path is inside a 0700 one)."""
    path = Path(tempfile.mkdtemp(prefix="agent-e2e-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def signed_in_through(cog, double, via):
    """The double's user, configured here and signed in through the agent `via` names."""
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n", env=via)


def memory_agent_signed_in(cog, double, agents):
    """A `--memory` agent holding the double's user's session: (the agent,
    the client's environment, the access token it hands out)."""
    agent = agents.start("--memory")
    via = agent.client()
    signed_in_through(cog, double, via)
    access = cog.ok("token", env=via).stdout.strip()
    cog.remember_secret(access)
    return agent, via, access


def binaries_nobody_can_run(cog, shared_dir):
    """The front and cog-cred-cli copied where nobody can run them: the
    build may sit in a 0700 directory (CI's clone under mktemp -d). Root's,
    in a directory only root writes, so the front trusts its cog-cred-cli."""
    front = Path(cog.binary).resolve()
    cli = next(p for p in (front.parent / "cog-cred-cli", front.parent.parent / "lib" / "cog-cred" / "cog-cred-cli") if p.exists())
    directory = shared_dir / "bin"
    directory.mkdir(mode=0o755)
    for source in (front, cli):
        copy = directory / source.name
        shutil.copy(source.resolve(), copy)
        copy.chmod(0o755)
    return str(directory / front.name)


def nobodys(directory):
    """`directory` made, nobody's own, 0700."""
    directory.mkdir(parents=True, exist_ok=True)
    os.chown(directory, NOBODY, NOBODY)
    directory.chmod(0o700)
    return directory


def nobody_env(home):
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_STATE_HOME": str(home / ".state")}


# --- 1. a CI job with no session bus --------------------------------------------------------------

@pytest.fixture
def git_host(repos, pool):
    """The test git server, admitting only tokens of the moto pool."""
    issuer = f"https://cognito-idp.us-east-1.amazonaws.com/{pool.pool_id}"
    srv, url = git_server.start_git_server(repos, f"{pool.url}{pool.pool_id}/.well-known/jwks.json", [issuer],
                                           pool.client_id)
    srv.url = url
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def cluster(pool, tmp_path):
    server = token_servers.start_kubernetes(pool, tmp_path)
    yield server
    server.stop()


def test_a_ci_job_with_no_session_bus_runs_every_client_through_a_memory_agent_and_writes_no_token(
        cog, pool, helper_bin, git_host, cluster, agents, tmp_path):
    started = time.time() - 2
    # The job's environment: no session bus, a runtime directory without a
    # `bus`, its own XDG directories and TMPDIR, and a dbus-launch that
    # leaves a mark if anything tries to start a bus.
    trap = tmp_path / "trap"
    trap.mkdir()
    marker = tmp_path / "dbus-launch-ran"
    (trap / "dbus-launch").write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    (trap / "dbus-launch").chmod(0o755)
    dirs = {name: tmp_path / name for name in ("run", "state", "data", "cache", "tmp")}
    for path in dirs.values():
        path.mkdir(mode=0o700)
    cog.env.pop("DBUS_SESSION_BUS_ADDRESS")
    cog.env.update(PATH=f"{trap}:{cog.env['PATH']}", XDG_RUNTIME_DIR=str(dirs["run"]),
                   XDG_STATE_HOME=str(dirs["state"]), XDG_DATA_HOME=str(dirs["data"]),
                   XDG_CACHE_HOME=str(dirs["cache"]), TMPDIR=str(dirs["tmp"]))

    # The whole set-up of the job, as the docs give it.
    setup = subprocess.run(["sh", "-c", 'eval "$(cog-cred agent --memory --daemon)" && '
                                        'printf "%s\\n%s\\n" "$COG_CRED_AGENT" "$COG_CRED_AGENT_PID"'],
                           env=cog.env, capture_output=True, text=True, timeout=30)
    assert setup.returncode == 0, setup.stderr
    path, pid = setup.stdout.split()
    agents.adopt(int(pid))
    assert path == str(dirs["run"] / "cog-cred" / "agent")
    cog.env["COG_CRED_AGENT"] = path

    # Configured after the agent started: it reads the configuration per request.
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username)
    cog.remember_secret(pool.password)
    cog.ok("sign-in", "--password-stdin", input=pool.password + "\n")
    access = cog.ok("token").stdout.strip()
    id_token = cog.ok("token", "--id-token").stdout.strip()
    refresh_tokens = moto_refresh_tokens(pool)
    assert len(refresh_tokens) == 1
    cog.remember_secret(access, id_token, *refresh_tokens)
    assert claims(access)["token_use"] == "access" and claims(id_token)["token_use"] == "id"
    assert claims(access)["exp"] > time.time()

    assert cog.ok("get-header").stdout == f"Authorization: Bearer {access}\n"

    clone = git(cog, "clone", "-q", git_host.url + "project.git", str(tmp_path / "clone"),
                helper="cog-cred --profile default")
    assert clone.returncode == 0, clone.stderr
    assert (tmp_path / "clone" / "README").read_text() == "hello\n"
    assert {entry["jti"] for entry in git_server_admin(git_host, "log") if entry["status"] == 200} == {claims(access)["jti"]}

    pods = kubectl(KUBECTL_120, cog, kubeconfig(tmp_path, cluster, V1BETA1))
    assert pods.returncode == 0, pods.stderr
    assert json.loads(pods.stdout)["kind"] == "PodList"
    assert admitted(cluster, pool), cluster.seen

    ran = cog.ok("exec", "--", "sh", "-c", 'printf "%s|%s" "$COG_CRED_ACCESS_TOKEN" "$COG_CRED_ID_TOKEN"')
    assert ran.stdout == f"{access}|{id_token}"

    # Nothing of any token in a file: the test's whole directory (HOME, the
    # XDG directories, TMPDIR, the clone, the kubeconfig), /dev/shm, and
    # whatever changed under /tmp during the test.
    wanted = pieces(access, id_token, *refresh_tokens)
    everything = [*files_under(tmp_path, "/dev/shm"), *written_since("/tmp", started)]
    assert files_holding(wanted, everything) == []
    assert not marker.exists(), "something tried to start a session bus"


# --- 2. the keyring-backed agent reads the keyring every time -------------------------------------------

def test_the_keyring_backed_agent_sees_deleted_items_and_a_locked_keyring_at_the_next_read(cog, double, own_bus,
                                                                                          agents):
    signed_in_on_double(cog, double.url, double, USER, PASSWORD)
    agent = agents.start()  # the Secret Service: own_bus's keyring, free to lock
    via = agent.client()
    reads = [(["token"], None), (["get-header"], None),
             (["git-credential", "--profile", "default", "get"], GIT_REQUEST)]
    access = stored(own_bus, "access")
    cog.remember_secret(access, stored(own_bus, "refresh"))
    assert cog.ok("token", env=via).stdout == access + "\n"

    cleared = own_bus.secret_tool("clear", "service", "cog-cred", "profile", "default")
    assert cleared.returncode == 0, cleared.stderr
    for args, stdin in reads:
        result = cog.run(*args, input=stdin, env=via)
        assert (result.returncode, result.stdout) == (77, ""), (args, result.returncode, result.stderr)
        assert "not signed in" in result.stderr, (args, result.stderr)

    # Signed in again through the agent: the tokens go into the keyring it serves.
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n", env=via)
    access = stored(own_bus, "access")
    assert access is not None
    cog.remember_secret(access, stored(own_bus, "refresh"))
    assert cog.ok("token", env=via).stdout == access + "\n"

    lock_collection(own_bus)
    for args, stdin in reads:
        result = cog.run(*args, input=stdin, env=via)
        assert (result.returncode, result.stdout) == (69, ""), (args, result.returncode, result.stderr)
        assert "locked" in result.stderr, (args, result.stderr)
    assert agent.alive()


# --- 3. a forwarded read from a machine with no configuration -------------------------------------------

# Every reading command a machine with no configuration may run, and how
# each shows the access token it was handed.
FORWARDED_READS = {
    "token": (["token"], None, lambda out, access: out == access + "\n"),
    "token --format json": (["token", "--format", "json"], None,
                            lambda out, access: json.loads(out)["token"] == access),
    "token --format env": (["token", "--format", "env"], None, lambda out, access: access in out),
    "token --id-token": (["token", "--id-token"], None, lambda out, access: claims(out.strip())["token_use"] == "id"),
    "get-header": (["get-header"], None, lambda out, access: out == f"Authorization: Bearer {access}\n"),
    "whoami": (["whoami"], None, lambda out, access: out == USER + "\n"),
    "status": (["status"], None, lambda out, access: USER in out),
    "status --json": (["status", "--json"], None,
                      lambda out, access: [json.loads(out)[k] for k in ("signed_in", "session")] == [True, "stands"]),
    "exec": (["exec", "--", "sh", "-c", 'printf %s "$COG_CRED_ACCESS_TOKEN"'], None, lambda out, access: out == access),
    "kubectl-credential": (["kubectl-credential"], None,
                           lambda out, access: json.loads(out)["status"]["token"] == access),
    "docker-credential get": (["docker-credential", "get"], REGISTRY + "\n",
                              lambda out, access: json.loads(out)["Secret"] == access),
    "git-credential get --profile": (["git-credential", "--profile", "default", "get"], GIT_REQUEST,
                                     lambda out, access: f"password={access}\n" in out),
}


# Requests a client could write by hand for the refresh token, the client
# secret or the device's keys: whatever the agent answers, none may come back.
ALL_KINDS = b'["access","id","refresh","client-secret","identity-id","aws-credentials","device"]'
BINDING = f'{{"user-pool-id":"{DOUBLE_POOL_ID}","client-id":"{DOUBLE_CLIENT_ID}"}}'.encode()
RAW_ASKS_FOR_SECRETS = [
    b'{"v":1,"op":"tokens","profile":"default","kinds":["refresh"]}\n',
    b'{"v":1,"op":"tokens","profile":"default","kinds":' + ALL_KINDS + b'}\n',
    b'{"v":1,"op":"read","profile":"default","kinds":' + ALL_KINDS + b',"binding":' + BINDING + b'}\n',
    b'{"v":1,"op":"read","profile":"default","kinds":["refresh"],"binding":' + BINDING + b'}\n',
    b'{"v":1,"op":"read","profile":"default","kinds":["client-secret"],"binding":' + BINDING + b'}\n',
    b'{"v":1,"op":"read","profile":"default","kinds":' + ALL_KINDS + b'}\n',
    b'{"v":1,"op":"profile","profile":"default"}\n',
    b'{"v":1,"op":"status","profile":"default"}\n',
    b'{"v":1,"op":"refresh","profile":"default"}\n',
    b'{"v":1,"op":"secret-hash","profile":"default","username":"' + USER.encode() + b'"}\n',
]


def test_a_forwarded_read_is_refreshed_by_the_agent_and_never_receives_the_refresh_token(cog, bus, double, agents,
                                                                                         tmp_path):
    # The agent's machine: a profile with a client secret and rotating
    # refresh tokens, signed in, its access token expired.
    double.configure(client_secret=CLIENT_SECRET, rotate_refresh_tokens=True)
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD, CLIENT_SECRET)
    configure_on_double(cog, double.url, "--username", USER, "--docker-registry", REGISTRY, "--client-secret-stdin",
                        input=CLIENT_SECRET + "\n")
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    expire_tokens(cog, double)
    expired = stored(bus, "access")
    assert claims(expired)["exp"] < time.time()
    refresh_tokens = {stored(bus, "refresh")}
    cog.remember_secret(expired, *refresh_tokens)

    agent = agents.start()
    relay = Relay(tmp_path / "relay", agent.socket)
    try:
        away = forwarded(tmp_path, relay.path)
        refreshes, checks = double.calls("GetTokensFromRefreshToken"), double.calls("GetUser")
        first = cog.run("token", env=away)
        assert first.returncode == 0, first.stderr
        access = first.stdout.strip()
        cog.remember_secret(access)
        # The agent refreshed, with its own configuration: the client's leads nowhere.
        assert access != expired and claims(access)["exp"] > time.time()
        assert double.calls("GetTokensFromRefreshToken") == refreshes + 1
        assert stored(bus, "access") == access
        refresh_tokens.add(stored(bus, "refresh"))  # rotated by that refresh
        cog.remember_secret(*refresh_tokens)

        for name, (args, stdin, shows) in FORWARDED_READS.items():
            result = cog.run(*args, input=stdin, env=away)
            assert result.returncode == 0, (name, result.stderr, result.stdout)
            assert shows(result.stdout, access), (name, result.stdout)
        # status asked Cognito, from the agent (the client cannot reach any endpoint).
        assert double.calls("GetUser") > checks
        # Asked outright, on the wire, for what must never leave the agent.
        for request in RAW_ASKS_FOR_SECRETS:
            exchange(relay.path, request)  # recorded by the relay, checked below
        refresh_tokens.add(stored(bus, "refresh"))
        connections = relay.connections
    finally:
        relay.close()

    toward_client = bytes(relay.to_client)
    assert connections >= 1 + len(FORWARDED_READS)
    assert access.encode() in toward_client  # the relay did carry the reads
    for piece in pieces(*refresh_tokens):
        assert piece not in toward_client, "a part of a refresh token crossed the socket towards the client"
    assert CLIENT_SECRET.encode() not in toward_client


def test_a_forwarded_reads_warning_reaches_the_client(cog, bus, double, proxy, agents, tmp_path):
    plan(proxy)
    signed_in_on_double(cog, proxy.url, double, USER, PASSWORD)
    # 300 s of 3600 left: due for a refresh by the margin alone.
    double.configure(issued_at_offset=-3300)
    cog.ok("refresh")
    double.configure(issued_at_offset=0)
    access = stored(bus, "access")
    cog.remember_secret(access, stored(bus, "refresh"))
    agent = agents.start()
    plan(proxy, {"mode": "refuse", "times": -1})
    try:
        result = cog.run("token", env=forwarded(tmp_path, agent.socket))
    finally:
        plan(proxy)
    assert (result.returncode, result.stdout) == (0, access + "\n"), result.stderr
    assert "warning: could not refresh (" in result.stderr, result.stderr
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(claims(access)["exp"]))
    assert f"it expires at {expires}" in result.stderr, result.stderr


# --- 4. many readers at once ---------------------------------------------------------------------

@pytest.mark.parametrize("store", ["memory", "keyring"])
def test_64_concurrent_reads_through_the_agent_on_an_expired_token_make_one_refresh(cog, bus, double, proxy, agents,
                                                                                    store):
    plan(proxy)
    agent = agents.start(*(["--memory"] if store == "memory" else []))
    via = agent.client()
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, proxy.url, "--username", USER)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n", env=via)
    expire_tokens(cog, double, env=via)
    refreshes = double.calls("GetTokensFromRefreshToken")
    # The refresh held a while, so the readers pile up behind it.
    plan(proxy, {"mode": "delay", "seconds": 0.6, "actions": ["GetTokensFromRefreshToken"]})
    env = {k: v for k, v in {**cog.env, **via}.items() if v is not None}
    procs = [subprocess.Popen([cog.binary, "token"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(64)]
    try:
        results = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]
    finally:
        plan(proxy)
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [r[0] for r in results] == [0] * 64, [r[2] for r in results if r[0]]
    printed = {r[1] for r in results}
    assert len(printed) == 1, printed
    token = printed.pop().strip()
    assert claims(token)["exp"] > time.time()
    assert double.calls("GetTokensFromRefreshToken") == refreshes + 1
    if store == "keyring":
        assert token == stored(bus, "access")
    else:
        assert stored(bus, "access") is None  # the memory agent wrote nothing to the keyring


def test_a_failed_refresh_through_the_agent_exits_as_without_it(cog, double, proxy, agents):
    plan(proxy)
    agent = agents.start("--memory")
    via = agent.client()
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, proxy.url, "--username", USER,
                        "--connect-timeout", "1", "--request-timeout", "1", "--command-timeout", "4")
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n", env=via)
    expire_tokens(cog, double, env=via)
    # Cognito out of reach, the token expired: 75, nothing handed out.
    plan(proxy, {"mode": "refuse", "times": -1})
    try:
        unreachable = cog.run("token", env=via)
    finally:
        plan(proxy)
    assert (unreachable.returncode, unreachable.stdout) == (75, ""), (unreachable.returncode, unreachable.stderr)
    assert "cannot reach Cognito" in unreachable.stderr
    # The session revoked: Cognito refuses the refresh, 77.
    double.revoke(USER)
    refused = cog.run("token", env=via)
    assert (refused.returncode, refused.stdout) == (77, ""), (refused.returncode, refused.stderr)


# --- 5. the agent gone ------------------------------------------------------------------------------

def test_a_killed_agent_means_69_naming_the_socket_and_nothing_falls_back_to_the_keyring(cog, bus, signed_in, agents):
    access = stored(bus, "access")
    cog.remember_secret(access, stored(bus, "refresh"))
    agent = agents.start()
    # The session bus stays in the client's environment: the keyring would answer.
    via = {"COG_CRED_AGENT": str(agent.socket)}
    assert cog.ok("token", env=via).stdout == access + "\n"
    reads = [(["token"], None), (["get-header"], None), (["exec", "--", "true"], None), (["kubectl-credential"], None),
             (["git-credential", "--profile", "default", "get"], GIT_REQUEST), (["status"], None), (["whoami"], None)]

    def all_refused(path, what):
        for args, stdin in reads:
            result = cog.run(*args, input=stdin, env={"COG_CRED_AGENT": str(path)})
            assert (result.returncode, result.stdout) == (69, ""), (what, args, result.returncode, result.stderr)
            assert str(path) in result.stderr and "COG_CRED_AGENT" in result.stderr, (what, args, result.stderr)
            assert "cog-cred agent" in result.stderr, (what, args, result.stderr)
            assert result.stderr.count("\n") == 1, (what, args, result.stderr)

    agent.stop(signal.SIGKILL)
    assert agent.socket.exists()  # killed: its socket is left, and nothing listens
    all_refused(agent.socket, "stale socket")
    agent.socket.unlink()
    all_refused(agent.socket, "no socket")
    # Named as COG_CRED_AGENT gives it, relative paths too.
    all_refused("no-such-directory/agent", "a relative path")
    # Without COG_CRED_AGENT the keyring does answer: the 69s above were a choice.
    assert cog.ok("token").stdout == access + "\n"


def _stand_in(path, answer):
    """A socket at `path` that takes one connection, reads the request and
    calls answer(connection) in a thread: an agent behind a forward that is
    gone, or one that is slow."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def serve():
        connection, _ = listener.accept()
        with connection:
            connection.settimeout(10)
            connection.recv(65536)
            answer(connection)
        listener.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def test_a_forward_whose_agent_is_gone_is_69_and_a_slow_agent_is_said_to_be_awaited(cog, tmp_path):
    # sshd takes the connection of an `ssh -R` socket and closes it when the
    # agent on the other side is gone: unreachable (69), not a broken protocol.
    gone = tmp_path / "gone"
    served = _stand_in(gone, lambda connection: None)
    result = cog.run("token", env={"COG_CRED_AGENT": str(gone), "DBUS_SESSION_BUS_ADDRESS": None})
    served.join(10)
    assert (result.returncode, result.stdout) == (69, ""), result.stderr
    assert str(gone) in result.stderr and "still running" in result.stderr

    # An agent that says nothing for more than 5 s: the person is told what the command waits for.
    slow = tmp_path / "slow"
    refused = b'{"v":1,"error":{"category":"not-authenticated","message":"not signed in (profile \'default\')"}}\n'
    served = _stand_in(slow, lambda connection: (time.sleep(6), connection.sendall(refused)))
    result = cog.run("token", env={"COG_CRED_AGENT": str(slow), "DBUS_SESSION_BUS_ADDRESS": None})
    served.join(10)
    assert result.returncode == 77, result.stderr
    assert result.stderr.splitlines() == [f"cog-cred: waiting for the agent at {slow} to answer",
                                          "cog-cred: error: not signed in (profile 'default')"]


# --- 6. and 7. other users ------------------------------------------------------------------------

# Run as nobody: connects, sends argv[2], and prints as JSON every byte received before the agent closed.
RAW_CLIENT = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
received, error = b"", None
try:
    s.sendall(sys.argv[2].encode())
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        received += chunk
except OSError as e:
    error = type(e).__name__
print(json.dumps({"received": received.decode("latin-1"), "error": error}))
"""


@needs_root
def test_another_user_connecting_even_to_a_0777_socket_gets_nothing(cog, double, agents, shared_dir):
    directory = shared_dir / "root-agent"
    directory.mkdir(mode=0o700)
    agent = agents.start("--memory", socket_path=directory / "agent")
    via = agent.client()
    signed_in_through(cog, double, via)
    access = cog.ok("token", env=via).stdout.strip()
    cog.remember_secret(access)
    # As careless as can be: everyone may reach and write the socket.
    directory.chmod(0o755)
    agent.socket.chmod(0o777)

    request = '{"v":1,"op":"tokens","profile":"default","kinds":["access","id"]}\n'
    raw = as_nobody([SYSTEM_PYTHON, "-c", RAW_CLIENT, str(agent.socket), request], env={"PATH": "/usr/bin:/bin"})
    assert raw.returncode == 0, raw.stderr
    assert json.loads(raw.stdout)["received"] == "", raw.stdout
    silent = as_nobody([SYSTEM_PYTHON, "-c", RAW_CLIENT, str(agent.socket), ""], env={"PATH": "/usr/bin:/bin"})
    assert json.loads(silent.stdout)["received"] == "", silent.stdout
    # nobody's own cog-cred gets nothing either.
    home = nobodys(shared_dir / "nobody-home")
    read = as_nobody([binaries_nobody_can_run(cog, shared_dir), "token"], env={**nobody_env(home), "COG_CRED_AGENT": str(agent.socket)})
    # nobody's client knows from the agent's credentials that root's agent
    # serves root only, says so (69) and sends nothing; nothing handed out.
    assert (read.returncode, read.stdout) == (69, ""), (read.returncode, read.stdout, read.stderr)
    assert f"belongs to uid 0 and serves its own user only, not you (uid {NOBODY}): nothing was sent to it" in read.stderr
    assert access not in read.stderr

    poll(lambda: f"refused a connection from uid {NOBODY}" in agent.notes(), "the agent to note the refusal")
    assert agent.alive()
    assert cog.ok("token", env=via).stdout == access + "\n"


# Run as nobody: squats a socket path, and records per connection how many bytes came before the client closed.
SQUATTER = r"""
import socket, sys, threading
path, record = sys.argv[1], sys.argv[2]
def note(line):
    with open(record, "a") as f:
        f.write(line + "\n")
def serve(c):
    data = b""
    c.settimeout(20)
    try:
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    note("closed %d" % len(data))
    c.close()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(64)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    note("accepted")
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""


@needs_root
def test_a_squatted_socket_of_another_user_gets_nothing_from_the_client(cog, double, shared_dir):
    directory = nobodys(shared_dir / "squat")
    record = directory / "record"
    squatter = subprocess.Popen([*AS_NOBODY, SYSTEM_PYTHON, "-c", SQUATTER, str(directory / "agent"), str(record)],
                                env={"PATH": "/usr/bin:/bin"}, stdout=subprocess.PIPE)
    try:
        assert read_line(squatter.stdout.fileno(), 20) == "listening\n"
        double.add_user(USER, PASSWORD)
        cog.remember_secret(PASSWORD, CLIENT_SECRET)
        configure_on_double(cog, double.url, "--username", USER)
        via = {"COG_CRED_AGENT": str(directory / "agent"), "DBUS_SESSION_BUS_ADDRESS": None}
        for args, stdin in ((["sign-in", "--password-stdin"], PASSWORD + "\n"),
                            (["configure", "--client-secret-stdin"], CLIENT_SECRET + "\n"),
                            (["token"], None), (["get-header"], None)):
            result = cog.run(*args, input=stdin, env=via)
            assert (result.returncode, result.stdout) == (69, ""), (args, result.returncode, result.stderr)
            assert f"uid {NOBODY}" in result.stderr, (args, result.stderr)

        def notes():
            return record.read_text().splitlines() if record.exists() else []

        # No command even connected: the socket is nobody's, which the client
        # sees before it connects. One connection of ours, made last, is taken
        # first that any of theirs would have been before (a backlog is in
        # order): once the squatter has taken it, it has taken all.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.connect(str(directory / "agent"))
            poll(lambda: notes().count("accepted") >= 1, "the squatter to take the probe")
        assert notes().count("accepted") == 1, notes()
    finally:
        squatter.terminate()
        squatter.wait(timeout=10)
        squatter.stdout.close()


@needs_root
def test_an_agent_of_another_user_gets_no_sign_in_and_holds_nothing_afterwards(cog, double, agents, shared_dir):
    home = nobodys(shared_dir / "nobody-home")
    directory = nobodys(shared_dir / "nobody-agent")
    env = nobody_env(home)
    theirs = binaries_nobody_can_run(cog, shared_dir)
    agent = agents.start("--memory", socket_path=directory / "agent", env=env, user=NOBODY, binary=theirs)
    # --memory: not dumpable, so /proc/PID's files belong to root, not to nobody.
    assert os.stat(f"/proc/{agent.pid}/environ").st_uid == 0

    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    via = agent.client()
    sign_ins = double.calls("InitiateAuth:USER_SRP_AUTH")
    for args, stdin in ((["sign-in", "--password-stdin"], PASSWORD + "\n"), (["token"], None), (["get-header"], None),
                        (["whoami"], None)):
        result = cog.run(*args, input=stdin, env=via)
        assert (result.returncode, result.stdout) == (69, ""), (args, result.returncode, result.stderr)
        assert f"uid {NOBODY}" in result.stderr, (args, result.stderr)
    # The agent's owner is checked before Cognito is asked: no session was opened only to be dropped.
    assert double.calls("InitiateAuth:USER_SRP_AUTH") == sign_ins

    # nobody, with the same profile, asks its own agent: it holds no session.
    configured = as_nobody([theirs, "configure", "--user-pool-id", DOUBLE_POOL_ID, "--client-id", DOUBLE_CLIENT_ID,
                            "--endpoint-url", double.url, "--username", USER],
                           env={**env, "COG_CRED_AGENT": str(agent.socket)})
    assert configured.returncode == 0, configured.stderr
    held = as_nobody([theirs, "token"], env={**env, "COG_CRED_AGENT": str(agent.socket)})
    assert (held.returncode, held.stdout) == (77, ""), (held.returncode, held.stderr)
    assert "not signed in" in held.stderr
    assert agent.alive()


# --- 8. bad clients --------------------------------------------------------------------------------

GARBAGE = [
    b"\x00\xff\xfe\x01 not even text\n",
    b"not json at all\n",
    b'{"v":1,"op":"tokens"\n',
    b"[1,2,3]\n",
    b'{"v":"1","op":"tokens","profile":"default","kinds":["access"]}\n',
    b'{"v":1,"op":"no-such-op","profile":"default"}\n',
    # Versions no whole number holds: an error, never a crash.
    b'{"v":1e300,"op":"tokens"}\n',
    b'{"v":9223372036854775807,"op":"tokens"}\n',
    # Tokens are access and ID tokens only.
    b'{"v":1,"op":"tokens","profile":"default","kinds":["refresh"]}\n',
    b'{"v":1,"op":"tokens","profile":"default","kinds":["access"],"min-ttl":999999999}\n',
]


def test_garbage_oversized_and_stalled_clients_do_not_hold_up_the_others(cog, double, agents):
    agent, via, access = memory_agent_signed_in(cog, double, agents)

    for data in GARBAGE:
        received = exchange(agent.socket, data)
        # Nothing, or an error: never a token, and the agent is still there.
        if received:
            assert "error" in answer_of(received), (data, received)
        assert access.encode() not in received, data
        assert agent.alive(), (data, agent.notes())

    # Stalled clients: two that say nothing, one that stops in mid-line.
    stalled = []
    for opening in (b"", b"", b'{"v":1,"op":"tok'):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(str(agent.socket))
        s.sendall(opening)
        stalled.append(s)
    # An oversized one, still sending while the others read: 1.5 MiB, no newline.
    flooded = {}

    def flood():
        try:
            flooded["received"] = exchange(agent.socket, b'{"v":1,"op":"tokens","profile":"' + b"x" * (3 << 19),
                                           seconds=30)
        except OSError as e:
            flooded["error"] = e

    flooder = threading.Thread(target=flood, daemon=True)
    flooder.start()
    try:
        # Answered while they hang on: within the timeout, not a timing guess.
        for args in (["token"], ["get-header"]):
            result = cog.run(*args, env=via, timeout=5)
            assert result.returncode == 0 and access in result.stdout, (args, result.stderr)
        flooder.join(timeout=40)
        assert not flooder.is_alive(), "the oversized request was never refused"
        # Refused: the agent answered or closed; it did not leave the sender hanging.
        assert not isinstance(flooded.get("error"), TimeoutError), flooded
        if flooded.get("received"):
            assert "error" in answer_of(flooded["received"]), flooded["received"][:200]
        # A client silent for 10 s is dropped.
        for s in stalled:
            s.settimeout(30)
            try:
                rest = s.recv(65536)
                while rest and (more := s.recv(65536)):
                    rest += more
            except ConnectionResetError:
                rest = b""
            except TimeoutError:
                raise AssertionError("a client silent for 30 s was not dropped") from None
            assert rest == b"" or "error" in answer_of(rest), rest
    finally:
        for s in stalled:
            s.close()
    assert agent.alive(), agent.notes()
    assert cog.ok("token", env=via, timeout=5).stdout == access + "\n"


# --- 9. the other commands through the agent --------------------------------------------------------

def test_status_whoami_refresh_and_sign_out_through_the_agent(cog, bus, double, agents):
    agent = agents.start("--memory")
    via = agent.client()
    signed_in_through(cog, double, via)
    first = cog.ok("token", env=via).stdout.strip()
    cog.remember_secret(first)
    assert cog.ok("whoami", env=via).stdout == USER + "\n"

    checks = double.calls("GetUser")
    status = json.loads(cog.ok("status", "--json", env=via).stdout)
    assert (status["signed_in"], status["session"], status["username"]) == (True, "stands", USER), status
    assert double.calls("GetUser") == checks + 1
    # The agent asked, with its own proxy and FIPS settings: not this shell's,
    # which status does not pretend apply.
    shell_proxy = {**via, "HTTPS_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}
    status = json.loads(cog.ok("status", "--json", env=shell_proxy).stdout)
    assert status["requests_by_agent"] == str(agent.socket) and "proxy" not in status and "endpoint" not in status
    assert f"network:       the agent at {agent.socket} sends this profile's requests" in cog.ok("status", env=shell_proxy).stdout

    refreshes = double.calls("GetTokensFromRefreshToken")
    cog.ok("refresh", env=via)
    assert double.calls("GetTokensFromRefreshToken") == refreshes + 1
    second = cog.ok("token", env=via).stdout.strip()
    cog.remember_secret(second)
    assert second != first

    revocations = double.calls("RevokeToken")
    cog.ok("sign-out", env=via)
    assert double.calls("RevokeToken") == revocations + 1  # the agent revoked the session at Cognito
    for args in (["token"], ["get-header"], ["whoami"]):
        after = cog.run(*args, env=via)
        assert (after.returncode, after.stdout) == (77, ""), (args, after.returncode, after.stderr)
        assert "not signed in" in after.stderr
    assert bus.items(service="cog-cred") == []  # a memory agent: never the keyring


def test_a_client_secret_configured_through_the_agent_stays_in_the_agent(cog, bus, double, agents):
    double.configure(client_secret=CLIENT_SECRET)
    agent = agents.start("--memory")
    via = agent.client()
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD, CLIENT_SECRET)
    configure_on_double(cog, double.url, "--username", USER, "--client-secret-stdin", input=CLIENT_SECRET + "\n",
                        env=via)
    # The double checks SECRET_HASH: the sign-in and the refresh work only
    # if the agent computed it with the secret.
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n", env=via)
    cog.ok("refresh", env=via)
    cog.remember_secret(cog.ok("token", env=via).stdout.strip())
    assert CLIENT_SECRET not in cog.config_file.read_text()
    assert bus.items(service="cog-cred") == []


# --- 10. the agent's own life --------------------------------------------------------------------

def test_daemon_output_is_evaluated_by_sh_and_its_socket_is_private(cog, agents, tmp_path):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {k: v for k, v in {**cog.env, "XDG_RUNTIME_DIR": str(runtime), "DBUS_SESSION_BUS_ADDRESS": None}.items()
           if v is not None}
    # capture_output: the run ends only when no process holds the pipes,
    # so a daemon that kept the caller's stdout or stderr would time it out.
    evaluated = subprocess.run(["sh", "-c", 'eval "$("$0" agent --memory --daemon)" && '
                                            'printf "%s %s\\n" "$COG_CRED_AGENT" "$COG_CRED_AGENT_PID"', cog.binary],
                               env=env, capture_output=True, text=True, timeout=20)
    assert evaluated.returncode == 0, evaluated.stderr
    path, pid = evaluated.stdout.split()
    pid = int(pid)
    agents.adopt(pid)
    path = Path(path)
    assert path == runtime / "cog-cred" / "agent"
    assert stat.S_ISSOCK(path.stat().st_mode)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    assert path.stat().st_uid == os.getuid()
    assert not exited(pid) and b"cog-cred" in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert os.getsid(pid) != os.getsid(0)  # a session of its own
    assert [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in (0, 1, 2)] == ["/dev/null"] * 3
    assert answers(path)

    os.kill(pid, signal.SIGTERM)
    poll(lambda: exited(pid), "the daemon to stop on SIGTERM")
    assert not path.exists()

    # What it prints, exactly, for a socket named with --socket; its notes go to --log.
    named = tmp_path / "named" / "agent"
    named.parent.mkdir(mode=0o700)
    log = tmp_path / "named.log"
    printed = subprocess.run([cog.binary, "agent", "--memory", "--daemon", "--socket", str(named), "--log", str(log)],
                             env=env, capture_output=True, text=True, timeout=20)
    assert printed.returncode == 0, printed.stderr
    shape = re.fullmatch(rf"COG_CRED_AGENT={re.escape(str(named))}; export COG_CRED_AGENT;\n"
                         r"COG_CRED_AGENT_PID=(\d+); export COG_CRED_AGENT_PID;\n", printed.stdout)
    assert shape, printed.stdout
    pid = int(shape.group(1))
    agents.adopt(pid)
    assert answers(named)
    assert os.readlink(f"/proc/{pid}/fd/2") == str(log)
    poll(lambda: f"listening on {named}" in log.read_text(), "the daemon's note in its --log")


def test_in_the_foreground_without_a_runtime_directory_the_socket_is_in_a_new_private_directory(cog, agents,
                                                                                               tmp_path):
    tmpdir = tmp_path / "t"
    tmpdir.mkdir()
    agent = agents.start("--memory", socket_path=None, env={"XDG_RUNTIME_DIR": None, "TMPDIR": str(tmpdir)})
    assert agent.line == f"COG_CRED_AGENT={agent.socket}; export COG_CRED_AGENT;\n"
    assert agent.socket.name == "agent"
    assert agent.socket.parent.parent == tmpdir and re.fullmatch(r"cog-cred-.{6}", agent.socket.parent.name)
    assert oct(agent.socket.stat().st_mode & 0o777) == "0o600"
    assert oct(agent.socket.parent.stat().st_mode & 0o777) == "0o700"
    assert answers(agent.socket)
    # --memory: its memory locked, or one note saying why not.
    status = Path(f"/proc/{agent.pid}/status").read_text()
    locked_kb = int(re.search(r"VmLck:\s+(\d+)", status).group(1))
    assert locked_kb > 0 or "lock" in agent.notes(), (locked_kb, agent.notes())

    assert agent.stop(signal.SIGTERM) == 0
    assert not agent.socket.exists() and not agent.socket.parent.exists()


def test_a_runtime_directory_that_is_not_private_is_passed_over_for_tmpdir(cog, agents, tmp_path):
    runtime = tmp_path / "open-run"
    runtime.mkdir()
    runtime.chmod(0o755)
    tmpdir = tmp_path / "t"
    tmpdir.mkdir()
    agent = agents.start("--memory", socket_path=None, env={"XDG_RUNTIME_DIR": str(runtime), "TMPDIR": str(tmpdir)})
    assert agent.socket.parent.parent == tmpdir, agent.socket
    assert not (runtime / "cog-cred").exists()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_each_stop_signal_removes_the_socket_and_exits_0(cog, agents, sig):
    agent = agents.start("--memory")
    assert agent.socket.exists()
    assert agent.stop(sig) == 0, agent.notes()
    assert not agent.socket.exists()


def test_a_second_agent_on_a_live_socket_exits_69_and_the_first_keeps_it(cog, agents):
    first = agents.start("--memory")
    second = subprocess.run([cog.binary, "agent", "--memory", "--socket", str(first.socket)], env=cog.env,
                            capture_output=True, text=True, timeout=20)
    assert (second.returncode, second.stdout) == (69, ""), (second.returncode, second.stderr)
    assert str(first.socket) in second.stderr
    assert first.alive() and answers(first.socket)


def test_a_stale_socket_is_replaced(cog, agents, tmp_path):
    directory = tmp_path / "stale"
    directory.mkdir(mode=0o700)
    path = directory / "agent"
    # A socket file nothing listens on, as a killed agent leaves it.
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left.bind(str(path))
    left.close()
    assert stat.S_ISSOCK(path.stat().st_mode)
    agent = agents.start("--memory", socket_path=path)
    assert answers(agent.socket)


def test_a_socket_path_over_107_bytes_exits_64(cog, tmp_path):
    path = tmp_path / ("d" * max(1, 120 - len(str(tmp_path)))) / "agent"
    assert len(str(path).encode()) > 107
    result = subprocess.run([cog.binary, "agent", "--memory", "--socket", str(path)], env=cog.env,
                            capture_output=True, text=True, timeout=20)
    assert (result.returncode, result.stdout) == (64, ""), (result.returncode, result.stderr)
    assert not path.exists()


def test_a_request_of_another_protocol_version_is_answered_with_an_error_naming_both(cog, agents):
    agent = agents.start("--memory")
    reply = answer_of(exchange(agent.socket, b'{"v":99,"op":"tokens","profile":"default","kinds":["access"]}\n'))
    assert "ok" not in reply and "error" in reply, reply
    message = reply["error"]["message"]
    assert "99" in message and "1" in message.replace("99", ""), message
    assert agent.alive()



# --- 10. bounds for whoever reaches the socket (#61) --------------------------------------------------

def resident_kib(pid):
    """The process's resident set (VmRSS), in KiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))


def test_a_profile_whose_endpoint_hangs_holds_up_no_read_of_another(cog, bus, double, proxy, agents):
    """Profile b's endpoint (the fault proxy) holds every request; ten reads
    of b wait on it, more than the agent answers for one profile at once.
    Profile a's read, due a refresh by its margin alone, is refreshed at its
    own endpoint meanwhile: nothing of b's waits in its way."""
    agent = agents.start("--memory")
    via = agent.client()
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER, profile="a")
    configure_on_double(cog, proxy.url, "--username", USER, profile="b")
    for name in ("a", "b"):
        cog.ok("sign-in", "-p", name, "--password-stdin", input=PASSWORD + "\n", env=via)
    # b's tokens expired; a's with 100 s of their hour left, inside the margin.
    for name, offset in (("b", -7200), ("a", -3500)):
        double.configure(issued_at_offset=offset)
        cog.ok("refresh", "-p", name, env=via)
    double.configure(issued_at_offset=0)
    stored_a = cog.ok("token", "-p", "a", "--min-ttl", "1", env=via).stdout.strip()

    clear_fault_log(proxy)
    plan(proxy, {"mode": "hold", "seconds": 60, "times": -1})
    waiting = [subprocess.Popen([cog.binary, "token", "-p", "b"], env={k: v for k, v in {**cog.env, **via}.items() if v is not None},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(10)]
    try:
        wait_for_request(proxy, "GetTokensFromRefreshToken")
        started = time.monotonic()
        read = cog.run("token", "-p", "a", env=via, timeout=30)
        took = time.monotonic() - started
        assert read.returncode == 0 and read.stderr == "", read.stderr
        # Refreshed at a's endpoint, not handed out stale after a wait.
        fresh = read.stdout.strip()
        assert fresh != stored_a and claims(fresh)["exp"] > claims(stored_a)["exp"]
        assert took < 3, f"a's read took {took:.1f} s while b's endpoint hung"
        started = time.monotonic()
        status = cog.run("status", "-p", "a", env=via, timeout=30)
        assert status.returncode == 0 and time.monotonic() - started < 3, status.stderr
        assert all(p.poll() is None for p in waiting), "b's reads were not waiting on its endpoint"
    finally:
        plan(proxy)
        release(proxy)
        outcomes = [(p.wait(timeout=90), p.communicate()) for p in waiting]
    # b's reads are answered once its endpoint answers.
    assert all(status == 0 and out.count(".") == 2 for status, (out, _) in outcomes), outcomes


def test_hundreds_of_silent_connections_shut_no_reader_out(cog, bus, double, agents):
    agent, via, access = memory_agent_signed_in(cog, double, agents)
    silent = []
    try:
        for _ in range(300):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(agent.socket))
            silent.append(s)
        for args in (["token"], ["get-header"]):
            result = cog.run(*args, env=via, timeout=5)
            assert result.returncode == 0 and access in result.stdout, (args, result.stderr)
        assert cog.run("status", env=via, timeout=5).returncode == 0
        # Past the bound (2,048 at most, fewer where the descriptors allow
        # fewer), the oldest still sending its request is closed to make room.
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = 2400
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip(f"the test's own descriptor limit ({hard}) is below {wanted}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
        try:
            for _ in range(wanted - 300 - 64):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(str(agent.socket))
                silent.append(s)
            result = cog.run("token", env=via, timeout=5)
            assert (result.returncode, result.stdout) == (0, access + "\n"), result.stderr
            poll(lambda: "closed the oldest connection still sending its request" in agent.notes(), "the agent's note")
            # The first of them was closed by the agent: it reads the end.
            silent[0].settimeout(10)
            assert silent[0].recv(1) == b""
        finally:
            for s in silent:
                s.close()
            silent.clear()
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    finally:
        for s in silent:
            s.close()
    assert agent.alive(), agent.notes()


def test_writes_for_profiles_the_agent_does_not_configure_are_refused_and_its_memory_stays_bounded(cog, bus, double,
                                                                                                   agents):
    agent, via, access = memory_agent_signed_in(cog, double, agents)
    before = resident_kib(agent.pid)
    secret = "x" * (900 << 10)
    context = {"user-pool-id": DOUBLE_POOL_ID, "client-id": DOUBLE_CLIENT_ID}
    refusals = []

    def write(first):
        for n in range(first, first + 30):
            request = {"v": 1, "op": "write", "profile": f"nowhere-{n}", "kind": "refresh", "secret": secret, "context": context}
            refusals.append(answer_of(exchange(agent.socket, json.dumps(request).encode() + b"\n", seconds=30)))

    writers = [threading.Thread(target=write, args=(first,)) for first in range(0, 300, 30)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=120)
    assert len(refusals) == 300
    for reply in refusals:
        assert reply["error"]["category"] == "configuration", reply
        assert "only for the profiles its machine configures" in reply["error"]["message"], reply
    grown = resident_kib(agent.pid) - before
    assert grown < 100 << 10, f"the agent grew by {grown} KiB"
    # A configured profile's item over 256 KiB, and one for another pool, are refused too.
    for request, category in (({"profile": "default", "secret": "y" * (300 << 10), "context": context}, "data"),
                              ({"profile": "default", "secret": "z", "context": {**context, "client-id": "another"}}, "configuration")):
        reply = answer_of(exchange(agent.socket, json.dumps({"v": 1, "op": "write", "kind": "refresh", **request}).encode() + b"\n"))
        assert reply["error"]["category"] == category, reply
    # The session the agent does keep is as it was.
    assert cog.ok("token", env=via).stdout == access + "\n"
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n", env=via)


def test_log_through_a_link_or_onto_another_users_file_is_refused(cog, tmp_path, shared_dir):
    private = tmp_path / "sock"
    private.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("the user's own file\n")
    link = tmp_path / "agent.log"
    link.symlink_to(victim)
    cases = [(link, "symbolic link")]
    if os.getuid() == 0:
        theirs = shared_dir / "agent.log"
        theirs.write_text("")
        os.chown(theirs, NOBODY, NOBODY)
        cases.append((theirs, f"belongs to uid {NOBODY}"))
    for log, why in cases:
        for daemon in ([], ["--daemon"]):
            result = cog.run("agent", "--memory", *daemon, "--socket", str(private / "agent"), "--log", str(log), timeout=20)
            assert (result.returncode, result.stdout) == (64, ""), (log, daemon, result.returncode, result.stderr)
            assert why in result.stderr and result.stderr.count("\n") == 1, result.stderr
            assert not (private / "agent").exists()
    assert victim.read_text() == "the user's own file\n"
    # A file of the user's own is appended to.
    own = tmp_path / "own.log"
    agent = subprocess.Popen([cog.binary, "agent", "--memory", "--socket", str(private / "agent"), "--log", str(own)],
                             env=cog.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert AGENT_LINE.fullmatch(read_line(agent.stdout.fileno(), 30))
        poll(lambda: own.exists() and "listening on" in own.read_text(), "the agent's note in its log")
        assert stat.S_IMODE(own.stat().st_mode) == 0o600
    finally:
        agent.terminate()
        agent.wait(timeout=10)
        agent.stdout.close()


def test_a_client_talks_only_to_a_socket_itself_of_its_user_in_a_directory_no_one_else_can_change(cog, double, agents,
                                                                                                     tmp_path):
    agent = agents.start("--memory")
    via = agent.client()
    signed_in_through(cog, double, via)
    # A relay of root's (this user's) socket, recording: reached through a
    # link, it must not be connected to at all.
    links = tmp_path / "links"
    links.mkdir(mode=0o700)
    relay = Relay(links / "relay", agent.socket)
    try:
        (links / "agent").symlink_to(links / "relay")
        through_link = cog.run("token", env={**via, "COG_CRED_AGENT": str(links / "agent")})
        assert (through_link.returncode, through_link.stdout) == (69, ""), through_link.stderr
        assert "it is a symbolic link; name the socket itself" in through_link.stderr
        # Not a socket at all.
        (links / "file").write_text("")
        plain = cog.run("token", env={**via, "COG_CRED_AGENT": str(links / "file")})
        assert plain.returncode == 69 and "it is not a socket" in plain.stderr
        # The relay's backlog: ours, made last, is the first it takes.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.connect(str(links / "relay"))
            poll(lambda: relay.connections >= 1, "the relay to take the probe")
        assert relay.connections == 1
    finally:
        relay.close()
    # The agent's own directory made writable by others: someone could swap the socket.
    directory = agent.socket.parent
    directory.chmod(0o777)
    try:
        swappable = cog.run("token", env=via)
        assert (swappable.returncode, swappable.stdout) == (69, ""), swappable.stderr
        assert f"{directory} that holds the agent's socket can be written by others" in swappable.stderr
    finally:
        directory.chmod(0o700)
    assert cog.run("token", env=via).returncode == 0


def test_the_git_helper_through_the_agent_hands_a_token_only_where_it_may_go(cog, bus, double, agents, tmp_path):
    agent = agents.start("--memory")
    via = agent.client()
    signed_in_through(cog, double, via)
    cog.ok("configure", "--git-url", "https://git.example.com/")
    access = cog.ok("token", env=via).stdout.strip()
    # A forwarded machine: no configuration of its own, the agent's patterns decide.
    away = forwarded(tmp_path, agent.socket)
    for request, why in GIT_REFUSALS:
        for named in (["--profile", "default"], []):
            result = cog.run("git-credential", *named, "get", input=request, env=away)
            # Without --profile, a request no profile of the agent's answers
            # for is passed over in silence (a helper for every host is asked
            # about every server); a carriage return is said whatever the profile.
            expected = git_refusal(why) if named or "carriage return" in why else ""
            assert (result.returncode, result.stdout, result.stderr) == (0, "", expected), (request, named, result.stderr)
    for named in (["--profile", "default"], []):
        answered = cog.run("git-credential", *named, "get", input=GIT_REQUEST, env=away)
        assert answered.returncode == 0 and f"password={access}\n" in answered.stdout, answered.stderr



# --- 11. stopping and lifetimes (#62) ------------------------------------------------------------------

def test_agent_stop_ends_the_agent_the_variables_name_and_unsets_them(cog, helper_bin, agents, tmp_path):
    """As ssh-agent -k: `eval "$(cog-cred agent --stop)"` in the shell that
    started it; the agent removes its socket and exits, and the variables go."""
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    env = {**cog.env, "XDG_RUNTIME_DIR": str(run_dir)}
    script = ('eval "$(cog-cred agent --memory --daemon)" && pid=$COG_CRED_AGENT_PID && socket=$COG_CRED_AGENT'
              ' && eval "$(cog-cred agent --stop)"'
              ' && printf "%s %s %s %s\\n" "$pid" "$socket" "${COG_CRED_AGENT-unset}" "${COG_CRED_AGENT_PID-unset}"')
    result = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    pid, socket_path, agent_after, pid_after = result.stdout.split()
    agents.adopt(int(pid))
    assert (agent_after, pid_after) == ("unset", "unset")
    assert f"cog-cred agent: stopped the agent at {socket_path} (pid {pid})" in result.stderr
    poll(lambda: exited(int(pid)), "the agent to exit")
    assert not Path(socket_path).exists()

    # With only COG_CRED_AGENT_PID (the socket variable lost), that pid is
    # stopped when it is a cog-cred agent of this user's, and nothing else is.
    agent = agents.start("--memory")
    by_pid = cog.run("agent", "--stop", env={"COG_CRED_AGENT": None, "COG_CRED_AGENT_PID": str(agent.pid)})
    assert (by_pid.returncode, by_pid.stdout) == (0, "unset COG_CRED_AGENT; unset COG_CRED_AGENT_PID;\n"), by_pid.stderr
    assert agent.proc.wait(timeout=10) == 0 and not agent.socket.exists()
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        refused = cog.run("agent", "--stop", env={"COG_CRED_AGENT": None, "COG_CRED_AGENT_PID": str(bystander.pid)})
        assert (refused.returncode, refused.stdout) == (69, ""), refused.stderr
        assert f"process {bystander.pid} (COG_CRED_AGENT_PID) is not a cog-cred agent of yours" in refused.stderr
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()
    # Nothing named: 64; a socket nothing answers on: 69, naming it.
    nothing = cog.run("agent", "--stop", env={"COG_CRED_AGENT": None, "COG_CRED_AGENT_PID": None})
    assert (nothing.returncode, nothing.stdout) == (64, ""), nothing.stderr
    gone = cog.run("agent", "--stop", env={"COG_CRED_AGENT": str(agent.socket)})
    assert (gone.returncode, gone.stdout) == (69, "") and str(agent.socket) in gone.stderr, gone.stderr
    assert cog.run("agent", "--stop", "--memory").returncode == 64


def test_a_memory_agent_with_a_lifetime_stops_when_it_runs_out_and_its_sessions_with_it(cog, bus, double, agents):
    started = time.monotonic()
    agent = agents.start("--memory", "--lifetime", "8")
    via = agent.client()
    signed_in_through(cog, double, via)
    assert claims(cog.ok("token", env=via).stdout.strip())["token_use"] == "access"
    assert "(sessions kept in memory only; for 8 s)" in agent.notes()
    assert agent.proc.wait(timeout=60) == 0
    # It can only have run out: the lifetime is a floor.
    assert time.monotonic() - started >= 8
    assert "its lifetime has run out: stopping" in agent.notes()
    assert not agent.socket.exists()
    after = cog.run("token", env=via)
    assert (after.returncode, after.stdout) == (69, ""), after.stderr


def test_a_keyring_agent_with_a_lifetime_just_exits_and_the_keyring_keeps_the_session(cog, bus, double, agents):
    signed_in_on_double(cog, double.url, double, USER, PASSWORD)
    refresh_token = stored(bus, "refresh")
    cog.remember_secret(refresh_token)
    agent = agents.start("--lifetime", "3")
    assert cog.ok("token", env=agent.client()).stdout.strip() == stored(bus, "access")
    assert agent.proc.wait(timeout=60) == 0
    assert "its lifetime has run out: stopping" in agent.notes() and not agent.socket.exists()
    # The sessions were the keyring's: they stay, and a read without the agent finds them.
    assert stored(bus, "refresh") == refresh_token
    assert cog.ok("token").stdout.strip() == stored(bus, "access")


@pytest.mark.parametrize("value", ["0", "-5", "1d", "5 m", "99999999h", "m"])
def test_a_lifetime_that_is_no_duration_is_a_usage_error(cog, value):
    result = cog.run("agent", "--memory", "--lifetime", value)
    assert (result.returncode, result.stdout) == (64, ""), result.stderr
    assert "--lifetime" in result.stderr and result.stderr.count("\n") == 1, result.stderr


# --- 12. the headless user is led to the agent (#62) ----------------------------------------------------

ADVICE = re.compile(r'(eval "\$\(cog-cred agent [^)]*\)")')


def headless(tmp_path, cog, **extra):
    """The environment of a machine with no session bus: no address, and a
    runtime directory without a `bus`."""
    run_dir = tmp_path / "headless-run"
    run_dir.mkdir(mode=0o700, exist_ok=True)
    return {**cog.env, "DBUS_SESSION_BUS_ADDRESS": None, "XDG_RUNTIME_DIR": str(run_dir), **extra}


def follow_the_advice(cog, double, env, advice):
    """The advice run as printed, in a shell, then configure, sign-in and a read there."""
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    script = (f'{advice} && trap \'eval "$(cog-cred agent --stop)" >/dev/null\' EXIT'
              f' && cog-cred configure --user-pool-id {DOUBLE_POOL_ID} --client-id {DOUBLE_CLIENT_ID}'
              f' --endpoint-url {double.url} --username {USER}'
              f' && printf "%s\\n" "$PW" | cog-cred sign-in --password-stdin && cog-cred token')
    env = {k: v for k, v in {**env, "PW": PASSWORD}.items() if v is not None}
    return subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, timeout=60)


def test_with_no_bus_and_no_agent_the_error_leads_to_a_memory_agent_that_works(cog, double, helper_bin, tmp_path):
    """As a new user meets it: configure, then a sign-in that has nowhere to keep the session."""
    env = headless(tmp_path, cog)
    configure_on_double(cog, double.url, "--username", USER, env=env)
    failed = cog.run("sign-in", "--password-stdin", input=PASSWORD + "\n", env=env)
    assert (failed.returncode, failed.stdout) == (69, ""), failed.stderr
    advice = ADVICE.search(failed.stderr)
    assert advice and advice.group(1) == 'eval "$(cog-cred agent --memory --daemon)"', failed.stderr
    followed = follow_the_advice(cog, double, env, advice.group(1))
    assert followed.returncode == 0 and claims(followed.stdout.strip())["token_use"] == "access", followed.stderr


def test_a_gone_agent_with_no_bus_leads_to_a_memory_agent_and_a_forward_to_its_reconnection(cog, double, helper_bin,
                                                                                          tmp_path):
    env = headless(tmp_path, cog)
    # A socket left by an agent killed with SIGKILL, where an agent started here listens.
    default = Path(env["XDG_RUNTIME_DIR"]) / "cog-cred" / "agent"
    default.parent.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(default))
    stale.close()
    failed = cog.run("token", env={**env, "COG_CRED_AGENT": str(default)})
    assert (failed.returncode, failed.stdout) == (69, ""), failed.stderr
    advice = ADVICE.search(failed.stderr)
    assert advice and "--memory" in advice.group(1), failed.stderr
    assert "reconnect the forward" not in failed.stderr and "unset COG_CRED_AGENT" not in failed.stderr
    followed = follow_the_advice(cog, double, {**env, "COG_CRED_AGENT": str(default)}, advice.group(1))
    assert followed.returncode == 0 and claims(followed.stdout.strip())["token_use"] == "access", followed.stderr
    # A path an agent started here would not use: a forward's. With a bus, a keyring agent is the advice.
    forward = tmp_path / "fwd"
    forward.mkdir(mode=0o700)
    gone = cog.run("token", env={"COG_CRED_AGENT": str(forward / "cog-cred.sock")})
    assert gone.returncode == 69 and 'eval "$(cog-cred agent --daemon)"' in gone.stderr, gone.stderr
    assert "or reconnect the forward that provides it" in gone.stderr and "unset COG_CRED_AGENT" in gone.stderr


# --- 13. the forwarded box described as what it is (#62) ---------------------------------------------

def test_a_box_with_an_empty_home_is_told_of_the_agents_configuration_and_lists_its_profiles(cog, double, agents,
                                                                                           tmp_path):
    agent, via, access = memory_agent_signed_in(cog, double, agents)
    relay = Relay(tmp_path / "relay", agent.socket)
    try:
        away = forwarded(tmp_path, relay.path)
        # One question, one answer: token and status (and the rest) say the
        # same, in the agent's words, with no path of the agent's machine.
        answers = {args[0]: cog.run(*args, env=away) for args in (["token", "-p", "nosuch"], ["status", "-p", "nosuch"],
                                                                   ["whoami", "-p", "nosuch"], ["refresh", "-p", "nosuch"])}
        for name, result in answers.items():
            assert (result.returncode, result.stdout) == (78, ""), (name, result.stderr)
            assert result.stderr.startswith("cog-cred: error: the agent's configuration has no profile 'nosuch'"), \
                (name, result.stderr)
            assert str(cog.config_file.parent) not in result.stderr and "config.json" not in result.stderr, result.stderr
        assert len({result.stderr for result in answers.values()}) == 1, answers
        typo = cog.run("token", "-p", "defualt", env=away)
        assert typo.returncode == 78 and "did you mean 'default'?" in typo.stderr, typo.stderr

        # profiles: the agent's, marked as such, as the reads find them.
        listed = cog.run("profiles", env=away)
        assert listed.returncode == 0, listed.stderr
        rows = listed.stdout.splitlines()
        assert rows[0].split()[0] == "PROFILE" and rows[1].split()[0] == "default" and " yes " in rows[1], rows
        assert f"The agent's profiles ({relay.path})" in listed.stderr and "No profiles yet" not in listed.stderr
        as_json = json.loads(cog.ok("profiles", "--json", env=away).stdout)
        assert [(p["profile"], p["signed_in"], p["username"], p["agent"]) for p in as_json] == \
            [("default", True, USER, relay.path)], as_json
        # This machine's own list, for comparison: the same profile, its own.
        assert [p["agent"] for p in json.loads(cog.ok("profiles", "--json").stdout)] == [None]
        only = cog.run("profiles", "-p", "nosuch", env=away)
        assert only.returncode == 78 and "the agent's configuration has no profile 'nosuch'" in only.stderr, only.stderr
    finally:
        relay.close()


def test_an_agents_proxy_refusal_is_said_as_the_agents_to_a_shell_with_no_proxy(cog, double, agents, microsocks):
    """The agent started with a SOCKS proxy whose password is wrong; the
    client's shell sets no proxy: the agent's refresh is refused, in words
    that name the agent's setting, never the client's."""
    wrong = f"socks5h://{PROXY_USER}:not-it@127.0.0.1:{microsocks}"
    agent = agents.start("--memory", env={"ALL_PROXY": wrong})
    via = agent.client()
    assert not any(name.lower().endswith("_proxy") for name in cog.env)
    signed_in_through(cog, double, via)  # the sign-in is the client's: its own network, no proxy
    refused = cog.run("refresh", env=via)
    assert (refused.returncode, refused.stdout) == (78, ""), refused.stderr
    said = (f"the agent's proxy socks5h://127.0.0.1:{microsocks} (its ALL_PROXY) refused the user name and password "
            f"the agent's ALL_PROXY gives")
    assert said in refused.stderr and "check the proxy URL in the agent's ALL_PROXY" in refused.stderr, refused.stderr
    assert "not-it" not in refused.stderr and PROXY_USER not in refused.stderr
    # status asks Cognito through the agent, which meets the same refusal
    # (as status does without one), and says whose settings it used.
    status = cog.run("status", env=via)
    assert status.returncode == 78 and said in status.stderr, status.stderr
    offline = cog.ok("status", "--offline", env=via).stdout
    assert f"network:       the agent at {agent.socket} sends this profile's requests" in offline, offline


def test_the_client_signs_in_on_its_network_and_the_agent_refreshes_on_its_own(cog, double, agents, tinyproxy):
    """One rule: the requests the agent makes use its settings (here: none,
    direct), the ones the client makes use the caller's (a proxy)."""
    proxy = tinyproxy()
    agent = agents.start("--memory")
    shell = agent.client(http_proxy=proxy.url())
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER)
    signed = cog.run("sign-in", "--password-stdin", "--debug", input=PASSWORD + "\n", env=shell)
    assert signed.returncode == 0, signed.stderr
    through = len(proxy.requests())
    assert through >= 1 and f"through the proxy http://{proxy.address} (from http_proxy)" in signed.stderr
    assert f"asked the agent at {agent.socket}: write (profile default): answered in" in signed.stderr

    refreshes = double.calls("GetTokensFromRefreshToken")
    refreshed = cog.run("refresh", "--debug", env=shell)
    assert refreshed.returncode == 0, refreshed.stderr
    assert double.calls("GetTokensFromRefreshToken") == refreshes + 1 and len(proxy.requests()) == through
    assert (f"asked the agent at {agent.socket}: refresh (profile default): answered in" in refreshed.stderr
            and "any request to Cognito for it is the agent's, with the agent's own network settings" in refreshed.stderr)
    assert "through the proxy" not in refreshed.stderr
    checked = json.loads(cog.ok("status", "--json", env=shell).stdout)
    assert checked["session"] == "stands" and checked["requests_by_agent"] == str(agent.socket), checked
    assert len(proxy.requests()) == through


def test_sign_out_through_a_memory_agent_against_moto_says_where_the_items_were_deleted(cog, pool, agents):
    agent = agents.start("--memory")
    via = agent.client()
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username)
    cog.remember_secret(pool.password)
    deleted = re.compile(rf"deleted (\d+) item\(s\) from the agent at {re.escape(str(agent.socket))}")
    # moto has no RevokeToken: the revocation fails, and the items are gone
    # all the same (75), in the same words from the front and from
    # cog-cred-cli (which COG_CRED_DEBUG sends the command to).
    said = []
    for extra in ({}, {"COG_CRED_DEBUG": "1"}):
        cog.ok("sign-in", "--password-stdin", input=pool.password + "\n", env=via)
        out = cog.run("sign-out", env={**via, **extra})
        assert (out.returncode, out.stdout) == (75, ""), out.stderr
        error = [line for line in out.stderr.splitlines() if line.startswith("cog-cred: error: ")]
        assert len(error) == 1 and deleted.search(error[0]), out.stderr
        assert ", but revoking the session at Cognito failed (" in error[0] and "they expire" in error[0], error
        assert "Secret Service" not in out.stderr
        said.append(error[0])
        after = cog.run("token", env=via)
        assert after.returncode == 77 and "not signed in" in after.stderr, after.stderr
    assert said[0] == said[1]
    # GlobalSignOut, which moto has.
    cog.ok("sign-in", "--password-stdin", input=pool.password + "\n", env=via)
    everywhere = cog.run("sign-out", "--global", env=via)
    assert everywhere.returncode == 0, everywhere.stderr
    assert "signed out everywhere; " in everywhere.stderr and deleted.search(everywhere.stderr), everywhere.stderr


# --- 14. the cog-cred binary alone serves a box (#62) ----------------------------------------------------

def only_cog_cred(cog, tmp_path):
    """A directory holding the `cog-cred` binary and nothing else."""
    directory = tmp_path / "only"
    directory.mkdir()
    shutil.copy(Path(cog.binary).resolve(), directory / "cog-cred")
    (directory / "cog-cred").chmod(0o755)
    return directory


def test_a_directory_holding_only_cog_cred_serves_a_box_through_the_agent(cog, double, agents, tmp_path):
    agent, via, access = memory_agent_signed_in(cog, double, agents)
    cog.ok("configure", "--git-url", "https://git.example.com/")  # on the agent's machine
    only = only_cog_cred(cog, tmp_path)
    box = {k: v for k, v in {**forwarded(tmp_path, agent.socket), "PATH": f"{only}:/usr/bin:/bin",
                             "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}.items() if v is not None}

    def run(*args, input=None):
        return subprocess.run([str(only / "cog-cred"), *args], env=box, input=input, capture_output=True, text=True,
                              timeout=60)

    def git_credential(helper, action, request):
        return subprocess.run(["git", "-c", "credential.helper=", "-c", f"credential.helper={helper}", "credential", action],
                              env=box, input=request, capture_output=True, text=True, timeout=60)

    assert run("token").stdout == access + "\n"
    assert run("whoami").stdout == USER + "\n"
    assert json.loads(run("whoami", "--json").stdout) == {"profile": "default", "name": USER, "grant": "user"}
    checks = double.calls("GetUser")
    status = run("status")
    assert status.returncode == 0, status.stderr
    assert "signed in:     yes" in status.stdout and "session:       stands (Cognito answered GetUser)" in status.stdout
    assert f"network:       the agent at {agent.socket} sends this profile's requests" in status.stdout
    assert double.calls("GetUser") == checks + 1
    assert "session:       not checked (--offline)" in run("status", "--offline").stdout
    # One shape: the front's status --json is cog-cred-cli's (COG_CRED_DEBUG sends it there).
    front = json.loads(run("status", "--json").stdout)
    cli = json.loads(cog.ok("status", "--json", env={**via, "COG_CRED_DEBUG": "1"}).stdout)
    assert (front["signed_in"], front["session"], front["requests_by_agent"]) == (True, "stands", str(agent.socket))
    assert front == cli

    refreshes = double.calls("GetTokensFromRefreshToken")
    refreshed = run("refresh")
    assert refreshed.returncode == 0 and refreshed.stdout == "", refreshed.stderr
    assert refreshed.stderr.startswith("Refreshed (profile 'default'); access token valid until ")
    assert double.calls("GetTokensFromRefreshToken") == refreshes + 1
    second = run("token").stdout.strip()
    cog.remember_secret(second)

    # git with the one line docs/headless.md gives, no link: the agent's
    # profile by its git URL; approve keeps nothing, reject forgets the token.
    request = "protocol=https\nhost=git.example.com\npath=team/repo.git\n\n"
    filled = git_credential("!cog-cred git-credential", "fill", request)
    assert filled.returncode == 0 and f"password={second}\n" in filled.stdout, filled.stderr
    approved = git_credential("!cog-cred git-credential", "approve", filled.stdout)
    assert (approved.returncode, approved.stderr) == (0, ""), approved.stderr
    rejected = git_credential("!cog-cred git-credential --profile default", "reject", filled.stdout)
    assert (rejected.returncode, rejected.stderr) == (0, ""), rejected.stderr
    third = run("token").stdout.strip()
    cog.remember_secret(third)
    assert third != second and double.calls("GetTokensFromRefreshToken") == refreshes + 2

    # What needs cog-cred-cli says which file is missing, and what it is for.
    for args in (["sign-in"], ["status", "--verify"], ["token", "--help"]):
        missing = run(*args)
        assert (missing.returncode, missing.stdout) == (1, ""), (args, missing.stderr)
        assert (f"'{args[0]}' needs cog-cred-cli, which is neither at {only}/cog-cred-cli nor at "
                f"{only}/../lib/cog-cred/cog-cred-cli") in missing.stderr, missing.stderr

    signed_out = run("sign-out")
    assert signed_out.returncode == 0, signed_out.stderr
    assert signed_out.stderr == (f"Signed out of profile 'default': session revoked at Cognito; deleted 3 item(s) "
                                 f"from the agent at {agent.socket}.\n")
    assert run("token").returncode == 77 and run("whoami").returncode == 77
    assert run("status").returncode == 77
