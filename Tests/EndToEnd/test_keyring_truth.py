"""The keyring is the only truth: every read goes to the Secret Service, each time.

cog-cred is two binaries: `cog-cred`, a front that answers read-only requests
(token, get-header, the git, docker and kubectl helpers, exec) straight from
gnome-keyring on every call, and `cog-cred-cli` beside it, which does
everything else and every read the front cannot answer itself. These tests
run both as a user would, against a real gnome-keyring on a private D-Bus
session, moto and the project's Cognito double, and check that:

- a locked collection is reported as locked (69) by every reader, never
  answered from anywhere else;
- items deleted or replaced by another program count on the very next call,
  and a stored value that is not a well-formed token is never handed out;
- items are bound to the profile's user pool and app client (attributes and
  the tokens' own claims); a profile pointed elsewhere, or items saved by
  cog-cred 0.1 without the binding, are refused (77) and never refreshed with;
  `configure` that changes the pool deletes the tokens, one that changes
  nothing token-related keeps them;
- the front and cog-cred-cli give the same stdout and exit status for the
  same request in every state, under every name (git-credential-cog-cred,
  docker-credential-cog-cred), and the front needs no cog-cred-cli to answer
  a fresh token;
- output that cannot be written exits 74;
- sign-out waits for a refresh in flight (the profile's lock), so the
  refresh cannot write tokens back after it.
"""
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import MotoPool
from support import (all_stored, claims, cli_path, clear_fault_log, configure_on_double, fault_log, holding_lock,
                     lock_collection, plan, poll, run, stored, waiting_on_lock)

GIT_HOST = "git.example.com"
GIT_REQUEST = f"protocol=https\nhost={GIT_HOST}\n\n"
GIT_BEARER_REQUEST = f"capability[]=authtype\nprotocol=https\nhost={GIT_HOST}\nwwwauth[]=Bearer\n\n"
REGISTRY = "registry.example.com"
EXEC_PRINT = ["exec", "--", "sh", "-c",
              'printf "%s|%s|%s" "$COG_CRED_ACCESS_TOKEN" "$COG_CRED_ID_TOKEN" "$COG_CRED_AUTHORIZATION"']
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
OTHER_POOL = "us-east-1_Other123"
ANOTHER_POOL_MESSAGE = "another user pool or app client"
BOUND_SCHEMA = "io.github.cog_cred.Token"

# Every read-only request the front answers, with its standard input.
READS = {
    "token": (["token"], None),
    "get-header": (["get-header"], None),
    "token --format json": (["token", "--format", "json"], None),
    "kubectl-credential": (["kubectl-credential"], None),
    "exec": (["exec", "--", "true"], None),
    "git-credential --profile": (["git-credential", "--profile", "default", "get"], GIT_REQUEST),
    "git-credential by url": (["git-credential", "get"], GIT_REQUEST),
    "docker-credential get": (["docker-credential", "get"], REGISTRY),
}


# --- helpers -------------------------------------------------------------------------------

def configure_and_sign_in(cog, pool):
    """The `default` profile on `pool`, answering git for GIT_HOST and docker for REGISTRY, signed in."""
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username, "--git-url", f"https://{GIT_HOST}/", "--docker-registry", REGISTRY)
    cog.remember_secret(pool.password)
    cog.ok("sign-in", "--password-stdin", input=pool.password + "\n")


def bound(pool_id, client_id, kind, profile="default"):
    """The attributes cog-cred gives an item now."""
    return {"service": "cog-cred", "profile": profile, "kind": kind, "user-pool-id": pool_id,
            "client-id": client_id, "xdg:schema": BOUND_SCHEMA}


def edit_profile(cog, **changes):
    """Edits config.json by hand, as a user with an editor would."""
    config = json.loads(cog.config_file.read_text())
    config["profiles"]["default"].update(changes)
    cog.config_file.write_text(json.dumps(config, indent=2))


def assert_fails(result, code, phrase, what):
    words = what.split() if isinstance(what, str) else list(what)
    if words[-2:] == ["docker-credential", "get"]:
        # docker's helper protocol: any failure is exit 1, the message on stdout.
        assert result.returncode == 1, (what, result.returncode, result.stdout)
        assert phrase in result.stdout and "eyJ" not in result.stdout, (what, result.stdout)
        return
    assert result.returncode == code, (what, result.returncode, result.stderr)
    assert phrase in result.stderr, (what, result.stderr)
    assert result.stdout == "", (what, result.stdout)


