"""A locked keyring on a desktop: the full command asks the Secret Service to
unlock it (Unlock, then the Prompt it returns: the keyring's own password
dialog) and goes on once it is unlocked. It does not ask with --no-prompt,
when kubectl says nobody is there ("interactive": false), or with no display
to show a dialog on; then, and when the dialog is dismissed, it exits 69.

Against a stand-in whose prompt completes or is dismissed
(locked_secret_service.py), and against the real headless gnome-keyring,
which dismisses a prompt it cannot show."""
import json
import time

import pytest

from support import lock_collection, stored

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
