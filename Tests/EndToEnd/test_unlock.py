"""A locked keyring on a desktop: the full command asks the Secret Service to
unlock it (Unlock, then the Prompt it returns: the keyring's own password
dialog) and goes on once it is unlocked. It does not ask with --no-prompt,
when kubectl says nobody is there ("interactive": false), or with no display
to show a dialog on; then, and when the dialog is dismissed, it exits 69.

Against a stand-in whose prompt completes or is dismissed
(locked_secret_service.py), and against the real headless gnome-keyring,
which dismisses a prompt it cannot show.

Where no prompt can be shown (SSH), `cog-cred unlock` unlocks the running
gnome-keyring with its password from stdin or a silent terminal prompt:
against a real gnome-keyring locked in a private session, what it says and
its exit status for each answer, the password never in plain on the bus, and
the locked keyring's message naming that very command."""
import json
import os
import re
import shlex
import subprocess
import time

import pytest

from conftest import wait_until
from support import lock_collection, no_terminal, on_terminal, stored

DISPLAY = {"DISPLAY": ":97"}  # a display is named; the stand-in needs none


def test_the_prompt_unlocks_and_the_command_goes_on(cog, bus, locked_service):
    start, calls = locked_service
    access, id_token = stored(bus, "access"), stored(bus, "id")
    start("unlock")
    # token: the front finds it locked and hands over; cog-cred-cli prompts.
    result = cog.run("token", env=DISPLAY)
    assert result.returncode == 0, result.stderr
    assert result.stdout == access + "\n"
    assert calls() == ["Unlock", "Prompt"]
    # Unlocked now: the next read needs no prompt.
    assert cog.ok("token", "--id-token", env=DISPLAY).stdout == id_token + "\n"
    assert calls() == ["Unlock", "Prompt"]


@pytest.mark.parametrize("answer", ["dismiss", "never"])
def test_a_dismissed_or_unanswered_prompt_exits_69_and_hands_out_nothing(cog, locked_service, answer):
    start, calls = locked_service
    start(answer)
    # "never": nobody answers; the wait for a person (COG_CRED_UNLOCK_WAIT,
    # two minutes by default) ends it, and the prompt is dismissed.
    started = time.monotonic()
    result = cog.run("get-header", env={**DISPLAY, "COG_CRED_UNLOCK_WAIT": "2"})
    assert result.returncode == 69 and result.stdout == ""
    assert "unlock prompt was dismissed" in result.stderr
    assert calls() == (["Unlock", "Prompt"] if answer == "dismiss" else ["Unlock", "Prompt", "Dismiss"])
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("how", ["--no-prompt", "kubectl non-interactive", "no display"])
def test_no_prompt_when_nobody_could_answer_it(cog, locked_service, how):
    start, calls = locked_service
    start("unlock")
    env = dict(DISPLAY)
    args = ["token"]
    if how == "--no-prompt":
        args = ["token", "--no-prompt"]
    elif how == "kubectl non-interactive":
        args = ["kubectl-credential"]
        env["KUBERNETES_EXEC_INFO"] = json.dumps({"kind": "ExecCredential", "apiVersion":
                                                  "client.authentication.k8s.io/v1", "spec": {"interactive": False}})
    else:
        env = {"DISPLAY": None, "WAYLAND_DISPLAY": None}
    started = time.monotonic()
    result = cog.run(*args, env=env)
    assert result.returncode == 69 and result.stdout == ""
    assert "the keyring is locked" in result.stderr
    assert calls() == [], "a prompt was shown"
    assert time.monotonic() - started < 10


def test_the_real_headless_gnome_keyring_dismisses_and_the_command_exits_69(cog, pool, own_bus):
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username)
    cog.ok("sign-in", "--password-stdin", input=pool.password + "\n")
    lock_collection(own_bus)
    # With a display named but no X server, gnome-keyring cannot show
    # its dialog and dismisses the prompt.
    result = cog.run("token", env=DISPLAY, timeout=60)
    assert result.returncode == 69 and result.stdout == ""
    assert "unlock prompt was dismissed" in result.stderr
    # Without one, no prompt is asked for at all.
    assert "the keyring is locked; unlock it" in cog.run("token").stderr


def test_cog_creds_own_item_wins_over_another_programs_listed_first(cog, bus, signed_in, locked_service):
    """The service lists matching items in its own order: another program's
    item with the same attributes, listed first, is not read; cog-cred's
    (its xdg:schema) is. The stand-in lists them in the order given."""
    start, _ = locked_service
    ours = stored(bus, "access")
    mine = next(i for i in bus.items(service="cog-cred", profile="default", kind="access"))
    theirs = signed_in.fresh_tokens()["AccessToken"]
    cog.remember_secret(theirs)
    other = {"attributes": {**mine["attributes"], "xdg:schema": "org.example.OtherTool"}, "secret": theirs}
    start("unlock", unlocked=True, first=[other])
    for args in (["token"], ["token", "--no-prompt"]):
        assert cog.ok(*args).stdout == ours + "\n"


# --- cog-cred unlock: gnome-keyring's own unlock by password, no prompt ------------------------

KEYRING_PASSWORD = "test-keyring-password"  # the private keyring's (conftest's Bus)


def keyring_locked(bus):
    result = subprocess.run(
        ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.secrets",
         "/org/freedesktop/secrets/collection/login", "org.freedesktop.DBus.Properties.Get",
         "string:org.freedesktop.Secret.Collection", "string:Locked"],
        env={**os.environ, **bus.env}, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return "boolean true" in result.stdout