@pytest.fixture
def everywhere(cog, bus, pool):
    """Signed in on the shared keyring, with git and docker pointed at the profile."""
    configure_and_sign_in(cog, pool)
    cog.remember_secret(*all_stored(bus).values())
    return pool


# --- 1. a locked collection ----------------------------------------------------------------

def test_a_locked_collection_is_reported_as_locked_by_every_reader(cog, own_bus, pool):
    configure_and_sign_in(cog, pool)
    access = stored(own_bus, "access")
    # Unlocked, every reader answers from the keyring (so the failures below are the lock's).
    for name, (args, stdin) in READS.items():
        result = cog.run(*args, input=stdin)
        assert result.returncode == 0, (name, result.stderr)
        if name != "exec":
            assert access in result.stdout, name
    lock_collection(own_bus)
    for name, (args, stdin) in READS.items():
        assert_fails(cog.run(*args, input=stdin), 69, "locked", name)
        # The same through cog-cred-cli directly.
        assert_fails(run(cli_path(cog.binary), args, cog.env, input=stdin), 69, "locked", f"cli {name}")


def test_status_on_a_locked_keyring_prints_its_report_and_exits_69(cog, own_bus, pool):
    """What can be known is shown, and that the keyring is locked (not "not
    signed in": that is unknown), for people and for scripts; still 69."""
    configure_and_sign_in(cog, pool)
    secrets = [s for s in all_stored(own_bus).values() if s]
    lock_collection(own_bus)
    for args in (["status"], ["status", "--no-prompt"], ["status", "--offline"]):
        result = cog.run(*args)
        assert result.returncode == 69 and "locked" in result.stderr, (args, result.stderr)
        lines = result.stdout.splitlines()
        assert lines[:3] == ["profile:       default", "keyring:       locked",
                             "signed in:     unknown: the keyring is locked (cog-cred unlock unlocks it)"], lines
        assert not any(line.startswith("signed in:     no") for line in lines)
    said = cog.run("status", "--json")
    assert said.returncode == 69
    report = json.loads(said.stdout)
    assert report["keyring"] == "locked" and report["signed_in"] is None and report["profile"] == "default"
    assert report["ca_bundle_from"] == "system"
    assert not any(secret in said.stdout for secret in secrets)


# --- 2. items deleted by another program -----------------------------------------------------

def test_items_deleted_by_another_program_mean_not_signed_in_at_once(cog, bus, everywhere):
    assert cog.ok("token").stdout.strip() == stored(bus, "access")
    cleared = bus.secret_tool("clear", "service", "cog-cred", "profile", "default")
    assert cleared.returncode == 0, cleared.stderr
    for name, (args, stdin) in READS.items():
        if name.startswith("docker"):
            continue  # docker's own protocol: checked below
        result = cog.run(*args, input=stdin)
        assert_fails(result, 77, "not signed in", name)
        assert "password=" not in result.stdout
    docker = cog.run("docker-credential", "get", input=REGISTRY)
    assert docker.returncode != 0 and "Secret" not in docker.stdout, (docker.returncode, docker.stdout)


# --- 3. items replaced by another program ------------------------------------------------------

def test_an_item_replaced_by_another_program_is_served_on_the_next_call(cog, bus, signed_in):
    old = cog.ok("token").stdout.strip()
    new = signed_in.fresh_tokens()["AccessToken"]
    cog.remember_secret(old, new)
    assert new != old
    bus.store(bound(signed_in.pool_id, signed_in.client_id, "access"), new, label="replaced by another program")
    assert [i["secret"] for i in bus.items(service="cog-cred", profile="default", kind="access")] == [new]
    assert cog.ok("token").stdout == new + "\n"
    assert cog.ok("get-header").stdout == f"Authorization: Bearer {new}\n"


