"""A real KWallet (kwalletd5, KDE Frameworks 5.103 on Debian 12) as the Secret
Service on a private D-Bus session bus, headless, for end-to-end tests.

Needs the Debian packages libkf5wallet-bin (kwalletd5) and
libqca-qt5-2-plugins (without it every encrypted Secret Service session fails
with "createDLGroup failed"), plus dbus-daemon and dbus-send. Standard
library only.

How the wallet gets created and opened with no dialog: the way pam_kwallet5
does it at login. kwalletd5 is started as

    PAM_KWALLET5_LOGIN=... kwalletd5 --pam-login HASH_FD SOCKET_FD

It first reads the password hash from HASH_FD (a pipe; exactly 56 bytes,
PBKDF2-HMAC-SHA512 of the password over the 56-byte salt in
$XDG_DATA_HOME/kwalletd/kdewallet.salt, 50000 iterations), then accept()s
one connection on SOCKET_FD (a listening Unix socket) and putenv()s every
line it reads up to EOF (here: DBUS_SESSION_BUS_ADDRESS=...). Then it
creates the wallet "kdewallet" if there is none and opens it with the hash.

Two kwalletd5 quirks this class hides:
- The Secret Service side lists collections only for wallet files that
  existed when kwalletd5 started, so on the first start the new wallet is
  not visible (ReadAlias("default") is "/"): kwalletd5 is started twice.
- The collection reports Locked=true although kwalletd5 has the wallet open,
  until a client calls Service.Unlock and then Prompt.Prompt on the prompt it
  returns; the prompt completes at once, with no dialog, because the wallet
  is already open. unlock_for_secret_service() does that.

What clients see (libsecret 0.20.5 / secret-tool):
- Locked=true while the wallet is open in kwalletd5 is invisible to them:
  store and lookup call Unlock + Prompt themselves and succeed.
- After lock() (the wallet closed in kwalletd5) a store or lookup waits for
  kwalletd5's password dialog, which offscreen nobody answers: it hangs (no
  error, no timeout). The pending dialog also makes kwalletd5 ignore pamOpen,
  so unlock() then falls back to restart().
- About 1% of encrypted sessions fail (DH key exchange between libsecret and
  kwalletd5/QCA): exit 1 with "Client public key size is invalid", or exit 1
  with no output at all (libsecret only logs "received an invalid or
  unencryptable secret" at info level). Expect it; don't assert on 100%.

Usage:

    wallet = KWallet(tmp_path / "kwallet")
    wallet.start()                      # unlocked; start(unlock=False): Locked=true
    subprocess.run(["secret-tool", ...], env=wallet.env)
    wallet.lock(); wallet.unlock()
    wallet.stop()
"""
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from conftest import bus_config_without_activation

SECRETS = "org.freedesktop.secrets"
SECRETS_PATH = "/org/freedesktop/secrets"
SERVICE_IFACE = "org.freedesktop.Secret.Service"
COLLECTION_IFACE = "org.freedesktop.Secret.Collection"
PROMPT_IFACE = "org.freedesktop.Secret.Prompt"
KWALLETD = "org.kde.kwalletd5"
KWALLETD_PATH = "/modules/kwalletd5"
KWALLET_IFACE = "org.kde.KWallet"

SALT_SIZE = 56      # pam_kwallet5's KWALLET_PAM_SALTSIZE
KEY_SIZE = 56       # KWALLET_PAM_KEYSIZE == kwalletd's PBKDF2_SHA512_KEYSIZE
ITERATIONS = 50000  # KWALLET_PAM_ITERATIONS


class KWalletError(RuntimeError):
    pass


def wallet_hash(password, salt):
    """The key pam_kwallet5 hands kwalletd5: PBKDF2-HMAC-SHA512, 56 bytes."""
    return hashlib.pbkdf2_hmac("sha512", password.encode(), salt, ITERATIONS, KEY_SIZE)


