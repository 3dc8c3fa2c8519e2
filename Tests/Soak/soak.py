#!/usr/bin/env python3
"""Soak test: cog-cred under sustained load against the Cognito test double.

For --duration seconds (an hour by default), with 30-second access tokens and
refresh-token rotation on:

- --consumers processes (8) call `cog-cred token`, `cog-cred git-credential
  get` and `cog-cred exec -- true` in a loop (and, every VERIFY_EVERY rounds,
  an exec that prints the token it was given, so the exec path is checked
  too), recording every call: exit status, time, peak RSS, and the token it
  handed out;
- a ninth process signs out and back in every --sign-out-every seconds
  (600 by default; a third of the run when that is shorter, so a 60 s run
  signs out at 20 s and 40 s);
- the keyring daemon is killed once (at --restart-keyring-at, halfway by
  default), left away for KEYRING_OUTAGE seconds, and started again on the
  same bus and data.

It starts its own parts exactly as the end-to-end tests do (their conftest
helpers): a private dbus-daemon, gnome-keyring-daemon --unlock on it with
fresh XDG directories and HOME, and Tests/EndToEnd/cognito_double/.

Checked at the end (exit 0 only if all hold):
- no failed call: exit 77 only in a sign-out window, exit 69 only in the
  keyring restart window, every other call exits 0 with a valid, unexpired
  token of the pool (and never a token from before a sign-out once that
  sign-out has finished, never any token while signed out);
- no successful call printed a warning on stderr;
- every sign-out and sign-in succeeded; the session is alive at the end (a
  forced refresh works);
- refreshes: at least one per successful git-credential get (its margin is
  fixed, see DEFAULT_MARGIN), at most STORM_FACTOR times what the refresh
  policy predicts, none rejected by the double, no fallback to InitiateAuth;
- no leak: dbus-daemon's and gnome-keyring-daemon's open file descriptors
  back to their baseline, and exactly the three items (access, id, refresh)
  of the one profile in the keyring.

Reported, not checked: peak RSS per kind of process (GNU time), latencies,
and gnome-keyring-daemon's RSS growth per call (the daemon's own: about 6 KB
per GetSecrets on gnome-keyring 42, whoever the client is).

The double rotates refresh tokens with no grace period (a rotated-out token
is dead at once), the strictest setting; --rotation-grace sets one (Cognito
allows 0-60 s).

Figures go to stdout as JSON (and to --json PATH), every call to --calls
PATH if asked, a summary to stderr.
Run: scripts/soak (one hour), scripts/soak --duration 60 (CI's minute).
"""
import argparse
import base64
import binascii
import json
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
END_TO_END = REPO / "Tests" / "EndToEnd"
# The end-to-end tests' own helpers: the private bus and keyring, the double's
# server process and its admin client. conftest imports pytest (in the test
# venv) but runs nothing on import.
sys.path.insert(0, str(END_TO_END))
from conftest import Bus, Double, Server, bus_config_without_activation, free_port, http_ok, wait_until  # noqa: E402

# The double hosts one pool with one app client.
POOL_ID = "us-east-1_double"
CLIENT_ID = "doubleclient"
USERNAME = "soak@example.com"
PROFILE = "default"
GIT_HOST = "git.soak.example"
GIT_REQUEST = f"protocol=https\nhost={GIT_HOST}\n\n".encode()

TOKEN_LIFETIME = 30
# cog-cred's refresh margin (RefreshPolicy.swift): max(60 s, 10% of the
# token's lifetime) unless --min-ttl replaces it. With 30 s tokens that is
# 60 s, longer than a token ever lives: every read without --min-ttl
# refreshes. `token` and `exec` therefore get --min-ttl (MIN_TTL, below), so a
# refreshed token serves them for TOKEN_LIFETIME - MIN_TTL seconds. The git
# helper takes no --min-ttl (git-credential [--profile P] get, nothing else),
# so every successful `git-credential get` makes exactly one refresh of its
# own: that is the floor of the refresh count.
DEFAULT_MARGIN = 60
MIN_TTL = 10
# One refresh operation (the double offers GetTokensFromRefreshToken, as
# Cognito does); the InitiateAuth flow is cog-cred's fallback for services
# without it and must never be used here.
REFRESH = "GetTokensFromRefreshToken"
REFRESH_FALLBACK = "InitiateAuth:REFRESH_TOKEN_AUTH"
# More refreshes than this many times the prediction is a refresh storm.
STORM_FACTOR = 1.5