def test_another_programs_item_with_the_same_attributes_loses_to_cog_creds_and_goes(cog, bus, signed_in):
    """cog-cred's own item (its xdg:schema) is read, and the next write
    deletes the other program's (test_unlock.py lists the other first).
    (Stored without a schema, gnome-keyring replaces cog-cred's item instead:
    the test above.)"""
    ours = cog.ok("token").stdout.strip()
    theirs = signed_in.fresh_tokens()["AccessToken"]
    cog.remember_secret(theirs)
    attributes = {k: v for k, v in bound(signed_in.pool_id, signed_in.client_id, "access").items() if k != "xdg:schema"}
    bus.store({**attributes, "xdg:schema": "org.example.OtherTool"}, theirs, label="another program's")
    assert sorted(i["secret"] for i in bus.items(**attributes)) == sorted([ours, theirs])
    assert cog.ok("token").stdout.strip() == ours
    assert cog.ok("get-header").stdout == f"Authorization: Bearer {ours}\n"
    # The next write replaces both with the new value.
    cog.ok("refresh")
    fresh = cog.ok("token").stdout.strip()
    assert [i["secret"] for i in bus.items(**attributes)] == [fresh]


def test_a_stored_value_that_is_not_a_token_is_never_handed_out(cog, bus, signed_in):
    cog.ok("configure", "--git-url", f"https://{GIT_HOST}/")
    valid = signed_in.fresh_tokens()["AccessToken"]
    evil = f"{valid}\npassword=evil"
    attributes = bound(signed_in.pool_id, signed_in.client_id, "access")

    bus.store(attributes, evil, label="tampered")
    assert stored(bus, "access") == evil  # stored as is, newline and all
    token = cog.run("token")
    assert token.returncode == 0, token.stderr
    assert "evil" not in token.stdout
    printed = token.stdout
    assert printed.endswith("\n") and printed.count("\n") == 1
    assert TOKEN_SHAPE.fullmatch(printed.strip()), printed
    # A refresh with the good refresh token replaced the bad value.
    assert printed.strip() == stored(bus, "access")

    for args in (["git-credential", "--profile", "default", "get"], ["git-credential", "get"]):
        bus.store(attributes, evil, label="tampered")
        answer = cog.run(*args, input=GIT_REQUEST)
        assert answer.returncode == 0, answer.stderr
        assert "evil" not in answer.stdout, answer.stdout
        lines = answer.stdout.splitlines()
        assert [line for line in lines if line.startswith("password=")] == \
            [f"password={stored(bus, 'access')}"]


# --- 4. bound to the pool and the app client ------------------------------------------------------

def sign_in_on_double(cog, bus, double, url, username, password):
    """The `default` profile on the double's pool at `url`, signed in as a new user."""
    double.add_user(username, password)
    configure_on_double(cog, url, "--username", username)
    cog.remember_secret(password)
    cog.ok("sign-in", "--password-stdin", input=password + "\n")
    cog.remember_secret(*all_stored(bus).values())


@pytest.fixture
def on_double(cog, bus, double, double_server):
    """Signed in against the Cognito double (which counts every call)."""
    sign_in_on_double(cog, bus, double, double_server.url, "dora@example.com", "Double-Password-1")
    return double


def test_items_carry_the_pool_and_client_they_were_issued_for(cog, bus, on_double):
    items = bus.items(service="cog-cred")
    assert sorted(i["attributes"]["kind"] for i in items) == ["access", "id", "refresh"]
    for item in items:
        assert item["attributes"] == bound("us-east-1_double", "doubleclient", item["attributes"]["kind"])


@pytest.mark.parametrize("changes", [{"user-pool-id": OTHER_POOL}, {"client-id": "otherclient"}],
                         ids=["pool", "client"])
def test_a_profile_edited_to_another_pool_refuses_its_tokens_and_never_refreshes(cog, bus, on_double, changes):
    access = stored(bus, "access")
    original = json.loads(cog.config_file.read_text())["profiles"]["default"]
    edit_profile(cog, **changes)
    calls = on_double.stats()["calls"]
    for name, (args, stdin) in READS.items():
        if name.startswith(("git-credential by url", "docker")):
            continue  # this profile answers no URL or registry
        assert_fails(cog.run(*args, input=stdin), 77, ANOTHER_POOL_MESSAGE, name)
    for args in (["refresh"], ["token", "--min-ttl", "4000"]):
        assert_fails(cog.run(*args), 77, ANOTHER_POOL_MESSAGE, args)
    # Nothing went to Cognito: the refresh token was not sent anywhere.
    assert on_double.stats()["calls"] == calls
    edit_profile(cog, **{k: original[k] for k in changes})
    assert cog.ok("token").stdout == access + "\n"


