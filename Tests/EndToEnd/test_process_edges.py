"""The process's own edges (#38): what a careless script or another local user
can do to cog-cred from outside its code.

- Standard descriptors closed at start: nothing of cog-cred's takes their
  numbers, so no token is written into the lock file, a socket or a file.
- The profile's lock: one place in every environment (the state directory,
  whether or not XDG_RUNTIME_DIR is set), checked up its path, and never in
  the way of a token that is still fresh.
- The binaries' own directory is not trusted for code: no $ORIGIN run path,
  and the front runs no cog-cred-cli that another user could have written.
"""

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support import poll, waiting_on_lock

NOBODY = 65534


def lock_file(cog, profile="default"):
    return cog.home / ".local" / "state" / "cog-cred" / "locks" / f"{profile}.lock"


def closed_fds(cog, *args, fds="<&- >&-", env=None, binary=None, timeout=60):
    """Runs cog-cred with the descriptors `fds` closes (sh's redirections)."""
    full_env = {k: v for k, v in {**cog.env, **(env or {})}.items() if v is not None}
    return subprocess.run(["/bin/sh", "-c", f'exec "$@" {fds}', "sh", binary or cog.binary, *args],
                          env=full_env, capture_output=True, text=True, timeout=timeout)


def secrets_of(bus):
    return [item["secret"] for item in bus.items(service="cog-cred") if item["secret"]]


def files_holding(roots, secrets):
    """Every file under `roots` that holds one of `secrets` (or a part of one)."""
    found = []
    for root in roots:
        for path in Path(root).rglob("*"):
            if path.is_file() and not path.is_symlink():
                content = path.read_bytes()
                if any(s.encode()[:40] in content for s in secrets):
                    found.append(path)
    return found


def everywhere_but_the_keyring(cog, bus):
    return [cog.home, Path(cog.env["XDG_CONFIG_HOME"]), Path(bus.env["XDG_RUNTIME_DIR"])]


# --- closed standard descriptors ---------------------------------------------------------------

READS = [["token"], ["token", "--id-token"], ["token", "--format", "env"], ["get-header"]]


@pytest.mark.parametrize("read", READS, ids=lambda r: " ".join(r))
def test_a_read_with_stdin_and_stdout_closed_writes_nowhere_and_exits_74(cog, bus, signed_in, read):
    secrets = secrets_of(bus)
    assert secrets
    result = closed_fds(cog, *read)
    assert result.returncode == 74, result.stderr
    assert "cannot write to standard output" in result.stderr
    assert files_holding(everywhere_but_the_keyring(cog, bus), secrets) == []
    assert lock_file(cog).stat().st_size == 0


@pytest.mark.parametrize("fds", ["<&- >&-", ">&-", "<&- >&- 2>&-"])
def test_a_refresh_handed_over_with_closed_descriptors_does_not_wait_on_itself(cog, bus, signed_in, fds):
    before = secrets_of(bus)
    # More life than the token has: the front takes the profile's lock and
    # hands it to cog-cred-cli, which refreshes holding it.
    result = closed_fds(cog, "token", "--min-ttl", "86400", fds=fds)
    assert result.returncode == 74, result.stderr  # the refresh ran; its token had nowhere to go
    assert "refresh lock" not in result.stderr
    after = secrets_of(bus)
    assert set(after) != set(before), "no refresh was stored"
    assert files_holding(everywhere_but_the_keyring(cog, bus), before + after) == []
    assert lock_file(cog).stat().st_size == 0


def test_cog_cred_cli_started_with_stdout_closed_writes_its_token_nowhere(cog, bus, signed_in):
    cli = Path(cog.binary).resolve().parent / "cog-cred-cli"
    # token and status print data (exit 74 with nowhere to print it);
    # refresh speaks to a person, on stderr, and succeeds.
    for args, expected in ((["token"], 74), (["status"], 74), (["refresh"], 0)):
        result = closed_fds(cog, *args, fds=">&-", binary=str(cli))
        assert result.returncode == expected, (args, result.stderr)
    assert files_holding(everywhere_but_the_keyring(cog, bus), secrets_of(bus)) == []