# Seconds signed out in each window between `sign-out` ending and `sign-in`
# starting: long enough that every consumer meets the signed-out state.
SIGN_OUT_PAUSE = 3.0
# Seconds with no keyring daemon at all before it is started again, so the
# consumers really meet "no Secret Service" (69), not just a quick restart.
KEYRING_OUTAGE = 2.0
# How far after a window's end a call that started then may still exit 77
# (sign-out) or 69 (keyring restart). None is needed: a window ends when this
# script has seen `sign-in` exit (its items were stored before it exited) or
# the restarted keyring answer that its collection is unlocked, and a call's
# start is stamped before it is forked, so "started after the end" is causal,
# never a matter of clock resolution. Both stamps err the permissive way
# (the window's end is stamped late, the call's start early). Kept as a
# constant at 0 so that a change here is visible: any grace would hide the
# very failures this test looks for (a session that comes back late).
WINDOW_GRACE = 0.0
# Clock rounding: cog-cred decides with whole seconds and `exp` is whole
# seconds, so "more than MIN_TTL left when handed out" is checked to 1 s.
CLOCK_SLACK = 1
# A call that takes longer is killed and counted as a failure: the command's
# own deadline (30 s) plus the front's wait for another's refresh (30 s), and slack.
CALL_TIMEOUT = 90.0
# Every VERIFY_EVERY-th round a consumer also runs an exec that prints the
# access token it was given, so what exec hands its command is checked too
# (`exec -- true`, the measured call, shows only its exit status).
VERIFY_EVERY = 4
# File descriptors a daemon may have more at the end than at its baseline
# (an inotify watch or a cached file opened on first use). A leak per call
# or per connection would be hundreds or thousands.
FD_SLACK = 2
# Items one signed-in profile has: no client secret here.
EXPECTED_KINDS = ["access", "id", "refresh"]

JWT_SHAPE = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")


def b64url_json(part):
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def access_claims(text):
    """The claims of `text` if it is an access token of the double's pool and
    client (shape, header, token_use, iss, client_id), else None."""
    if not JWT_SHAPE.fullmatch(text):
        return None
    header, payload, _ = text.split(".")
    try:
        header, claims = b64url_json(header), b64url_json(payload)
    except (ValueError, binascii.Error):
        return None
    if not isinstance(header, dict) or header.get("alg") != "RS256" or not isinstance(claims, dict):
        return None
    if (claims.get("token_use") != "access" or claims.get("client_id") != CLIENT_ID
            or not str(claims.get("iss", "")).endswith("/" + POOL_ID)):
        return None
    if not all(isinstance(claims.get(k), int) for k in ("iat", "exp", "auth_time")):
        return None
    return claims


def proc_status(pid):
    """VmRSS and VmHWM (KiB) and the open file descriptors of a live process."""
    figures = {"fds": len(os.listdir(f"/proc/{pid}/fd"))}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                figures[key] = int(value.split()[0])
    return figures


def percentile(sorted_values, fraction):
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


class Call:
    """One consumer call. Only what the checks need is kept (no token)."""
    __slots__ = ("consumer", "command", "start", "end", "start_wall", "end_wall", "rc", "rss_kib",
                 "output_ok", "iat", "exp", "auth_time", "stderr", "verdict")

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.get(name))


# GNU time measures peak RSS: it forks the command itself, from a process of
# about 1.5 MB. Measuring with wait4() from here would not do: Linux carries a
# process's RSS high-water mark across exec, and a child forked (or vforked)
# from this Python process starts with Python's own (~35 MB).
TIME = "/usr/bin/time"


def run_measured(argv, env, stdin_bytes, timeout, rss_file):
    """Runs argv to the end: (exit status, stdout, stderr, peak RSS in KiB or
    None). The peak RSS is the command's high-water mark over its whole life,
    across exec: a front that hands over to cog-cred-cli reports the larger of
    the two, and `exec -- true` includes `true`. A call still running after
    `timeout` is killed (-9), with everything it started."""
    measured = os.access(TIME, os.X_OK)
    if measured:
        rss_file.unlink(missing_ok=True)
        argv = [TIME, "-o", str(rss_file), "-f", "%M", *argv]
    # A session (and process group) of its own: a timeout kills the command
    # with time, and nothing has a terminal to prompt on.
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            stdin=subprocess.PIPE if stdin_bytes is not None else subprocess.DEVNULL)
    guard = threading.Lock()
    reaped = False

    def kill():
        with guard:
            if not reaped:  # never signal a group whose leader may be gone and its id reused
                os.killpg(proc.pid, signal.SIGKILL)

    killer = threading.Timer(timeout, kill)
    killer.daemon = True
    killer.start()
    try:
        if stdin_bytes is not None:
            try:
                proc.stdin.write(stdin_bytes)
                proc.stdin.close()
            except BrokenPipeError:
                pass  # it exited without reading; its status says why
        # One after the other is safe: cog-cred writes at most a line or two
        # to stderr, far below what a pipe holds.
        out = proc.stdout.read()
        err = proc.stderr.read()
        # Wait without reaping first: while the leader is a zombie its id
        # cannot be reused, so the killer cannot hit another process group.
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        with guard:
            reaped = True
        killer.cancel()
        rc = proc.wait()
    finally:
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    rss = None
    if measured:
        # time's report: "Command exited with non-zero status N" or
        # "Command terminated by signal N" lines, then the %M line. It exits
        # with the command's status (128 + N after a signal).
        try:
            report = rss_file.read_text().splitlines()
        except FileNotFoundError:
            report = []  # time itself was killed
        for line in report:
            if line.startswith("Command terminated by signal "):
                rc = -int(line.rsplit(" ", 1)[1])
        if report and report[-1].strip().isdigit():
            rss = int(report[-1])
    return rc, out, err, rss