@pytest.fixture
def locked_keyring(cog, pool, own_bus):
    """Signed in on a private gnome-keyring, which is then locked: (bus, the stored access token)."""
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username)
    cog.remember_secret(pool.password, KEYRING_PASSWORD, "not-the-keyring-password")
    cog.ok("sign-in", "--password-stdin", input=pool.password + "\n")
    access = stored(own_bus, "access")
    lock_collection(own_bus)
    assert keyring_locked(own_bus)
    return own_bus, access


def test_the_locked_message_names_the_command_that_unlocks_it(cog, locked_keyring):
    bus, access = locked_keyring
    result = cog.run("token")
    assert result.returncode == 69 and result.stdout == ""
    # Whatever the message names in backticks to pipe the password to, run as it says.
    commands = [c for c in re.findall(r"`([^`]+)`", result.stderr) if c.startswith("cog-cred ")]
    assert commands == ["cog-cred unlock --password-stdin"], result.stderr
    assert "gnome-keyring-daemon --unlock" not in result.stderr
    args = shlex.split(commands[0])[1:]
    wrong = cog.run(*args, input="not-the-keyring-password\n")
    assert wrong.returncode == 77 and wrong.stdout == ""
    assert wrong.stderr.count("\n") == 1 and "gnome-keyring refused the password" in wrong.stderr
    assert keyring_locked(bus) and cog.run("token").returncode == 69
    right = cog.run(*args, input=KEYRING_PASSWORD + "\n")
    assert right.returncode == 0 and right.stdout == "", right.stderr
    assert right.stderr == "Keyring unlocked.\n"
    assert not keyring_locked(bus)
    assert cog.ok("token").stdout == access + "\n"
    again = cog.run(*args, input=KEYRING_PASSWORD + "\n")
    assert (again.returncode, again.stderr) == (0, "The keyring is already unlocked.\n")


def test_the_password_crosses_the_bus_encrypted(cog, locked_keyring, tmp_path):
    bus, _ = locked_keyring
    log = tmp_path / "monitor.log"
    with open(log, "w") as out:
        monitor = subprocess.Popen(["dbus-monitor", "--session"], env={**os.environ, **bus.env}, stdout=out,
                                   stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda: "NameAcquired" in log.read_text(), "dbus-monitor")
            cog.ok("unlock", "--password-stdin", input=KEYRING_PASSWORD + "\n")
        finally:
            monitor.terminate()
            monitor.wait(timeout=10)
    seen = log.read_text()
    assert "UnlockWithMasterPassword" in seen and 'string "dh-ietf1024-sha256-aes128-cbc-pkcs7"' in seen
    # dbus-monitor shows a byte array as a string when it is printable, else in hex.
    assert KEYRING_PASSWORD not in seen
    assert " ".join(f"{b:02x}" for b in KEYRING_PASSWORD.encode()) not in seen
    assert not keyring_locked(bus)


def test_the_password_is_asked_on_the_terminal_without_flag(cog, locked_keyring):
    bus, access = locked_keyring
    said = on_terminal(cog, ["unlock"], ("Keyring password: ", KEYRING_PASSWORD))
    assert KEYRING_PASSWORD not in said and "Keyring unlocked." in said
    assert cog.ok("token").stdout == access + "\n"


def test_no_terminal_and_no_flag_is_64_and_an_empty_password_65(cog, locked_keyring):
    bus, _ = locked_keyring
    result = no_terminal(cog, "unlock")
    assert result.returncode == 64 and "--password-stdin" in result.stderr and result.stderr.count("\n") == 1
    for empty in ("\n", ""):
        result = cog.run("unlock", "--password-stdin", input=empty)
        assert result.returncode == 65 and result.stderr.count("\n") == 1, result.stderr
    assert keyring_locked(bus)


def test_with_an_agent_the_keyring_is_not_this_commands_to_unlock(cog, locked_keyring, tmp_path):
    bus, _ = locked_keyring
    result = cog.run("unlock", "--password-stdin", input=KEYRING_PASSWORD + "\n",
                     env={"COG_CRED_AGENT": str(tmp_path / "agent.sock")})
    assert result.returncode == 64 and result.stderr.count("\n") == 1
    assert "COG_CRED_AGENT is set" in result.stderr and "where the agent runs" in result.stderr
    assert keyring_locked(bus)


def test_no_session_bus_is_69(cog, tmp_path):
    runtime = tmp_path / "empty-runtime"
    runtime.mkdir(mode=0o700)
    result = cog.run("unlock", "--password-stdin", input=KEYRING_PASSWORD + "\n",
                     env={"DBUS_SESSION_BUS_ADDRESS": None, "XDG_RUNTIME_DIR": str(runtime), "DISPLAY": None})
    assert result.returncode == 69 and result.stderr.count("\n") == 1
    assert "no D-Bus session bus" in result.stderr and "gnome-keyring only" in result.stderr
    assert "docs/headless.md" in result.stderr


def test_a_secret_service_that_is_not_gnome_keyring_is_69(cog, locked_service):
    start, calls = locked_service
    start("unlock")  # would unlock through its prompt; `unlock` never asks for one
    result = cog.run("unlock", "--password-stdin", input=KEYRING_PASSWORD + "\n")
    assert result.returncode == 69 and result.stderr.count("\n") == 1
    assert "not gnome-keyring" in result.stderr and "docs/headless.md" in result.stderr
    assert calls() == []
