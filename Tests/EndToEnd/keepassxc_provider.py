"""A real KeePassXC as the Secret Service, headless, on a private D-Bus session bus.

Checked with Debian 12's keepassxc 2.7.4 (`apt-get install -y --no-install-recommends
keepassxc`). Standard library only; talks D-Bus through `dbus-send`.

    kp = KeePassXC(tmp_path / "kpxc")   # confirmations off: nothing ever waits for a dialog
    kp.start()
    subprocess.run(["secret-tool", ...], env={**os.environ, **kp.env})
    kp.lock(); kp.unlock(); kp.pid(); kp.stop()

What it sets up (each piece matters):
- a dbus-daemon with no service directories (conftest.bus_config_without_activation), so nothing is ever
  activated on demand (no gnome-keyring answering instead of KeePassXC);
- fresh HOME, XDG_* and TMPDIR under root_dir. TMPDIR matters: KeePassXC's
  single-instance lock and socket live in $TMPDIR (keepassxc-$USER.lock/.socket);
  a second KeePassXC sharing them hands its database to the first one and exits.
  SingleInstance=false is set as well;
- keepassxc.ini with [FdoSecrets] Enabled and the confirmation settings, and the
  update check and its first-run question switched off. AutoSaveAfterEveryChange
  is off: with it, 2.7.4 aborted about one run in twelve of the provider test
  ("malloc_consolidate(): unaligned fastbin chunk detected", SIGABRT, the bus
  name gone) while a sign-out deleted items right after a refresh's
  create-and-delete, and its log showed the save serialising garbage ("Stripping
  invalid XML 1.0 codepoint 0" by the hundred): a save racing the next change.
  0 in 45 runs without it. A lock still saves (AutoSaveOnExit) with no dialog;
- a database whose group "Secret Service" is exposed: keepassxc-cli has no command
  for it, so the database is exported to XML, Meta/CustomData gets
  FDO_SECRETS_EXPOSED_GROUP = the group's "{uuid}" (QUuid::toString form), and the
  XML is imported into a new database. The recycle bin is switched off so deleted
  items are really gone. Built once per process and copied afterwards;
- `keepassxc --pw-stdin DB` with QT_QPA_PLATFORM=offscreen; ready when
  org.freedesktop.secrets has an owner, ReadAlias("default") is not "/" AND that
  collection's Locked is false: the alias appears ~0.1 s before the database is
  open, and a store in that window raises an unlock dialog that never closes.
  The collection is /org/freedesktop/secrets/collection/secrets, Label "cog-cred tests".

Observed behaviour (2.7.4, headless), for the tests that use it:
- CreateItem, Item.Delete, Service.Lock and Unlock return a prompt; with the
  confirmations off Prompt("") completes at once. Items get KeePassXC's own
  attributes too (Title, UserName, URL, Notes, Uuid, Path); xdg:schema is kept.
- Locked database: SearchItems returns ([], []) (no locked list either) and the
  Items property is empty, so libsecret's lookup says "not found" without an
  error (secret-tool lookup: exit 1 in ~10 ms). With UnlockBeforeSearch=true
  SearchItems gets no reply at all (libsecret: "Timeout was reached" after 25 s)
  and the dialog stays even after unlock(). A store on a locked database, or
  Service.Unlock on the collection + Prompt(""), waits for a dialog: Completed
  never fires; Prompt.Dismiss() makes it fire (dismissed=true, result []).
- ConfirmAccessItem=true: every new D-Bus connection sees items in SearchItems'
  locked list (item Locked=true, GetSecret -> org.freedesktop.Secret.Error.IsLocked);
  Service.Unlock(items) returns ([], prompt); Prompt("") opens the access dialog,
  Completed never fires (only Dismiss -> dismissed=true). libsecret's lookup hangs.
- ConfirmDeleteItem=true: secret-tool clear hangs; the item stays.
- Any dialog so raised stays open for good (Dismiss and client exit do not close
  it): lockAllDatabases then replies but locks nothing, appExit and SIGTERM are
  ignored, stop() needs SIGKILL. Use a fresh instance after such a test.
"""
import base64
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import bus_config_without_activation