class Soak:
    def __init__(self, args):
        self.args = args
        self.binary = str(Path(args.binary).resolve())
        self.root = Path(tempfile.mkdtemp(prefix="cog-cred-soak."))
        os.chmod(self.root, 0o700)
        # The account's password: random per run, in this process's memory and
        # the double's; it travels only over the double's admin API and on
        # cog-cred's standard input, never on a command line or in a file.
        self.password = "Soak-" + secrets.token_urlsafe(12) + "-9a"
        self.calls = []             # Call, appended by the consumer threads
        self.calls_lock = threading.Lock()
        self.windows = []           # sign-out windows (dicts, times relative to t0)
        self.restart = None         # the keyring restart window
        self.signer_failures = []
        self.signer_rss = {"sign-out": [], "sign-in": []}
        # Held by the signer for a whole window and by the keyring restart:
        # the two disruptions never overlap, so each is judged on its own.
        self.disruption = threading.Lock()
        self.stop = threading.Event()     # consumers: finish the current call and stop
        self.abort = threading.Event()    # Ctrl-C: everything stops waiting
        self.bus = self.server = None
        self.t0 = None

    # ------------------------------------------------------------ set-up
    def now(self):
        return time.monotonic() - self.t0

    def sleep_until(self, t):
        """Scheduling (not a check): wait until t seconds into the soak."""
        remaining = t - self.now()
        if remaining > 0:
            self.abort.wait(remaining)

    def start(self):
        root = self.root
        for d in ("home", "config", "cache", "state", "rss"):
            (root / d).mkdir()
        # Every child (dbus-daemon, gnome-keyring, the double, cog-cred)
        # inherits these: nothing touches the real home, keyring or config,
        # and with no display a locked keyring fails at once instead of prompting.
        os.environ.update(HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "config"),
                          XDG_CACHE_HOME=str(root / "cache"), XDG_STATE_HOME=str(root / "state"), LANG="C.UTF-8")
        for name in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "COG_CRED_PROFILE",
                     "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER"):
            os.environ.pop(name, None)

        # A bus without D-Bus activation: a killed keyring stays gone (rather
        # than being restarted, locked, by activation) until we start it again.
        self.bus = Bus(root / "bus", secrets=False, config_file=bus_config_without_activation(root / "bus.conf"))
        self.bus.env.update(HOME=os.environ["HOME"], XDG_CONFIG_HOME=os.environ["XDG_CONFIG_HOME"])
        self.start_keyring()

        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        self.server = Server([sys.executable, str(END_TO_END / "cognito_double"), "--host", "127.0.0.1",
                              "--port", str(port)], url, lambda: http_ok(url + "_double/stats"))
        self.double = Double(url)
        self.double.reset()
        self.double.configure(token_lifetime=TOKEN_LIFETIME, rotate_refresh_tokens=True,
                              rotation_grace_seconds=self.args.rotation_grace)
        self.double.add_user(USERNAME, self.password)

        # What cog-cred sees: as the end-to-end tests' `cog` fixture gives it.
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ["HOME"],
                    "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"], "LANG": "C.UTF-8", **self.bus.env}
        self.cog_ok("configure", "--user-pool-id", POOL_ID, "--client-id", CLIENT_ID, "--endpoint-url", url,
                    "--username", USERNAME, "--git-url", f"https://{GIT_HOST}/")
        self.cog_ok("sign-in", "--password-stdin", input=self.password.encode() + b"\n")

        self.commands = {
            "token": (["token", "--min-ttl", str(self.args.min_ttl)], None, "token"),
            "git-credential get": (["git-credential", "get"], GIT_REQUEST, "git"),
            "exec -- true": (["exec", "--min-ttl", str(self.args.min_ttl), "--", "true"], None, "empty"),
            "exec (verify)": (["exec", "--min-ttl", str(self.args.min_ttl), "--", "printenv", "COG_CRED_ACCESS_TOKEN"],
                              None, "token"),
        }

    def start_keyring(self):
        """gnome-keyring --unlock on the bus (conftest feeds it the password on
        stdin), then wait until its default collection says it is unlocked."""
        try:
            self.bus.start_keyring()
        except RuntimeError:
            # conftest waits 6 s for the name; on a machine this busy
            # (consumers running) the daemon may need longer to start.
            wait_until(self.bus.has_secret_service, "gnome-keyring", attempts=3000, pause=0.02)
        wait_until(self.keyring_unlocked, "an unlocked gnome-keyring", attempts=3000, pause=0.02)

    def keyring_unlocked(self):
        out = subprocess.run(
            ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.secrets",
             "/org/freedesktop/secrets/aliases/default", "org.freedesktop.DBus.Properties.Get",
             "string:org.freedesktop.Secret.Collection", "string:Locked"],
            env={**os.environ, **self.bus.env}, capture_output=True, text=True)
        return "boolean false" in out.stdout

    def cog(self, *args, input=None):
        return subprocess.run([self.binary, *args], env=self.env, input=input, capture_output=True, timeout=120)

    def cog_ok(self, *args, input=None):
        result = self.cog(*args, input=input)
        if result.returncode != 0:
            raise RuntimeError(f"cog-cred {args[0]} exited {result.returncode}: {result.stderr.decode()}")
        return result

    def daemons(self):
        """The long-lived processes whose descriptors and memory are watched."""
        return {"dbus-daemon": self.bus.procs[0].pid, "gnome-keyring-daemon": self.bus.keyring.pid,
                "cognito double": self.server.proc.pid}

    # ------------------------------------------------------------ the run
    def consumer(self, index):
        order = list(self.commands)[:3]
        rotation = index % 3  # consumers start on different commands
        order = order[rotation:] + order[:rotation]
        round_number = 0
        while not self.stop.is_set():
            round_number += 1
            names = order + (["exec (verify)"] if round_number % VERIFY_EVERY == index % VERIFY_EVERY else [])
            for name in names:
                if self.stop.is_set():
                    break
                self.call(index, name)

    def call(self, index, name):
        argv, stdin_bytes, output = self.commands[name]
        start, start_wall = self.now(), time.time()
        rc, out, err, rss = run_measured([self.binary, *argv], self.env, stdin_bytes, CALL_TIMEOUT,
                                         self.root / "rss" / f"consumer-{index}")
        end, end_wall = self.now(), time.time()
        call = Call(consumer=index, command=name, start=start, end=end, start_wall=start_wall, end_wall=end_wall,
                    rc=rc, rss_kib=rss, output_ok=None)
        if err:
            call.stderr = err.decode(errors="replace")[:300]
        if rc == 0:
            call.output_ok = self.check_output(call, output, out.decode(errors="replace"))
        with self.calls_lock:
            self.calls.append(call)

    def check_output(self, call, kind, out):
        """True when a successful call printed what it should; the token's
        times are kept for the checks that need the windows."""
        if kind == "empty":
            return out == ""
        if kind == "token":
            token = out[:-1] if out.endswith("\n") else None
        else:  # git: key=value lines, the token as the password
            fields = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
            token = fields.get("password") if fields.get("username") == USERNAME else None
        claims = access_claims(token) if token else None
        if claims is None:
            return False
        call.iat, call.exp, call.auth_time = claims["iat"], claims["exp"], claims["auth_time"]
        if kind == "git" and fields.get("password_expiry_utc") not in (None, str(call.exp)):
            return False
        return True

    def signer(self):
        """The ninth process: sign out, stay out SIGN_OUT_PAUSE, sign in again."""
        every = self.args.sign_out_every
        k = 1
        # Only windows that end before the consumers stop: the soak ends signed in.
        while not self.abort.is_set() and k * every + SIGN_OUT_PAUSE + 10 < self.args.duration:
            self.sleep_until(k * every)
            k += 1
            if self.abort.is_set():
                break
            with self.disruption:
                window = {"start": self.now(), "start_wall": time.time()}
                rc, _, err, rss = run_measured([self.binary, "sign-out"], self.env, None, CALL_TIMEOUT,
                                                 self.root / "rss" / "signer")
                window["signed_out"] = self.now()  # the items are gone from here on
                self.signer_rss["sign-out"].append(rss)
                if rc != 0:
                    self.signer_failures.append(f"sign-out at {window['start']:.1f} s exited {rc}: {err.decode()[:200]}")
                self.abort.wait(SIGN_OUT_PAUSE)
                window["sign_in_start"] = self.now()
                for _attempt in range(3):  # a failed sign-in is reported, but the soak goes on signed in
                    rc, _, err, rss = run_measured([self.binary, "sign-in", "--password-stdin"], self.env,
                                                   self.password.encode() + b"\n", CALL_TIMEOUT,
                                                   self.root / "rss" / "signer")
                    self.signer_rss["sign-in"].append(rss)
                    if rc == 0:
                        break
                    self.signer_failures.append(f"sign-in at {self.now():.1f} s exited {rc}: {err.decode()[:200]}")
                window["end"] = self.now()
                self.windows.append(window)

    def restart_keyring(self):
        with self.disruption:
            old = self.bus.keyring
            before = proc_status(old.pid)
            window = {"start": self.now()}
            old.kill()  # SIGKILL: no chance to tidy up, as in a crash
            old.wait()
            self.abort.wait(KEYRING_OUTAGE)
            self.start_keyring()
            window["end"] = self.now()
            window["old_daemon"] = before
            # The new daemon's baseline, taken as soon as it is usable.
            window["new_daemon_at_start"] = proc_status(self.bus.keyring.pid)
            self.restart = window

    def progress(self):
        every = max(10.0, min(60.0, self.args.duration / 10))
        t = every
        while not self.stop.wait(max(0.0, t - self.now())):
            with self.calls_lock:
                n, bad = len(self.calls), sum(1 for c in self.calls if c.rc != 0)
            print(f"soak: {self.now():6.0f} s  {n} calls, {bad} non-zero exits so far (judged at the end)",
                  file=sys.stderr, flush=True)
            t += every

    def run(self):
        self.start()
        self.baseline = {name: proc_status(pid) for name, pid in self.daemons().items()}
        self.stats_before = self.double.stats()["calls"]
        self.t0 = time.monotonic()
        threads = [threading.Thread(target=self.consumer, args=(i,), name=f"consumer-{i}")
                   for i in range(self.args.consumers)]
        signer = threading.Thread(target=self.signer, name="signer")
        progress = threading.Thread(target=self.progress, name="progress", daemon=True)
        for t in threads + [signer, progress]:
            t.start()
        try:
            restart_at = self.args.restart_keyring_at
            if restart_at is not None and 0 <= restart_at < self.args.duration:
                self.sleep_until(restart_at)
                if not self.abort.is_set():
                    self.restart_keyring()
            self.sleep_until(self.args.duration)
        except KeyboardInterrupt:
            self.abort.set()
            raise
        finally:
            self.stop.set()
            for t in threads:
                t.join()
            signer.join()
        self.elapsed = self.now()

    # ------------------------------------------------------------ judging
    @staticmethod
    def overlaps(call, window):
        return call.start < window["end"] + WINDOW_GRACE and call.end > window["start"]

    def judge(self, call):
        """What a call's outcome means: "ok", an allowed window exit, or why it failed."""
        if call.rc == 0:
            if not call.output_ok:
                return "failure: exit 0 without a valid access token of the pool in its output"
            for w in self.windows:
                # Started after the items were deleted and ended before the
                # sign-in began: there was nothing to hand out.
                if call.start > w["signed_out"] and call.end < w["sign_in_start"]:
                    return "failure: exit 0 while signed out"
            if call.exp is not None:
                # The latest sign-out that had finished before this call started:
                # the token must come from the sign-in after it (auth_time is
                # the sign-in's second; the old session's is before the sign-out).
                done = [w for w in self.windows if w["signed_out"] < call.start]
                if done and call.auth_time < done[-1]["start_wall"]:
                    return "failure: a token from before a finished sign-out"
                margin = self.args.min_ttl if call.command != "git-credential get" else 0
                reference = call.start_wall if margin else call.end_wall
                if call.exp <= reference + margin - CLOCK_SLACK:
                    return "failure: a token with less life left than the refresh margin"
            if self.password in (call.stderr or ""):
                return "failure: the password on stderr"
            return "ok"
        if call.rc == 77 and any(self.overlaps(call, w) for w in self.windows):
            return "exit 77 in a sign-out window"
        if call.rc == 69 and self.restart and self.overlaps(call, self.restart):
            return "exit 69 in the keyring restart window"
        if call.rc == -signal.SIGKILL:
            return f"failure: still running after {CALL_TIMEOUT:.0f} s (killed)"
        where = "outside any window" if call.rc in (69, 77) else ""
        return f"failure: exit {call.rc} {where}".rstrip()

    def report(self):
        checks = []

        def check(name, ok, detail):
            checks.append({"check": name, "ok": bool(ok), "detail": detail})

        # ---- calls
        by_command = {}
        failures = []
        for call in self.calls:
            call.verdict = self.judge(call)
            figures = by_command.setdefault(call.command, {"calls": 0, "ok": 0, "exit 77 in sign-out windows": 0,
                                                           "exit 69 in the restart window": 0, "failures": 0,
                                                           "_durations": [], "_rss": []})
            figures["calls"] += 1
            figures["_durations"].append(call.end - call.start)
            figures["_rss"].append(call.rss_kib)
            if call.verdict == "ok":
                figures["ok"] += 1
            elif call.verdict.startswith("exit 77"):
                figures["exit 77 in sign-out windows"] += 1
            elif call.verdict.startswith("exit 69"):
                figures["exit 69 in the restart window"] += 1
            else:
                figures["failures"] += 1
                failures.append(call)
        for figures in by_command.values():
            durations = sorted(figures.pop("_durations"))
            figures["ms p50/p99/max"] = [round(1000 * percentile(durations, q)) for q in (0.5, 0.99, 1.0)]
            figures.pop("_rss")
        total = len(self.calls)
        failure_kinds = {}
        for call in failures:
            failure_kinds[call.verdict] = failure_kinds.get(call.verdict, 0) + 1
        examples = [{"command": c.command, "consumer": c.consumer, "start_s": round(c.start, 3),
                     "end_s": round(c.end, 3), "exit": c.rc, "verdict": c.verdict, "stderr": c.stderr}
                    for c in failures[:20]]
        check("no failed call", not failures and total > 0,
              f"{total} calls, {len(failures)} failures" + (f": {failure_kinds}" if failures else ""))
        missing = [name for name in self.commands if by_command.get(name, {}).get("ok", 0) == 0]
        check("every command succeeded at least once", not missing, f"never ok: {missing}" if missing else "yes")
        idle = [i for i in range(self.args.consumers) if not any(c.consumer == i for c in self.calls)]
        check("every consumer made calls", not idle, f"idle: {idle}" if idle else "yes")
        warnings = sorted({c.stderr for c in self.calls if c.rc == 0 and c.stderr})
        check("no warning from a successful call", not warnings, warnings[:5] if warnings else "none")

        # ---- the signer and the restart
        expected_windows = sum(1 for k in range(1, int(self.args.duration // self.args.sign_out_every) + 1)
                               if k * self.args.sign_out_every + SIGN_OUT_PAUSE + 10 < self.args.duration)
        check("every sign-out and sign-in succeeded",
              not self.signer_failures and len(self.windows) == expected_windows,
              f"{len(self.windows)} of {expected_windows} windows; "
              + ("; ".join(self.signer_failures) if self.signer_failures else "no failure"))
        restart_planned = (self.args.restart_keyring_at is not None
                           and 0 <= self.args.restart_keyring_at < self.args.duration)
        if restart_planned:
            after = [c for c in self.calls if self.restart and c.start > self.restart["end"] and c.verdict == "ok"]
            check("the keyring restart happened and calls succeeded after it", self.restart and after,
                  f"{len(after)} successful calls after it" if self.restart else "no restart")

        # ---- refreshes
        stats = self.double.stats()
        calls_now = stats["calls"]
        made = calls_now.get(REFRESH, 0) - self.stats_before.get(REFRESH, 0)
        statuses = {}
        for request in stats["requests"]:
            if request["action"] == REFRESH:
                statuses[str(request.get("status"))] = statuses.get(str(request.get("status")), 0) + 1
        rejected = sum(n for status, n in statuses.items() if status != "200")
        fallback = calls_now.get(REFRESH_FALLBACK, 0)
        git_ok = by_command.get("git-credential get", {}).get("ok", 0)
        by_lifetime = self.elapsed / (TOKEN_LIFETIME - self.args.min_ttl)
        expected = git_ok + by_lifetime
        refreshes = {"made": made, "by status": statuses, "fallback InitiateAuth REFRESH_TOKEN_AUTH": fallback,
                     "expected": round(expected, 1),
                     "expected, one per successful git-credential get": git_ok,
                     "expected, token and exec: duration / (lifetime - min-ttl)": round(by_lifetime, 1),
                     "RevokeToken": calls_now.get("RevokeToken", 0) - self.stats_before.get("RevokeToken", 0),
                     "sign-ins (RespondToAuthChallenge:PASSWORD_VERIFIER)":
                         calls_now.get("RespondToAuthChallenge:PASSWORD_VERIFIER", 0)}
        check("refreshes: no fewer than one per successful git-credential get", made - rejected >= git_ok,
              f"{made - rejected} successful refreshes, {git_ok} successful git-credential gets")
        check(f"refreshes: no storm (at most {STORM_FACTOR} x expected)", made <= STORM_FACTOR * expected,
              f"{made} made, {expected:.0f} expected")
        check("refreshes: none rejected, no fallback", rejected == 0 and fallback == 0,
              f"{rejected} rejected, {fallback} InitiateAuth REFRESH_TOKEN_AUTH")

        # The session must still work at the end: a real refresh (a still
        # valid access token alone would hide a lost refresh token), then a token.
        final_refresh = self.cog("refresh")
        final = self.cog("token", "--min-ttl", "0")
        check("the session is alive at the end (refresh, then token)",
              final_refresh.returncode == 0 and final.returncode == 0
              and access_claims(final.stdout.decode().strip()),
              f"cog-cred refresh exited {final_refresh.returncode}, token {final.returncode}"
              + (f": {final_refresh.stderr.decode().strip()}" if final_refresh.returncode else ""))

        # ---- peak RSS per process type (KiB)
        def peak(values):
            values = [v for v in values if v is not None]  # None: not measured (no GNU time)
            return {"peak": max(values), "median": int(statistics.median(values)), "n": len(values)} if values else None

        rss = {}
        for name in self.commands:
            rss[name] = peak([c.rss_kib for c in self.calls if c.command == name and c.rc == 0])
        # The front alone: a token minted before the call started, outside
        # every window (where a failed first read also hands over to
        # cog-cred-cli): a handover for a refresh would have printed a new one.
        disruptions = self.windows + ([self.restart] if self.restart else [])
        rss["token, front alone (token older than the call)"] = peak(
            [c.rss_kib for c in self.calls if c.command == "token" and c.output_ok and c.iat < int(c.start_wall)
             and not any(self.overlaps(c, w) for w in disruptions)])
        rss["git-credential get = front + cog-cred-cli refreshing (every call refreshes)"] = rss.pop("git-credential get")
        rss["sign-out (cog-cred-cli)"] = peak(self.signer_rss["sign-out"])
        rss["sign-in (cog-cred-cli)"] = peak(self.signer_rss["sign-in"])

        # ---- leaks: descriptors and items
        end = {}
        for name, pid in self.daemons().items():
            end[name] = proc_status(pid)
        base = dict(self.baseline)
        if self.restart:  # compare the new keyring with itself just after its start
            base["gnome-keyring-daemon"] = self.restart["new_daemon_at_start"]
        fds = {}
        for name in ("dbus-daemon", "gnome-keyring-daemon"):
            pid = self.daemons()[name]
            # dbus-daemon closes a departed client's socket when it reads the
            # hang-up: wait (bounded) for the count to come back down.
            try:
                wait_until(lambda: proc_status(pid)["fds"] <= base[name]["fds"] + FD_SLACK, "", attempts=100, pause=0.05)
            except RuntimeError:
                pass
            end[name] = proc_status(pid)
            fds[name] = {"baseline": base[name]["fds"], "end": end[name]["fds"]}
            check(f"{name}: no file descriptor leak", end[name]["fds"] <= base[name]["fds"] + FD_SLACK,
                  f"{base[name]['fds']} at baseline, {end[name]['fds']} at the end (slack {FD_SLACK})")
        daemons = {name: {"baseline": base[name], "end": end[name]} for name in end}
        # gnome-keyring's own growth (not a check: it is the daemon's, and
        # libsecret's clients cause it too): bytes of RSS per call it served
        # since its baseline, about one GetSecrets per call.
        since = self.restart["end"] if self.restart else 0.0
        served = sum(1 for c in self.calls if c.start >= since)
        if served:
            growth = end["gnome-keyring-daemon"]["VmRSS"] - base["gnome-keyring-daemon"]["VmRSS"]
            daemons["gnome-keyring-daemon"]["RSS growth, bytes per call"] = round(1024 * growth / served)
        for name in daemons:
            rss[f"{name} (VmHWM)"] = end[name].get("VmHWM")

        items = self.bus.items(service="cog-cred")
        kinds = sorted(i["attributes"].get("kind") for i in items)
        profiles = sorted({i["attributes"].get("profile") for i in items})
        check("keyring: exactly one signed-in profile's items", kinds == EXPECTED_KINDS and profiles == [PROFILE],
              f"{len(items)} items: kinds {kinds}, profiles {profiles}")

        figures = {
            "passed": all(c["ok"] for c in checks),
            "settings": {"duration_s": self.args.duration, "ran_s": round(self.elapsed, 1),
                         "consumers": self.args.consumers, "token_lifetime_s": TOKEN_LIFETIME,
                         "rotate_refresh_tokens": True, "rotation_grace_s": self.args.rotation_grace,
                         "min_ttl_s (token, exec)": self.args.min_ttl,
                         "git-credential margin_s (fixed)": DEFAULT_MARGIN, "sign_out_every_s": self.args.sign_out_every,
                         "restart_keyring_at_s": self.args.restart_keyring_at, "binary": self.binary,
                         "peak RSS measured with": TIME if os.access(TIME, os.X_OK) else None},
            "calls": {"total": total, "failures": len(failures), "by command": by_command,
                      "failure kinds": failure_kinds, "failure examples": examples},
            "sign-out windows": [{k: round(v, 2) for k, v in w.items() if k != "start_wall"} for w in self.windows],
            "keyring restart": None if not self.restart else
                {"start": round(self.restart["start"], 2), "end": round(self.restart["end"], 2)},
            "refreshes": refreshes,
            "peak RSS KiB": rss,
            "file descriptors": fds,
            "daemons": daemons,
            "keyring items": {"count": len(items), "kinds": kinds, "profiles": profiles},
            "checks": checks,
        }
        if self.args.calls:
            with open(self.args.calls, "w") as f:
                for c in self.calls:
                    f.write(json.dumps({name: getattr(c, name) for name in Call.__slots__}) + "\n")
        return figures

    def stop_parts(self):
        if self.server:
            self.server.stop()
        if self.bus:
            self.bus.stop()
        if self.args.keep:
            print(f"soak: kept {self.root}", file=sys.stderr)
        else:
            shutil.rmtree(self.root, ignore_errors=True)


def summary(figures):
    lines = []
    s, c, r = figures["settings"], figures["calls"], figures["refreshes"]
    lines.append(f"soak: {s['ran_s']:.0f} s, {s['consumers']} consumers, {s['token_lifetime_s']} s tokens, "
                 f"rotation on (grace {s['rotation_grace_s']} s), "
                 f"sign-out every {s['sign_out_every_s']:.0f} s, keyring restart at {s['restart_keyring_at_s']} s")
    lines.append(f"calls: {c['total']}, failures: {c['failures']}")
    for name, f in c["by command"].items():
        lines.append(f"  {name:<20} {f['calls']:>7} calls  {f['ok']:>7} ok  "
                     f"{f['exit 77 in sign-out windows']:>4} x 77 (sign-out)  "
                     f"{f['exit 69 in the restart window']:>4} x 69 (restart)  {f['failures']:>4} failed  "
                     f"ms p50/p99/max {f['ms p50/p99/max']}")
    lines.append(f"refreshes: {r['made']} made, {r['expected']} expected "
                 f"({r['expected, one per successful git-credential get']} git + "
                 f"{r['expected, token and exec: duration / (lifetime - min-ttl)']} by lifetime)")
    lines.append("peak RSS (KiB): " + "; ".join(f"{k}: {v['peak'] if isinstance(v, dict) else v}"
                                               for k, v in figures["peak RSS KiB"].items() if v))
    lines.append("file descriptors: " + "; ".join(f"{k} {v['baseline']} -> {v['end']}"
                                                  for k, v in figures["file descriptors"].items()))
    growth = figures["daemons"]["gnome-keyring-daemon"].get("RSS growth, bytes per call")
    if growth is not None:
        lines.append(f"gnome-keyring-daemon RSS: {figures['daemons']['gnome-keyring-daemon']['baseline']['VmRSS']} -> "
                     f"{figures['daemons']['gnome-keyring-daemon']['end']['VmRSS']} KiB ({growth} bytes per call; "
                     "the daemon's own, see docs/security.md)")
    lines.append(f"keyring items: {figures['keyring items']['count']} {figures['keyring items']['kinds']}")
    for check in figures["checks"]:
        lines.append(f"  [{'ok' if check['ok'] else 'FAIL'}] {check['check']}: {check['detail']}")
    for example in c["failure examples"][:10]:
        lines.append(f"  failed: {example}")
    lines.append("soak: PASSED" if figures["passed"] else "soak: FAILED")
    return "\n".join(lines)


def interrupted(signum, frame):
    """A SIGTERM (CI's timeout, kill) stops the parts as Ctrl-C does, so no
    daemon outlives the run."""
    raise KeyboardInterrupt


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=3600, help="seconds to run (default 3600)")
    parser.add_argument("--consumers", type=int, default=8, help="concurrent consumers (default 8)")
    parser.add_argument("--sign-out-every", type=float, default=None,
                        help="seconds between sign-outs (default 600; a third of --duration when that is shorter)")
    parser.add_argument("--restart-keyring-at", type=float, default=None,
                        help="seconds into the run to restart gnome-keyring (default: halfway; negative: never)")
    parser.add_argument("--min-ttl", type=int, default=MIN_TTL,
                        help=f"--min-ttl for token and exec (default {MIN_TTL}; below {TOKEN_LIFETIME - 1})")
    parser.add_argument("--rotation-grace", type=int, default=0,
                        help="seconds a rotated-out refresh token keeps working at the double (Cognito: 0-60; "
                             "default 0, the strictest)")
    parser.add_argument("--binary", default=os.environ.get("COG_CRED_BIN", str(REPO / ".build" / "front" / "cog-cred")),
                        help="cog-cred to test (default $COG_CRED_BIN, else .build/front/cog-cred, what scripts/build makes)")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--calls", help="write every call (no token, no secret) to this file, one JSON object a line")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, keyring)")
    args = parser.parse_args(argv)
    if args.sign_out_every is None:
        args.sign_out_every = min(600.0, args.duration / 3)
    if args.restart_keyring_at is None:
        args.restart_keyring_at = args.duration / 2
    elif args.restart_keyring_at < 0:
        args.restart_keyring_at = None
    if (not 0 <= args.min_ttl < TOKEN_LIFETIME - 1 or args.consumers < 1 or args.sign_out_every <= 0
            or not 0 <= args.rotation_grace <= 60):
        parser.error(f"--min-ttl must be 0..{TOKEN_LIFETIME - 2}, --rotation-grace 0..60, "
                     "--consumers and --sign-out-every positive")
    if not os.access(args.binary, os.X_OK):
        parser.error(f"no cog-cred binary at {args.binary} (scripts/build, or --binary / COG_CRED_BIN)")

    signal.signal(signal.SIGTERM, interrupted)
    soak = Soak(args)
    try:
        soak.run()
        figures = soak.report()
    except KeyboardInterrupt:
        print("soak: interrupted", file=sys.stderr)
        return 130
    finally:
        soak.stop_parts()
    print(summary(figures), file=sys.stderr)
    text = json.dumps(figures, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n")
    print(text)
    return 0 if figures["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