def test_configure_to_another_pool_deletes_the_tokens(cog, bus, on_double):
    result = cog.ok("configure", "--user-pool-id", OTHER_POOL)
    assert "sign in again" in result.stderr
    assert bus.items(service="cog-cred", profile="default") == []
    assert_fails(cog.run("token"), 77, "not signed in", "token")


def test_tokens_whose_claims_name_another_pool_are_refused(cog, bus, signed_in, moto):
    # Items bound (by their attributes) to this profile's pool and client,
    # holding valid tokens that another pool issued.
    elsewhere = MotoPool(moto.url)
    foreign = elsewhere.fresh_tokens()
    cog.remember_secret(foreign["AccessToken"], foreign["IdToken"])
    assert claims(foreign["AccessToken"])["iss"].endswith("/" + elsewhere.pool_id)
    bus.store(bound(signed_in.pool_id, signed_in.client_id, "access"), foreign["AccessToken"])
    bus.store(bound(signed_in.pool_id, signed_in.client_id, "id"), foreign["IdToken"])
    for args in (["token"], ["token", "--id-token"], ["get-header"], ["kubectl-credential", "--id-token"]):
        assert_fails(cog.run(*args), 77, ANOTHER_POOL_MESSAGE, args)
        assert_fails(run(cli_path(cog.binary), args, cog.env), 77, ANOTHER_POOL_MESSAGE, ["cli", *args])


# --- 5. items saved by cog-cred 0.1 -----------------------------------------------------------------

@pytest.mark.parametrize("with_schema", [True, False], ids=["with-schema", "bare"])
def test_items_without_the_binding_are_refused_until_signing_in_again(cog, bus, signed_in, with_schema):
    tokens = all_stored(bus)
    assert bus.secret_tool("clear", "service", "cog-cred", "profile", "default").returncode == 0
    for kind, value in tokens.items():
        attributes = {"service": "cog-cred", "profile": "default", "kind": kind}
        if with_schema:
            attributes["xdg:schema"] = BOUND_SCHEMA
        bus.store(attributes, value, label=f"cog-cred 0.1 {kind}")
    for args in (["token"], ["get-header"], ["refresh"]):
        assert_fails(cog.run(*args), 77, "0.1", args)
    cog.ok("sign-in", "--password-stdin", input=signed_in.password + "\n")
    items = bus.items(service="cog-cred")
    assert sorted(i["attributes"]["kind"] for i in items) == ["access", "id", "refresh"]
    for item in items:
        assert item["attributes"] == bound(signed_in.pool_id, signed_in.client_id, item["attributes"]["kind"])
    assert cog.ok("token").stdout == stored(bus, "access") + "\n"


# --- 6. the front and cog-cred-cli agree ----------------------------------------------------------------

# (name the program is run by, arguments, standard input)
AGREEMENT_CASES = [
    ("cog-cred", ["token"], None),
    ("cog-cred", ["token", "--id-token"], None),
    ("cog-cred", ["token", "--format", "bare"], None),
    ("cog-cred", ["token", "--format", "header"], None),
    ("cog-cred", ["token", "--format", "json"], None),
    ("cog-cred", ["token", "--format", "env"], None),
    ("cog-cred", ["token", "--id-token", "--format", "env"], None),
    ("cog-cred", ["get-header"], None),
    ("cog-cred", ["kubectl-credential"], None),
    ("cog-cred", ["kubectl-credential", "--id-token"], None),
    ("cog-cred", ["git-credential", "--profile", "default", "get"], GIT_REQUEST),
    ("cog-cred", ["git-credential", "--profile", "default", "get"], GIT_BEARER_REQUEST),
    ("cog-cred", ["git-credential", "get"], GIT_REQUEST),
    ("cog-cred", ["git-credential", "get"], "protocol=https\nhost=elsewhere.example.com\n\n"),
    ("cog-cred", ["docker-credential", "get"], REGISTRY),
    ("cog-cred", ["docker-credential", "list"], ""),
    ("cog-cred", EXEC_PRINT, None),
    # --min-ttl, in both forms, and aws-credentials (this profile has no
    # identity pool: both binaries must refuse it alike).
    ("cog-cred", ["token", "--min-ttl", "60"], None),
    ("cog-cred", ["get-header", "--min-ttl=0"], None),
    ("cog-cred", ["kubectl-credential", "--id-token", "--min-ttl", "120"], None),
    ("cog-cred", ["token", "--min-ttl", "86401"], None),
    ("cog-cred", ["aws-credentials"], None),
    ("cog-cred", ["aws-credentials", "--min-ttl", "600"], None),
    ("cog-cred", ["aws-credentials", "--min-ttl", "43201"], None),
    # The profile before the subcommand, and its short form.
    ("cog-cred", ["--profile", "default", "token"], None),
    ("cog-cred", ["-p", "default", "kubectl-credential", "--id-token"], None),
    ("cog-cred", ["--profile=default", "get-header"], None),
    ("cog-cred", ["token", "-p", "default", "--format", "env"], None),
    ("cog-cred", ["-p", "default", "git-credential", "get"], GIT_REQUEST),
    ("cog-cred", ["-p", "default", *EXEC_PRINT], None),
    ("git-credential-cog-cred", ["--profile", "default", "get"], GIT_REQUEST),
    ("git-credential-cog-cred", ["-p", "default", "get"], GIT_REQUEST),
    ("git-credential-cog-cred", ["--profile", "default", "get"], GIT_BEARER_REQUEST),
    ("git-credential-cog-cred", ["get"], GIT_REQUEST),
    ("docker-credential-cog-cred", ["get"], REGISTRY),
    ("docker-credential-cog-cred", ["list"], ""),
]