SECRETS = "org.freedesktop.secrets"
SERVICE_PATH = "/org/freedesktop/secrets"
MAIN_WINDOW = "org.keepassxc.KeePassXC.MainWindow"
EXPOSED_GROUP_KEY = "FDO_SECRETS_EXPOSED_GROUP"


# Built databases by (password, group name): the CLI round trip costs ~1 s.
_TEMPLATES = {}


def _bool(value):
    return "true" if value else "false"


class KeePassXCError(RuntimeError):
    pass


class KeePassXC:
    """KeePassXC as org.freedesktop.secrets on its own session bus.

    confirm_access, confirm_delete, unlock_before_search: KeePassXC's
    ConfirmAccessItem, ConfirmDeleteItem and UnlockBeforeSearch (its own defaults
    are all True; here they default to False so nothing waits for a dialog that
    no one can answer headless)."""

    def __init__(self, root_dir, confirm_access=False, confirm_delete=False, unlock_before_search=False,
                 password="test-database-password", group="Secret Service", timeout=30):
        self.root = Path(root_dir).resolve()
        self.confirm_access = confirm_access
        self.confirm_delete = confirm_delete
        self.unlock_before_search = unlock_before_search
        self.password = password
        self.group = group
        self.timeout = timeout
        self.database = self.root / "secrets.kdbx"
        self.address = None
        self.bus = None
        self.keepassxc = None
        self.collection = None
        self.log_path = self.root / "keepassxc.log"
        self.startup_seconds = None

    # -- environments -------------------------------------------------------

    def _dirs(self):
        r = self.root
        return {"HOME": r / "home", "XDG_CONFIG_HOME": r / "home" / ".config",
                "XDG_DATA_HOME": r / "data", "XDG_CACHE_HOME": r / "cache",
                "XDG_STATE_HOME": r / "state", "XDG_RUNTIME_DIR": r / "runtime", "TMPDIR": r / "tmp"}

    def _private_env(self):
        """The environment of the programs this fixture runs itself."""
        env = {k: v for k, v in os.environ.items()
               if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "KPXC_CONFIG",
                            "KPXC_CONFIG_LOCAL", "SESSION_MANAGER")}
        env.update({k: str(v) for k, v in self._dirs().items()})
        env.update({"QT_QPA_PLATFORM": "offscreen", "QT_ACCESSIBILITY": "0", "NO_AT_BRIDGE": "1"})
        if self.address:
            env["DBUS_SESSION_BUS_ADDRESS"] = self.address
        return env

    @property
    def env(self):
        """What a client needs (add it to os.environ): the bus, like conftest's Bus.env."""
        if not self.address:
            raise KeePassXCError("not started")
        d = self._dirs()
        return {"DBUS_SESSION_BUS_ADDRESS": self.address,
                "XDG_DATA_HOME": str(d["XDG_DATA_HOME"]), "XDG_RUNTIME_DIR": str(d["XDG_RUNTIME_DIR"])}

    # -- start and stop -----------------------------------------------------

    def start(self):
        began = time.monotonic()
        self.root.mkdir(parents=True, exist_ok=True)
        for name, d in self._dirs().items():
            d.mkdir(parents=True, exist_ok=True)
            if name in ("XDG_RUNTIME_DIR", "TMPDIR"):
                os.chmod(d, 0o700)
        try:
            self._start_bus()
            self._write_config()
            self._make_database()
            self._start_keepassxc()
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        return self

    def _start_bus(self):
        # No service directories: the bus activates nothing (not gnome-keyring).
        config = bus_config_without_activation(self.root / "bus.conf")
        # --nofork: the daemon stays our child, so stop() can wait for it (a --fork'ed
        # daemon is re-parented and can linger as a zombie where PID 1 does not reap).
        read_fd, write_fd = os.pipe()
        try:
            self.bus = subprocess.Popen(
                ["dbus-daemon", "--nofork", "--nopidfile", f"--config-file={config}", f"--print-address={write_fd}"],
                pass_fds=(write_fd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=self._private_env(), start_new_session=True)
        finally:
            os.close(write_fd)
        with os.fdopen(read_fd) as f:
            self.address = f.readline().strip()
        if not self.address:
            raise KeePassXCError("dbus-daemon printed no address")

    def _write_config(self):
        ini = self._dirs()["XDG_CONFIG_HOME"] / "keepassxc" / "keepassxc.ini"
        ini.parent.mkdir(parents=True, exist_ok=True)
        ini.write_text(f"""[General]
ConfigVersion=2
SingleInstance=false
UpdateCheckMessageShown=true
RememberLastDatabases=false
RememberLastKeyFiles=false
OpenPreviousDatabasesOnStartup=false
AutoSaveAfterEveryChange=false
AutoSaveOnExit=true
AutoReloadOnChange=false
BackupBeforeSave=false

[GUI]
CheckForUpdates=false
ShowTrayIcon=false
MinimizeOnStartup=false
ShowExpiredEntriesOnDatabaseUnlock=false

[Security]
LockDatabaseIdle=false
LockDatabaseScreenLock=false
ClearClipboard=false

[Browser]
Enabled=false

[SSHAgent]
Enabled=false

[FdoSecrets]
Enabled=true
ShowNotification=false
ConfirmAccessItem={_bool(self.confirm_access)}
ConfirmDeleteItem={_bool(self.confirm_delete)}
UnlockBeforeSearch={_bool(self.unlock_before_search)}
""")

    def _cli(self, *args, stdin):
        result = subprocess.run(["keepassxc-cli", *args], input=stdin, capture_output=True,
                                env=self._private_env(), timeout=60)
        if result.returncode != 0:
            raise KeePassXCError(f"keepassxc-cli {args[0]} failed: {result.stderr.decode(errors='replace')}")
        return result.stdout

    def _make_database(self):
        key = (self.password, self.group)
        if key not in _TEMPLATES:
            _TEMPLATES[key] = self._build_database()
        self.database.write_bytes(_TEMPLATES[key])
        os.chmod(self.database, 0o600)

    def _build_database(self):
        pw = (self.password + "\n").encode()
        with tempfile.TemporaryDirectory(dir=self.root) as work:
            work = Path(work)
            first, xml_path, final = work / "first.kdbx", work / "export.xml", work / "final.kdbx"
            # -t: the smallest key derivation time allowed (100 ms), so opening is quick.
            self._cli("db-create", "-q", "-p", "-t", "100", str(first), stdin=pw + pw)
            self._cli("mkdir", "-q", str(first), self.group, stdin=pw)
            xml_path.write_bytes(self._cli("export", "-q", "-f", "xml", str(first), stdin=pw))
            tree = ET.parse(xml_path)
            root = tree.getroot()
            meta = root.find("Meta")
            group = next(g for g in root.iter("Group") if g.findtext("Name") == self.group)
            # XML holds the UUID as base64 of its 16 bytes; KeePassXC wants "{8-4-4-4-12}".
            group_uuid = "{%s}" % uuid.UUID(bytes=base64.b64decode(group.findtext("UUID")))
            meta.find("DatabaseName").text = "cog-cred tests"
            meta.find("RecycleBinEnabled").text = "False"
            custom = meta.find("CustomData")
            if custom is None:
                custom = ET.SubElement(meta, "CustomData")
            item = ET.SubElement(custom, "Item")
            ET.SubElement(item, "Key").text = EXPOSED_GROUP_KEY
            ET.SubElement(item, "Value").text = group_uuid
            tree.write(xml_path, encoding="UTF-8", xml_declaration=True)
            self._cli("import", "-q", "-p", "-t", "100", str(xml_path), str(final), stdin=pw + pw)
            return final.read_bytes()

    def _start_keepassxc(self):
        log = open(self.log_path, "wb")
        try:
            self.keepassxc = subprocess.Popen(
                ["keepassxc", "--pw-stdin", str(self.database)], stdin=subprocess.PIPE, stdout=log,
                stderr=subprocess.STDOUT, env=self._private_env(), cwd=self.root, start_new_session=True)
        finally:
            log.close()
        self.keepassxc.stdin.write((self.password + "\n").encode())
        self.keepassxc.stdin.close()
        self._wait(lambda: self.name_has_owner(SECRETS) and self.read_alias("default") != "/",
                   "KeePassXC to own org.freedesktop.secrets with a default collection")
        self.collection = self.read_alias("default")
        # The alias appears while the database is still being opened (Locked=true for
        # ~0.1 s, the key derivation): a CreateItem then gets an unlock prompt whose
        # dialog no one can answer headless. On a busy machine the collection's own
        # object can be exported only after its alias: "no such object" is "not yet".
        self._wait(self._collection_unlocked, "the default collection to be unlocked")

    def stop(self, grace=3):
        """Ends KeePassXC, then the bus, and reaps both. SIGTERM, then SIGKILL after
        `grace` seconds: a KeePassXC with an unanswered dialog ignores SIGTERM (and
        appExit); a normal one exits in < 0.1 s."""
        for attr in ("keepassxc", "bus"):
            proc = getattr(self, attr)
            if proc is None:
                continue
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=grace)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=10)
            else:
                proc.wait()
            # Anything else left in its process group (nothing expected).
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            setattr(self, attr, None)
        self.address = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- D-Bus, through dbus-send --------------------------------------------

    def call(self, dest, path, method, *args, check=True, timeout=None):
        """dbus-send --print-reply; returns (returncode, stdout+stderr)."""
        cmd = ["dbus-send", f"--bus={self.address}", "--print-reply", f"--dest={dest}", path, method, *args]
        if timeout is not None:
            cmd.insert(3, f"--reply-timeout={int(timeout * 1000)}")
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=(timeout or 25) + 5)
        if check and r.returncode != 0:
            raise KeePassXCError(f"{method} failed: {r.stderr.strip()}")
        return r.returncode, r.stdout + r.stderr

    def name_has_owner(self, name):
        _, out = self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                           f"string:{name}", check=False)
        return "boolean true" in out

    def read_alias(self, alias):
        code, out = self.call(SECRETS, SERVICE_PATH, "org.freedesktop.Secret.Service.ReadAlias",
                              f"string:{alias}", check=False)
        m = re.search(r'object path "([^"]*)"', out)
        return m.group(1) if code == 0 and m else "/"

    def _collection_unlocked(self):
        code, out = self.call(SECRETS, self.collection, "org.freedesktop.DBus.Properties.Get",
                              "string:org.freedesktop.Secret.Collection", "string:Locked", check=False)
        return code == 0 and "boolean false" in out

    def locked(self, path=None):
        """The Locked property of the default collection, or of an item or collection path."""
        path = path or self.collection
        interface = "Item" if path.startswith(self.collection + "/") else "Collection"
        _, out = self.call(SECRETS, path, "org.freedesktop.DBus.Properties.Get",
                           f"string:org.freedesktop.Secret.{interface}", "string:Locked")
        return "boolean true" in out

    def search_items(self, **attributes):
        """Service.SearchItems(a{ss}) -> (unlocked paths, locked paths)."""
        flat = ",".join(f"{k},{v}" for k, v in attributes.items())
        _, out = self.call(SECRETS, SERVICE_PATH, "org.freedesktop.Secret.Service.SearchItems",
                           f"dict:string:string:{flat}")
        arrays = re.findall(r"array \[(.*?)\]", out, re.S)
        return tuple(re.findall(r'object path "([^"]*)"', a) for a in arrays[:2])

    def secret_tool(self, *args, input=None, timeout=30):
        return subprocess.run(["secret-tool", *args], env={**os.environ, **self.env}, input=input,
                              capture_output=True, text=True, timeout=timeout)

    def pid(self):
        """PID of the process that owns org.freedesktop.secrets."""
        _, out = self.call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                           "org.freedesktop.DBus.GetConnectionUnixProcessID", f"string:{SECRETS}")
        return int(re.search(r"uint32 (\d+)", out).group(1))

    def lock(self):
        """lockAllDatabases, then waits for Locked=true (~0.1 s). Once any prompt has
        raised a dialog (unlock, access or delete confirmation) lockAllDatabases
        still replies but locks nothing: this then times out."""
        self.call(MAIN_WINDOW, "/keepassxc", f"{MAIN_WINDOW}.lockAllDatabases")
        self._wait(lambda: self.locked(), "the collection to lock (an unanswered KeePassXC dialog prevents it)")

    def unlock(self):
        """openDatabase(path, password), then waits for Locked=false (~0.1 s). Works even
        with a dialog open, but does not answer it: a SearchItems held by
        UnlockBeforeSearch stays unanswered (the client times out after 25 s)."""
        self.call(MAIN_WINDOW, "/keepassxc", f"{MAIN_WINDOW}.openDatabase",
                  f"string:{self.database}", f"string:{self.password}")
        self._wait(lambda: not self.locked(), "the collection to unlock")

    def _wait(self, predicate, what):
        deadline = time.monotonic() + self.timeout
        while True:
            if predicate():
                return
            if self.keepassxc is not None and self.keepassxc.poll() is not None:
                raise KeePassXCError(f"keepassxc exited ({self.keepassxc.returncode}) waiting for {what}: "
                                     f"{self.log_path.read_text(errors='replace')}")
            if time.monotonic() > deadline:
                raise KeePassXCError(f"timed out waiting for {what}; log: {self.log_path.read_text(errors='replace')}")
            time.sleep(0.02)