class KWallet:
    """kwalletd5 as org.freedesktop.secrets on a private session bus.

    Everything (HOME, XDG dirs, bus socket, logs) lives under `root_dir`.
    """

    wallet_name = "kdewallet"

    def __init__(self, root_dir, password="cog-cred-test-wallet", timeout=15.0):
        self.root = os.path.abspath(os.fspath(root_dir))
        self.password = password
        self.timeout = timeout
        self.bus = None          # dbus-daemon Popen
        self.kwalletd = None     # kwalletd5 Popen
        self.address = None
        self.env = None
        self.timings = {}
        self._hash = None
        self.started_pids = []   # every process this object started
        self._sockdir = None     # short directory for the sockets (108-byte sun_path limit)

    # ---------------------------------------------------------------- paths
    def _path(self, *parts):
        return os.path.join(self.root, *parts)

    @property
    def home(self):
        return self._path("home")

    @property
    def data_home(self):
        # pam_kwallet5 puts the salt under $HOME/.local/share/kwalletd and
        # kwalletd5 looks under $XDG_DATA_HOME/kwalletd: keep them the same.
        return os.path.join(self.home, ".local", "share")

    @property
    def wallet_dir(self):
        return os.path.join(self.data_home, "kwalletd")

    # ------------------------------------------------------------ lifecycle
    def start(self, unlock=True):
        """Bus, then kwalletd5 (twice on a fresh wallet). With unlock=False
        the default collection is left reporting Locked=true."""
        t0 = time.monotonic()
        self._make_dirs()
        try:
            self._start_bus()
            self.timings["bus"] = time.monotonic() - t0
            self._hash = wallet_hash(self.password, self._salt())
            fresh = not os.path.exists(os.path.join(self.wallet_dir, self.wallet_name + ".kwl"))
            t = time.monotonic()
            self._start_kwalletd()
            if fresh:
                # The first start creates kdewallet.kwl, but its Secret Service
                # side only lists wallets found at start-up: start again.
                self._wait(self._kwallet_is_open, "kwalletd5 to create and open the wallet")
                self.timings["first_kwalletd"] = time.monotonic() - t
                t = time.monotonic()
                self.restart()
            else:
                self._wait_for_service()
            self.timings["kwalletd"] = time.monotonic() - t
            if unlock:
                t = time.monotonic()
                self.unlock_for_secret_service()
                self.timings["unlock"] = time.monotonic() - t
        except BaseException:
            self.stop()
            raise
        self.timings["start"] = time.monotonic() - t0
        return self

    def stop(self):
        """Ends kwalletd5 and the bus (both children of this process)."""
        self._stop_kwalletd()
        if self.bus is not None:
            _end(self.bus)
            self.bus = None
        if self._sockdir is not None:
            shutil.rmtree(self._sockdir, ignore_errors=True)
            self._sockdir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _make_dirs(self):
        # Unix socket paths are limited to 107 bytes and pytest's tmp_path
        # can be longer: the bus socket and pam_kwallet5's hand-over socket
        # go to a short directory of their own, removed by stop().
        self._sockdir = tempfile.mkdtemp(prefix="kwallet-")
        for d in ("home", "config", "cache", "runtime"):
            os.makedirs(self._path(d), exist_ok=True)
        os.makedirs(self.wallet_dir, exist_ok=True)
        os.chmod(self._path("runtime"), 0o700)
        os.chmod(self.wallet_dir, 0o700)

    def _salt(self):
        path = os.path.join(self.wallet_dir, self.wallet_name + ".salt")
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(SALT_SIZE))
        with open(path, "rb") as f:
            salt = f.read()
        if len(salt) != SALT_SIZE:
            raise KWalletError(f"{path}: {len(salt)} bytes, expected {SALT_SIZE}")
        return salt

    def _start_bus(self):
        # No service directories: nothing is ever activated (in particular
        # not gnome-keyring from /usr/share/dbus-1/services).
        config = bus_config_without_activation(Path(self._path("bus.conf")))
        read_fd, write_fd = os.pipe()
        log = open(self._path("dbus-daemon.log"), "ab")
        try:
            self.bus = subprocess.Popen(
                ["dbus-daemon", "--nofork", "--nopidfile", f"--config-file={config}",
                 f"--print-address={write_fd}"],
                pass_fds=(write_fd,), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True)
        finally:
            os.close(write_fd)
            log.close()
        self.started_pids.append(self.bus.pid)
        with os.fdopen(read_fd) as f:
            self.address = f.readline().strip()
        if not self.address:
            raise KWalletError("dbus-daemon printed no address; see " + self._path("dbus-daemon.log"))
        env = {k: v for k, v in os.environ.items()
               if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_PID", "SESSION_MANAGER",
                            "KDE_FULL_SESSION", "XDG_CURRENT_DESKTOP", "XDG_SESSION_TYPE")}
        env.update({
            "DBUS_SESSION_BUS_ADDRESS": self.address,
            "HOME": self.home,
            "XDG_CONFIG_HOME": self._path("config"),
            "XDG_DATA_HOME": self.data_home,
            "XDG_CACHE_HOME": self._path("cache"),
            "XDG_RUNTIME_DIR": self._path("runtime"),
            "QT_QPA_PLATFORM": "offscreen",
        })
        self.env = env

    def _start_kwalletd(self):
        sock_path = os.path.join(self._sockdir, "kwallet5.socket")
        if os.path.exists(sock_path):
            os.unlink(sock_path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(sock_path)
        listener.listen(1)
        hash_r, hash_w = os.pipe()
        log = open(self._path("kwalletd5.log"), "ab")
        try:
            self.kwalletd = subprocess.Popen(
                ["kwalletd5", "--pam-login", str(hash_r), str(listener.fileno())],
                pass_fds=(hash_r, listener.fileno()),
                env={**self.env, "PAM_KWALLET5_LOGIN": sock_path},
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        finally:
            os.close(hash_r)
            log.close()
        self.started_pids.append(self.kwalletd.pid)
        try:
            # kwalletd5 reads the hash first (at most 6 read()s), then accepts
            # one connection and putenv()s each line until EOF.
            os.write(hash_w, self._hash)
        finally:
            os.close(hash_w)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(sock_path)
            client.sendall(f"DBUS_SESSION_BUS_ADDRESS={self.address}\n".encode())
        listener.close()
        os.unlink(sock_path)

    def _stop_kwalletd(self):
        if self.kwalletd is None:
            return
        # kwalletd5 writes the wallet file 5 s after a change (its sync
        # timer) and dies on SIGTERM without saving, while the Secret Service
        # attributes (kdewallet_attributes.json) are written at once: a stop
        # right after a store would leave an item whose secret is empty.
        # Closing the wallet saves it.
        if self.kwalletd.poll() is None and self.bus is not None and self.bus.poll() is None:
            try:
                if self._kwallet_is_open():
                    self.call(KWALLETD, KWALLETD_PATH, f"{KWALLET_IFACE}.close", f"string:{self.wallet_name}",
                              "boolean:true")
            except (KWalletError, subprocess.TimeoutExpired):
                pass
        _end(self.kwalletd)
        self.kwalletd = None
        # Wait until the bus has noticed, or a new instance would find
        # org.kde.kwalletd5 taken (KDBusService::Unique) and quit.
        if self.bus is not None and self.bus.poll() is None:
            self._wait(lambda: not self.name_has_owner(KWALLETD) and not self.name_has_owner(SECRETS),
                       "kwalletd5's names to be released")

    # ------------------------------------------------------------ the API
    def default_collection(self):
        """ReadAlias("default"): the collection's object path, or "/"."""
        return self.call(SECRETS, SECRETS_PATH, f"{SERVICE_IFACE}.ReadAlias", "string:default")[0]

    def locked(self, collection=None):
        collection = collection or self.default_collection()
        return self.call(SECRETS, collection, "org.freedesktop.DBus.Properties.Get",
                         f"string:{COLLECTION_IFACE}", "string:Locked")[0]

    def unlock_for_secret_service(self):
        """Service.Unlock on the default collection, then Prompt.Prompt on
        the prompt it returns (the prompt completes at once: the wallet is
        already open in kwalletd5). Waits until Locked is false."""
        collection = self.default_collection()
        unlocked, prompt = self.call(SECRETS, SECRETS_PATH, f"{SERVICE_IFACE}.Unlock",
                                     f"array:objpath:{collection}")
        if prompt != "/":
            self.call(SECRETS, prompt, f"{PROMPT_IFACE}.Prompt", "string:")
        self._wait(lambda: self.locked(collection) is False, "the default collection to be unlocked")

    def lock(self):
        """Closes the wallet in kwalletd5 (org.kde.KWallet.close(name, force));
        the Secret Service collection then reports Locked=true."""
        self.call(KWALLETD, KWALLETD_PATH, f"{KWALLET_IFACE}.close", f"string:{self.wallet_name}",
                  "boolean:true")
        self._wait(lambda: not self._kwallet_is_open() and self.locked() is True,
                   "the default collection to be locked")

    def unlock(self):
        """Opens the closed wallet again without a dialog (pamOpen with the
        hash, as at login), then unlocks it for the Secret Service.

        If a Secret Service client asked for the closed wallet meanwhile,
        kwalletd5 is showing its password dialog (offscreen: never answered)
        and refuses pamOpen while it does; then kwalletd5 is restarted with
        --pam-login instead (a new pid)."""
        if not self._kwallet_is_open():
            # pamOpen is annotated no-reply, but sent without --print-reply
            # (no reply expected) kwalletd5 ignores it. It returns nothing
            # either way: a wrong hash, or one not 20, 40 or 56 bytes long,
            # just leaves the wallet closed.
            hash_arg = "array:byte:" + ",".join(str(b) for b in self._hash)
            self.call(KWALLETD, KWALLETD_PATH, f"{KWALLET_IFACE}.pamOpen", f"string:{self.wallet_name}",
                      hash_arg, "int32:0")
            try:
                self._wait(self._kwallet_is_open, "kwalletd5 to open the wallet", timeout=2.0)
            except KWalletError:
                self.restart()
        self.unlock_for_secret_service()

    def restart(self):
        """A new kwalletd5 with --pam-login: the wallet is open in kwalletd5,
        the collection reports Locked=true until unlock_for_secret_service()."""
        self._stop_kwalletd()
        self._start_kwalletd()
        self._wait_for_service()

    def _wait_for_service(self):
        self._wait(lambda: self.name_has_owner(SECRETS) and self.default_collection() != "/",
                   "org.freedesktop.secrets with a default collection")
        self._wait(self._kwallet_is_open, "kwalletd5 to open the wallet")

    def pid(self, name=SECRETS):
        """Process id of the connection owning `name` on the private bus."""
        return self.call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                         "org.freedesktop.DBus.GetConnectionUnixProcessID", f"string:{name}")[0]

    def name_has_owner(self, name):
        return self.call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                         "org.freedesktop.DBus.NameHasOwner", f"string:{name}")[0]

    def secret_tool(self, *args, input=None, timeout=30):
        return subprocess.run(["secret-tool", *args], env=self.env, input=input,
                              capture_output=True, text=True, timeout=timeout)

    # ------------------------------------------------------------- helpers
    def _kwallet_is_open(self):
        if not self.name_has_owner(KWALLETD):
            return False
        return self.call(KWALLETD, KWALLETD_PATH, f"{KWALLET_IFACE}.isOpen", f"string:{self.wallet_name}")[0]

    def call(self, dest, path, method, *args, reply=True):
        """One D-Bus call with dbus-send; returns the reply's values (object
        paths, strings, numbers, booleans, arrays as lists; variants unwrapped)."""
        cmd = ["dbus-send", f"--bus={self.address}", f"--dest={dest}"]
        cmd += ["--print-reply", "--reply-timeout=10000"] if reply else []
        result = subprocess.run(cmd + [path, method, *args], env=self.env, capture_output=True, text=True,
                                timeout=30)
        if result.returncode != 0:
            raise KWalletError(f"{method} on {dest} {path}: {result.stderr.strip()}")
        return _parse_reply(result.stdout) if reply else None

    def _wait(self, predicate, what, timeout=None):
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        pause = 0.01
        last = None
        while time.monotonic() < deadline:
            for proc, name in ((self.bus, "dbus-daemon"), (self.kwalletd, "kwalletd5")):
                if proc is not None and proc.poll() is not None:
                    raise KWalletError(f"{name} exited ({proc.returncode}) while waiting for {what}; "
                                       f"see {self.root}/*.log")
            try:
                if predicate():
                    return
            except KWalletError as e:
                last = e
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
        raise KWalletError(f"timed out after {timeout}s waiting for {what}" + (f" ({last})" if last else ""))