@pytest.fixture
def links(binary, tmp_path):
    """For each of the two binaries, a directory of links by every name it answers to."""
    made = {}
    for which, target in (("front", str(Path(binary).resolve())), ("cli", cli_path(binary))):
        directory = tmp_path / f"links-{which}"
        directory.mkdir()
        for name in ("cog-cred", "git-credential-cog-cred", "docker-credential-cog-cred"):
            (directory / name).symlink_to(target)
        made[which] = directory
    return made


@pytest.mark.parametrize("state", ["signed-in", "signed-out", "locked"])
def test_the_front_and_cog_cred_cli_give_the_same_answers(cog, own_bus, pool, links, state):
    configure_and_sign_in(cog, pool)
    cog.remember_secret(*all_stored(own_bus).values())
    if state == "signed-out":
        cog.ok("sign-out", "--local")
    elif state == "locked":
        lock_collection(own_bus)
    for name, args, stdin in AGREEMENT_CASES:
        front = run(str(links["front"] / name), args, cog.env, input=stdin)
        cli = run(str(links["cli"] / name), args, cog.env, input=stdin)
        what = (state, name, *args, stdin)
        assert (front.returncode, front.stdout) == (cli.returncode, cli.stdout), \
            (what, front.returncode, front.stderr, cli.returncode, cli.stderr)
        for secret in cog.secrets_seen:
            assert secret not in front.stderr + cli.stderr, what
        # Out of bounds, or no identity pool to ask: refused in every state.
        refused = args[0] == "aws-credentials" or "86401" in args or "43201" in args
        if state == "signed-in":
            assert (front.returncode == 0) != refused, (what, front.returncode, front.stderr)
        else:
            assert front.returncode != 0 or "elsewhere" in (stdin or "") or args[-1] == "list", \
                (what, front.returncode, front.stdout)
            assert "password=" not in front.stdout
    # The plain binaries too, not only the links.
    for args, stdin in (["token"], None), (["git-credential", "--profile", "default", "get"], GIT_REQUEST):
        front, cli = run(cog.binary, args, cog.env, stdin), run(cli_path(cog.binary), args, cog.env, stdin)
        assert (front.returncode, front.stdout) == (cli.returncode, cli.stdout), (state, args)


# --- 7. the front alone ----------------------------------------------------------------------------------