def _processes_mentioning(text):
    """PIDs whose command line mentions `text` (leftover check)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = next((line for line in (proc / "status").read_text().splitlines()
                              if line.startswith("State:")), "")
            except OSError:
                continue
            if text in cmdline and "zombie" not in state:
                found.append(int(proc.name))
    return found


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="kpxc-selfcheck-") as tmp:
        kp = KeePassXC(Path(tmp) / "kpxc")
        try:
            kp.start()
            print(f"started in {kp.startup_seconds:.2f} s; collection {kp.collection}; pid {kp.pid()}")
            assert kp.pid() == kp.keepassxc.pid, (kp.pid(), kp.keepassxc.pid)
            attrs = ["service", "cog-cred", "profile", "p", "kind", "access"]
            r = kp.secret_tool("store", "--label=x", *attrs, input="s3cret")
            assert r.returncode == 0, r.stderr
            r = kp.secret_tool("lookup", *attrs)
            assert (r.returncode, r.stdout) == (0, "s3cret"), r
            t0 = time.monotonic()
            kp.lock()
            t1 = time.monotonic()
            r = kp.secret_tool("lookup", *attrs)
            assert r.returncode == 1 and r.stdout == "", r  # locked: nothing found, no error
            assert kp.search_items(service="cog-cred") == ([], []), kp.search_items(service="cog-cred")
            t2 = time.monotonic()
            kp.unlock()
            t3 = time.monotonic()
            r = kp.secret_tool("lookup", *attrs)
            assert (r.returncode, r.stdout) == (0, "s3cret"), r
            r = kp.secret_tool("clear", *attrs)
            assert r.returncode == 0, r.stderr
            r = kp.secret_tool("lookup", *attrs)
            assert r.returncode == 1 and r.stdout == "", r
            print(f"lock {t1 - t0:.2f} s, unlock {t3 - t2:.2f} s")
        finally:
            kp.stop()
        left = _processes_mentioning(str(kp.root))
        assert not left, f"leftover processes: {left}"
    print("OK")