def _end(proc, grace=5):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


_TOKEN = re.compile(r'(object path|string|boolean|u?int(?:16|32|64)|byte|double)\s+("(?:[^"\\]|\\.)*"|\S+)'
                    r'|(array \[|\]|variant|struct \{|\})')


def _parse_reply(text):
    """Values of a `dbus-send --print-reply` reply (first line is the header)."""
    body = text.split("\n", 1)[1] if "\n" in text else ""
    stack = [[]]
    for m in _TOKEN.finditer(body):
        kind, value, bracket = m.groups()
        if bracket in ("array [", "struct {"):
            stack.append([])
        elif bracket in ("]", "}"):
            done = stack.pop()
            stack[-1].append(done)
        elif bracket == "variant":
            continue
        elif kind in ("object path", "string"):
            stack[-1].append(value[1:-1] if value.startswith('"') else value)
        elif kind == "boolean":
            stack[-1].append(value == "true")
        elif kind == "double":
            stack[-1].append(float(value))
        else:
            stack[-1].append(int(value))
    return stack[0]


def _selfcheck():
    attrs = ["service", "cog-cred", "profile", "p", "kind", "access"]
    root = tempfile.mkdtemp(prefix="kwallet-selfcheck-")
    wallet = KWallet(root)
    try:
        wallet.start(unlock=False)
        collection = wallet.default_collection()
        assert collection != "/", collection
        assert wallet.locked() is True, "a fresh start reports Locked=true"
        owner = wallet.pid()
        assert owner == wallet.kwalletd.pid, (owner, wallet.kwalletd.pid)
        wallet.unlock_for_secret_service()
        assert wallet.locked() is False

        r = wallet.secret_tool("store", "--label=cog-cred selfcheck", *attrs, input="s3cret")
        assert r.returncode == 0, r.stderr
        r = wallet.secret_tool("lookup", *attrs)
        assert (r.returncode, r.stdout) == (0, "s3cret"), (r.returncode, r.stdout, r.stderr)

        wallet.lock()
        assert wallet.locked() is True
        wallet.unlock()
        assert wallet.locked() is False
        r = wallet.secret_tool("lookup", *attrs)
        assert (r.returncode, r.stdout) == (0, "s3cret"), (r.returncode, r.stdout, r.stderr)

        # Saved across a restart of kwalletd5 (which reports Locked=true
        # again; libsecret's lookup unlocks it silently).
        wallet.restart()
        assert wallet.locked() is True
        r = wallet.secret_tool("lookup", *attrs)
        assert (r.returncode, r.stdout) == (0, "s3cret"), (r.returncode, r.stdout, r.stderr)

        # A client asking for a closed wallet waits for kwalletd5's password
        # dialog, which nobody sees: it hangs. unlock() still recovers.
        wallet.lock()
        try:
            r = wallet.secret_tool("lookup", *attrs, timeout=1)
            raise AssertionError(f"lookup on a closed wallet returned: {r}")
        except subprocess.TimeoutExpired:
            pass
        wallet.unlock()
        r = wallet.secret_tool("lookup", *attrs)
        assert (r.returncode, r.stdout) == (0, "s3cret"), (r.returncode, r.stdout, r.stderr)

        r = wallet.secret_tool("clear", *attrs)
        assert r.returncode == 0, r.stderr
        r = wallet.secret_tool("lookup", *attrs)
        assert (r.returncode, r.stdout) == (1, ""), (r.returncode, r.stdout, r.stderr)
        timings = {k: round(v, 3) for k, v in wallet.timings.items()}
    finally:
        wallet.stop()
        shutil.rmtree(root, ignore_errors=True)
    for pid in wallet.started_pids:
        assert not os.path.exists(f"/proc/{pid}"), f"process {pid} left over"
    assert wallet._sockdir is None and not os.path.exists(root)
    print("timings (s):", timings)
    print("OK")


if __name__ == "__main__":
    _selfcheck()