def test_the_front_answers_a_fresh_token_without_cog_cred_cli(cog, bus, signed_in, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    front = alone / "cog-cred"
    shutil.copy2(Path(cog.binary).resolve(), front)
    assert not (alone / "cog-cred-cli").exists() and not (tmp_path / "lib").exists()
    token = run(str(front), ["token"], cog.env)
    assert token.returncode == 0, token.stderr
    assert token.stdout == stored(bus, "access") + "\n"
    header = run(str(front), ["get-header"], cog.env)
    assert header.returncode == 0, header.stderr
    # Without an agent, a refresh is this machine's: cog-cred-cli's.
    for args in (["refresh"], ["status"], ["token", "--min-ttl", "4000"]):
        result = run(str(front), args, cog.env)
        assert result.returncode == 1, args
        assert f"'{args[0]}' needs cog-cred-cli, which is neither at {alone}/cog-cred-cli" in result.stderr, (args, result.stderr)
        assert result.stdout == ""


# --- 8. output that cannot be written ---------------------------------------------------------------------

def test_output_that_cannot_be_written_exits_74(cog, signed_in):
    cases = [(cog.binary, ["token"]), (cog.binary, ["get-header"]), (cog.binary, ["kubectl-credential"]),
             (cli_path(cog.binary), ["status"]), (cli_path(cog.binary), ["token"])]
    wrong = []
    for program, args in cases:
        with open("/dev/full", "w") as full:
            result = run(program, args, cog.env, stdout=full)
        if result.returncode != 74 or not result.stderr.strip():
            wrong.append((Path(program).name, args, result.returncode, result.stderr))
    # Each must exit 74 and say why on stderr.
    assert wrong == [], wrong


# --- 9. sign-out during a refresh in flight ------------------------------------------------------------------

REFRESH_ACTIONS = ["GetTokensFromRefreshToken", "InitiateAuth:REFRESH_TOKEN_AUTH"]
HELD_FOR = 2.0  # seconds the proxy holds the refresh request before passing it on


@pytest.fixture
def through_proxy(cog, bus, double, proxy):
    """Signed in against the double through the fault proxy, with the default timeouts."""
    plan(proxy)
    sign_in_on_double(cog, bus, double, proxy.url, "sid@example.com", "Proxy-Password-1")
    yield double
    plan(proxy)


@pytest.mark.parametrize("form", [["--local"], [], ["--global"]], ids=["local", "revoke", "global"])
def test_sign_out_waits_for_a_refresh_in_flight(cog, bus, through_proxy, proxy, form):
    lock_file = cog.home / ".local" / "state" / "cog-cred" / "locks" / "default.lock"
    clear_fault_log(proxy)
    plan(proxy, {"mode": "delay", "seconds": HELD_FOR, "actions": REFRESH_ACTIONS})
    popen = dict(env=cog.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    refresh = subprocess.Popen([cog.binary, "refresh"], **popen)
    sign_out = None
    try:
        poll(lambda: any(e["mode_applied"] == "delay" for e in fault_log(proxy)), "the refresh to reach Cognito")
        assert holding_lock(refresh.pid, lock_file), "the refresh does not hold the profile's lock"
        sign_out = subprocess.Popen([cog.binary, "sign-out", *form], **popen)
        poll(lambda: sign_out.poll() is not None or waiting_on_lock(sign_out.pid, lock_file),
             "sign-out to block on the lock or exit")
        assert refresh.poll() is None, "the refresh ended before the sign-out could be seen waiting"
        assert sign_out.poll() is None, f"sign-out {form} exited during the refresh: {sign_out.stderr.read()}"
        assert waiting_on_lock(sign_out.pid, lock_file)
        # Until the refresh ends, the sign-out stays blocked.
        while refresh.poll() is None:
            assert sign_out.poll() is None, f"sign-out {form} exited before the refresh finished"
            time.sleep(0.01)
        refresh_code, refresh_err = refresh.returncode, refresh.stderr.read()
        sign_out_code = sign_out.wait(timeout=60)
        sign_out_err = sign_out.stderr.read()
    finally:
        for p in (refresh, sign_out):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        plan(proxy)
    assert refresh_code == 0, refresh_err
    assert sign_out_code == 0, (form, sign_out_code, sign_out_err)
    assert bus.items(service="cog-cred", profile="default") == []
    assert_fails(cog.run("token"), 77, "not signed in", "token")


# --- 10. configure that changes nothing token-related ---------------------------------------------------------

def test_configure_that_changes_no_binding_keeps_the_tokens(cog, bus, everywhere):
    before = cog.ok("token").stdout
    items = bus.items(service="cog-cred", profile="default")
    for change in (["--request-timeout", "15"], ["--connect-timeout", "3"], ["--git-url", "https://other.example/"],
                   ["--docker-registry", "other.example"], ["--username", everywhere.username]):
        result = cog.ok("configure", *change)
        assert "sign in again" not in result.stderr, change
        token = cog.run("token")
        assert (token.returncode, token.stdout) == (0, before), (change, token.stderr)
    assert bus.items(service="cog-cred", profile="default") == items