def test_exec_runs_its_command_with_stdout_closed(cog, bus, signed_in):
    result = closed_fds(cog, "exec", "--", "/bin/sh", "-c", 'test -n "$COG_CRED_ACCESS_TOKEN" && echo ran >&2')
    assert result.returncode == 0 and "ran" in result.stderr, result.stderr


# --- the profile's lock ---------------------------------------------------------------------------

class HeldLock:
    """Another process's hold on the profile's lock (this test's, through its own descriptor)."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def release(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


@pytest.mark.parametrize("read", [["token"], ["get-header"], ["token", "--format", "json"]], ids=lambda r: " ".join(r))
def test_a_fresh_token_is_handed_out_while_another_process_holds_the_lock(cog, signed_in, read):
    expected = cog.ok(*read).stdout
    held = HeldLock(lock_file(cog))
    try:
        # The profile's refresh wait is 30 s; this read must not spend it.
        result = cog.run(*read, timeout=15)
    finally:
        held.release()
    assert (result.returncode, result.stdout) == (0, expected), result.stderr


def test_one_lock_with_or_without_a_runtime_directory(cog, bus, signed_in):
    runtime = Path(bus.env["XDG_RUNTIME_DIR"])
    cog.ok("refresh")  # a desktop session's: XDG_RUNTIME_DIR set
    assert not (runtime / "cog-cred").exists()
    assert lock_file(cog).is_file()
    # While the desktop session holds the lock, a refresh from cron or
    # `su -` (no XDG_RUNTIME_DIR) waits for it, on the same file.
    for env in ({"XDG_RUNTIME_DIR": None}, {}):
        held = HeldLock(lock_file(cog))
        full_env = {k: v for k, v in {**cog.env, **env}.items() if v is not None}
        refresh = subprocess.Popen([cog.binary, "refresh"], env=full_env, stderr=subprocess.PIPE, text=True)
        try:
            poll(lambda: refresh.poll() is not None or waiting_on_lock(refresh.pid, lock_file(cog)),
                 "the refresh to block on the lock or exit")
            assert refresh.poll() is None, f"the refresh did not wait for the lock: {refresh.stderr.read()}"
        finally:
            held.release()
        assert refresh.wait(timeout=60) == 0, refresh.stderr.read()


@pytest.mark.skipif(os.getuid() != 0, reason="making a directory another user owns needs root")
def test_a_runtime_directory_another_user_made_is_not_used(cog, bus, signed_in, tmp_path):
    squatted = tmp_path / "shared-runtime"
    (squatted / "cog-cred").mkdir(parents=True)
    for path in (squatted, squatted / "cog-cred"):
        os.chmod(path, 0o777)
        os.chown(path, NOBODY, NOBODY)
    env = {"XDG_RUNTIME_DIR": str(squatted)}
    cog.ok("refresh", env=env)
    assert cog.run("token", "--min-ttl", "86400", env=env).returncode == 0
    assert list((squatted / "cog-cred").iterdir()) == []


@pytest.mark.parametrize("problem", ["writable", "owner"])
def test_a_state_directory_others_could_swap_is_refused(cog, bus, signed_in, tmp_path, problem):
    if problem == "owner" and os.getuid() != 0:
        pytest.skip("a directory another user owns needs root")
    shared = tmp_path / "shared"
    shared.mkdir()
    if problem == "writable":
        os.chmod(shared, 0o777)
    else:
        os.chown(shared, NOBODY, NOBODY)
    before = secrets_of(bus)
    result = cog.run("refresh", env={"XDG_STATE_HOME": str(shared / "state")})
    assert result.returncode == 78
    reason = "can be written by others" if problem == "writable" else "belongs to another user"
    assert f"{shared}" in result.stderr and reason in result.stderr, result.stderr
    assert secrets_of(bus) == before  # nothing stored was changed


# --- what the binaries trust beside them -------------------------------------------------------------

def release_cli(cog):
    cli = (Path(cog.binary).resolve().parent / "cog-cred-cli").resolve()
    if "release" not in cli.parts:
        pytest.skip("the release build's run path is what ships (scripts/build)")
    return cli


def test_cog_cred_cli_has_no_origin_run_path(cog):
    dynamic = subprocess.run(["readelf", "-d", str(release_cli(cog))], capture_output=True, text=True, check=True).stdout
    assert "(NEEDED)" in dynamic  # the dynamic section was read
    assert "$ORIGIN" not in dynamic and "(RUNPATH)" not in dynamic and "(RPATH)" not in dynamic, dynamic


@pytest.mark.skipif(os.getuid() != 0, reason="a file another user owns needs root")
@pytest.mark.parametrize("case", ["cli of another user", "directory others can write", "script of another user"])
def test_the_front_refuses_a_cog_cred_cli_another_user_could_have_written(cog, signed_in, tmp_path, case):
    copy = tmp_path / "copy"
    copy.mkdir()
    front = copy / "cog-cred"
    shutil.copy2(Path(cog.binary).resolve(), front)
    cli = copy / "cog-cred-cli"
    marker = tmp_path / "ran"
    if case == "script of another user":
        cli.write_text(f"#!/bin/sh\ntouch {marker}\n")
        os.chmod(cli, 0o755)
    else:
        shutil.copy2(Path(cog.binary).resolve().parent / "cog-cred-cli", cli)
    if case == "directory others can write":
        os.chmod(copy, 0o777)
    else:
        os.chown(cli, NOBODY, NOBODY)
    os.chmod(tmp_path, 0o755)
    # status always goes to cog-cred-cli
    result = subprocess.run([str(front), "status"], env=cog.env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stderr
    assert "will not run" in result.stderr and str(copy) in result.stderr
    assert not marker.exists()
    # The same copy, made the user's own and private, runs.
    os.chmod(copy, 0o755)
    os.chown(cli, os.getuid(), os.getgid())
    if case != "script of another user":
        assert subprocess.run([str(front), "status"], env=cog.env, capture_output=True, timeout=60).returncode == 0


@pytest.mark.skipif(os.getuid() != 0, reason="a link another user owns needs root")
@pytest.mark.parametrize("case", ["link of another user", "link in a directory others can write"])
def test_the_front_follows_no_link_another_user_could_have_planted(cog, signed_in, tmp_path, case):
    """Another user who can write the directory that holds cog-cred-cli (or
    who owns a link there) points it at /bin/sh: the victim's `cog-cred
    status` would then run the script `status` from the working directory.
    The link is checked where it is, before it is followed: refused, exit 1,
    and the script never runs. The same link, the user's own in a safe
    directory, runs the real cog-cred-cli (as the build's own link does)."""
    copy = tmp_path / "copy"
    copy.mkdir()
    front = copy / "cog-cred"
    shutil.copy2(Path(cog.binary).resolve(), front)
    cli = copy / "cog-cred-cli"
    cli.symlink_to("/bin/sh")
    if case == "link in a directory others can write":
        os.chmod(copy, 0o777)
    else:
        os.lchown(cli, NOBODY, NOBODY)
    os.chmod(tmp_path, 0o755)
    marker = tmp_path / "ran"
    work = tmp_path / "work"
    work.mkdir()
    (work / "status").write_text(f"touch {marker}\n")
    result = subprocess.run([str(front), "status"], env=cog.env, cwd=work, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stderr
    assert "will not run" in result.stderr and f"the link {cli}" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert not marker.exists()
    # The user's own link, in a directory no one else can write, to the real one.
    os.chmod(copy, 0o755)
    cli.unlink()
    cli.symlink_to(Path(cog.binary).resolve().parent / "cog-cred-cli")
    ran = subprocess.run([str(front), "status"], env=cog.env, cwd=work, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert not marker.exists()
