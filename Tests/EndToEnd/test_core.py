"""The working core, end to end: the built binary, gnome-keyring and moto."""
import json
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import Bus, boto_client, bus_config_without_activation
from support import all_stored, claims, stored


# --- configure -----------------------------------------------------------------

def test_configure_writes_a_private_file_without_secrets_and_updates_in_place(cog):
    cog.ok("configure", "--user-pool-id", "eu-west-2_Abc123", "--client-id", "1example23456789")
    path = cog.config_file
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    cog.ok("configure", "--username", "bob@example.com", "--endpoint-url", "http://127.0.0.1:9/")
    profile = json.loads(path.read_text())["profiles"]["default"]
    assert profile == {"user-pool-id": "eu-west-2_Abc123", "client-id": "1example23456789",
                       "username": "bob@example.com", "endpoint-url": "http://127.0.0.1:9/"}


@pytest.mark.parametrize("args, phrase", [
    (["--user-pool-id", "nonsense", "--client-id", "abc"], "user-pool-id"),
    (["--user-pool-id", "us-east-1_A", "--client-id", "a b"], "client-id"),
    (["--user-pool-id", "us-east-1_A", "--client-id", "abc", "--endpoint-url", "ftp://x"], "endpoint-url"),
    (["--user-pool-id", "us-east-1_A", "--client-id", "abc", "--request-timeout", "0"], "request-timeout"),
    (["--user-pool-id", "us-east-1_A", "--client-id", "abc", "--profile", "no/slash"], "profile"),
])
def test_configure_rejects_bad_values_with_one_line_and_exit_64(cog, args, phrase):
    result = cog.run("configure", *args)
    assert result.returncode == 64
    assert phrase in result.stderr
    assert result.stderr.count("\n") == 1
    assert result.stdout == ""
    assert not cog.config_file.exists()


def test_a_new_profile_needs_pool_and_client(cog):
    # What is missing is on the command line: a usage error (64), not the config's (78).
    result = cog.run("configure", "--client-id", "abc")
    assert result.returncode == 64
    assert "--user-pool-id is required" in result.stderr


def test_commands_on_a_missing_profile_exit_78_and_say_how_to_configure(cog):
    for command in (["status"], ["token"], ["get-header"], ["refresh"], ["sign-in", "--username", "a", "--password-stdin"]):
        result = cog.run(*command, "--profile", "nowhere", input="pw\n")
        assert result.returncode == 78, command
        assert "cog-cred configure --profile nowhere" in result.stderr
        assert result.stdout == ""


def test_a_broken_config_file_exits_78_naming_the_file(cog):
    cog.config_file.parent.mkdir(parents=True)
    cog.config_file.write_text("{ not json")
    result = cog.run("status")
    assert result.returncode == 78
    assert str(cog.config_file) in result.stderr


# --- sign in and hand out tokens ---------------------------------------------------

def test_sign_in_stores_three_items_and_token_matches_secret_tool(cog, bus, signed_in):
    items = all_stored(bus)
    assert all(items.values()), items
    cog.remember_secret(*items.values())

    token = cog.ok("token")
    assert token.stdout == items["access"] + "\n"
    assert token.stderr == ""
    assert claims(token.stdout.strip())["token_use"] == "access"

    header = cog.ok("get-header")
    assert header.stdout == f"Authorization: Bearer {items['access']}\n"

    id_token = cog.ok("token", "--id-token")
    assert id_token.stdout == items["id"] + "\n"
    assert claims(id_token.stdout.strip())["token_use"] == "id"


def test_items_carry_the_contract_attributes_and_a_readable_label(cog, bus, signed_in):
    listing = bus.secret_tool("search", "--all", "service", "cog-cred", "profile", "default").stdout
    labels = sorted(re.findall(r"^label = (.*)$", listing, re.M))
    assert labels == sorted(f"cog-cred {k} (default: alice@example.com)"
                            for k in ("access token", "ID token", "refresh token"))
    # secret-tool prints attributes on stderr; the schema line shows the rest.
    assert listing.count("schema = io.github.cog_cred.Token") == 3
    for kind in ("access", "id", "refresh"):
        found = bus.secret_tool("search", "service", "cog-cred", "profile", "default", "kind", kind)
        assert f"attribute.kind = {kind}" in found.stderr + found.stdout


def test_status_reports_who_and_when_without_tokens(cog, bus, signed_in):
    items = all_stored(bus)
    text = cog.ok("status")
    assert "signed in:     yes" in text.stdout
    assert "alice@example.com" in text.stdout
    result = cog.ok("status", "--json")
    status = json.loads(result.stdout)
    exp = claims(items["access"])["exp"]
    assert status["profile"] == "default"
    assert status["signed_in"] is True
    assert status["username"] == "alice@example.com"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", status["access_token_expires_at"])
    assert status["access_token_expires_at"] == subprocess.run(
        ["date", "-u", "-d", f"@{exp}", "+%Y-%m-%dT%H:%M:%SZ"], capture_output=True, text=True).stdout.strip()
    assert status["id_token_expires_at"]
    for value in items.values():
        assert value not in result.stdout and value not in text.stdout


def test_status_when_signed_out_exits_77(cog, pool):
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url)
    result = cog.run("status", "--json")
    assert result.returncode == 77
    assert json.loads(result.stdout)["signed_in"] is False


def test_profile_comes_from_flag_then_environment(cog, bus, pool):
    cog.ok("configure", "--profile", "work", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id,
           "--endpoint-url", pool.url)
    cog.ok("sign-in", "--username", pool.username, "--password-stdin", input=pool.password + "\n",
           env={"COG_CRED_PROFILE": "work"})
    assert stored(bus, "refresh", "work")
    assert stored(bus, "refresh", "default") is None
    assert cog.ok("token", "--profile", "work").stdout.strip() == stored(bus, "access", "work")
    assert cog.run("token").returncode == 78  # no default profile configured


def test_endpoint_environment_variables_override_the_profile(cog, pool):
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id,
           "--endpoint-url", "http://127.0.0.1:9/", "--username", pool.username)
    # The profile's endpoint is dead; the variable points at moto.
    cog.ok("sign-in", "--password-stdin", input=pool.password + "\n",
           env={"AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER": pool.url, "AWS_ENDPOINT_URL": "http://127.0.0.1:9/"})
    result = cog.run("refresh", env={"AWS_ENDPOINT_URL": pool.url})
    assert result.returncode == 0, result.stderr


# An address of TEST-NET-1 (RFC 5737): another machine, never this one.
REMOTE_HTTP = "http://192.0.2.10:4566/"


def test_plain_http_to_another_machine_needs_the_profiles_permission(cog, bus, pool):
    refused = cog.run("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id,
                      "--endpoint-url", REMOTE_HTTP)
    assert refused.returncode == 64
    assert "plain http:// to another machine" in refused.stderr and "--allow-insecure-http" in refused.stderr
    assert refused.stderr.count("\n") == 1
    assert not cog.config_file.exists()

    # Signed in against moto (loopback: allowed as it is), then the global
    # variable, as set for LocalStack elsewhere, would take Cognito there.
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id,
           "--endpoint-url", pool.url, "--username", pool.username, "--connect-timeout", "1")
    cog.ok("sign-in", "--password-stdin", input=pool.password + "\n")
    before = all_stored(bus)
    result = cog.run("refresh", env={"AWS_ENDPOINT_URL": REMOTE_HTTP})
    assert result.returncode == 78, result.stderr
    assert result.stderr.startswith("cog-cred: error: invalid AWS_ENDPOINT_URL: http://192.0.2.10:4566/ is plain http://")
    assert all_stored(bus) == before
    # What needs no request still works.
    assert cog.run("status", "--offline", env={"AWS_ENDPOINT_URL": REMOTE_HTTP}).returncode == 0

    # Allowed for this profile: the request goes out (and finds no one there).
    cog.ok("configure", "--allow-insecure-http")
    assert json.loads(cog.ok("configure", "--show").stdout)["allow-insecure-http"] is True
    attempted = cog.run("refresh", env={"AWS_ENDPOINT_URL": REMOTE_HTTP})
    assert attempted.returncode == 75, attempted.stderr
    assert all_stored(bus) == before
    cog.ok("configure", "--no-allow-insecure-http")
    assert "allow-insecure-http" not in json.loads(cog.ok("configure", "--show").stdout)
    assert cog.run("refresh", env={"AWS_ENDPOINT_URL": REMOTE_HTTP}).returncode == 78


def test_cognito_requests_sent_where_aws_endpoint_url_says_are_named_once(cog, bus, pool):
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--username", pool.username)
    # SRP sign-in: two requests, one note.
    signed = cog.run("sign-in", "--password-stdin", input=pool.password + "\n", env={"AWS_ENDPOINT_URL": pool.url})
    assert signed.returncode == 0, signed.stderr
    assert signed.stderr.count(f"cog-cred: note: sending Cognito requests to {pool.url} (from AWS_ENDPOINT_URL)") == 1
    # The Cognito-specific variable is unambiguous: no note.
    refreshed = cog.run("refresh", env={"AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER": pool.url})
    assert refreshed.returncode == 0 and "AWS_ENDPOINT_URL" not in refreshed.stderr
    # Nothing sent, nothing said.
    assert "AWS_ENDPOINT_URL" not in cog.ok("status", "--offline", env={"AWS_ENDPOINT_URL": pool.url}).stderr


# --- refresh -------------------------------------------------------------------------

def test_refresh_gets_new_tokens_keeps_the_refresh_token_and_prints_nothing(cog, bus, signed_in):
    before = all_stored(bus)
    result = cog.ok("refresh")
    assert result.stdout == ""
    after = all_stored(bus)
    assert after["refresh"] == before["refresh"]  # moto does not rotate: the old one is kept
    assert claims(after["access"])["jti"] != claims(before["access"])["jti"]


def test_min_ttl_longer_than_the_token_life_refreshes_before_printing(cog, bus, signed_in):
    # moto's tokens live 3600 s, so asking for 3700 s forces a refresh through
    # REFRESH_TOKEN_AUTH; the printed token is the newly stored one.
    before = stored(bus, "access")
    printed = cog.ok("token", "--min-ttl", "3700").stdout.strip()
    assert printed == stored(bus, "access")
    assert claims(printed)["jti"] != claims(before)["jti"]
    # With the default margin the stored token is handed out unchanged.
    assert cog.ok("token").stdout.strip() == printed


def test_a_revoked_refresh_token_exits_77_and_leaves_the_tokens_alone(cog, bus, signed_in):
    boto_client(signed_in.url).admin_user_global_sign_out(UserPoolId=signed_in.pool_id, Username=signed_in.username)
    before = all_stored(bus)
    result = cog.run("refresh")
    assert result.returncode == 77
    assert "expired or was revoked" in result.stderr and "cog-cred sign-in" in result.stderr
    assert "Refresh Token has been revoked" in result.stderr
    assert all_stored(bus) == before


# --- failures -------------------------------------------------------------------------

@pytest.mark.parametrize("who, password, phrase", [
    ("alice@example.com", "Wrong-Password-1", "incorrect username or password"),
    ("nobody@example.com", "Whatever-Password-1", "does not exist"),
    ("pending@example.com", "Pending-Password-1", "not confirmed"),
])
def test_rejected_sign_in_exits_77_and_stores_nothing(cog, bus, pool, who, password, phrase):
    pool.add_user("pending@example.com", "Pending-Password-1", confirmed=False)
    # moto never checks an SRP proof, so against moto a wrong password is only
    # caught by the password flow; test_srp.py covers SRP against the double.
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--auth-flow", "password")
    cog.remember_secret(password)
    result = cog.run("sign-in", "--username", who, "--password-stdin", input=password + "\n")
    assert result.returncode == 77
    assert phrase in result.stderr
    assert result.stderr.count("\n") == 1
    assert all_stored(bus) == {"access": None, "id": None, "refresh": None}


def test_a_rejected_sign_in_keeps_the_previous_session(cog, bus, signed_in):
    before = all_stored(bus)
    result = cog.run("sign-in", "--auth-flow", "password", "--password-stdin", input="Wrong-Password-1\n")
    assert result.returncode == 77
    assert all_stored(bus) == before


def test_server_down_exits_75_and_changes_nothing(cog, bus, signed_in):
    before = all_stored(bus)
    # The endpoint from the environment (configure --endpoint-url would
    # delete the tokens: they belong to the old endpoint).
    down = {"AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER": "http://127.0.0.1:9/"}
    for command in (["refresh"], ["token", "--min-ttl", "3700"], ["sign-in", "--password-stdin"]):
        result = cog.run(*command, input=signed_in.password + "\n", env=down)
        assert result.returncode == 75, command
        assert "cannot reach Cognito" in result.stderr
        assert result.stdout == ""
    assert all_stored(bus) == before


def test_password_needs_stdin_or_a_terminal(cog, pool):
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username)
    # subprocess.run gives the child no controlling terminal here (start_new_session).
    result = subprocess.run([cog.binary, "sign-in"], env=cog.env, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True, timeout=30)
    assert result.returncode == 64
    assert "--password-stdin" in result.stderr
    empty = cog.run("sign-in", "--password-stdin", input="\n")
    assert empty.returncode == 65
    assert "empty" in empty.stderr


def test_prompt_on_the_terminal_does_not_echo(cog, bus, pool):
    pexpect = pytest.importorskip("pexpect")
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url,
           "--username", pool.username)
    child = pexpect.spawn(cog.binary, ["sign-in"], env=cog.env, encoding="utf-8", timeout=30)
    child.expect("Password for alice@example.com: ")
    child.sendline(pool.password)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert pool.password not in child.before
    assert "Signed in as alice@example.com" in child.before
    assert stored(bus, "refresh")


def test_global_sign_out_revokes_at_cognito_and_deletes_the_three_items(cog, bus, signed_in):
    refresh_token = stored(bus, "refresh")
    result = cog.ok("sign-out", "--global")
    assert "signed out everywhere" in result.stderr and "deleted 3" in result.stderr
    assert all_stored(bus) == {"access": None, "id": None, "refresh": None}
    # moto really revoked it: the old refresh token no longer works.
    idp = boto_client(signed_in.url)
    with pytest.raises(idp.exceptions.NotAuthorizedException):
        idp.initiate_auth(ClientId=signed_in.client_id, AuthFlow="REFRESH_TOKEN_AUTH",
                          AuthParameters={"REFRESH_TOKEN": refresh_token})
    token = cog.run("token")
    assert token.returncode == 77
    assert "not signed in" in token.stderr
    again = cog.ok("sign-out")
    assert "not signed in" in again.stderr


def test_sign_out_where_revocation_fails_still_deletes_locally_and_exits_75(cog, bus, signed_in):
    # moto has no RevokeToken (it answers HTTP 500 with HTML): the same as a
    # Cognito that cannot be reached.
    result = cog.run("sign-out")
    assert result.returncode == 75
    assert "deleted 3 item(s) from the Secret Service, but revoking the session at Cognito failed (" in result.stderr
    assert all_stored(bus) == {"access": None, "id": None, "refresh": None}


def test_local_sign_out_of_one_profile_leaves_the_others(cog, bus, signed_in):
    cog.ok("configure", "--profile", "other", "--user-pool-id", signed_in.pool_id, "--client-id",
           signed_in.client_id, "--endpoint-url", signed_in.url)
    cog.ok("sign-in", "--profile", "other", "--username", signed_in.username, "--password-stdin",
           input=signed_in.password + "\n")
    cog.ok("sign-out", "--profile", "other", "--local")
    assert stored(bus, "refresh", "other") is None
    assert stored(bus, "refresh", "default")


def test_sign_out_of_an_unconfigured_profile_removes_its_items(cog, bus, signed_in):
    cog.config_file.unlink()
    result = cog.ok("sign-out")
    assert "not configured" in result.stderr
    assert all_stored(bus) == {"access": None, "id": None, "refresh": None}


# --- the Secret Service missing -----------------------------------------------------------

def test_without_a_session_bus_exits_69_and_never_autolaunches(cog, signed_in, tmp_path):
    # A dbus-launch that leaves a mark if anyone runs it, first on PATH, and
    # a DISPLAY so GLib would be tempted to autolaunch.
    fake = tmp_path / "fakebin"
    fake.mkdir()
    marker = tmp_path / "dbus-launch-ran"
    (fake / "dbus-launch").write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    (fake / "dbus-launch").chmod(0o755)
    empty_runtime = tmp_path / "runtime"
    empty_runtime.mkdir()
    env = {"DBUS_SESSION_BUS_ADDRESS": None, "DISPLAY": ":99", "XDG_RUNTIME_DIR": str(empty_runtime),
           "PATH": f"{fake}:{os.environ['PATH']}"}
    for command in (["token"], ["get-header"], ["refresh"], ["status"], ["sign-out"]):
        result = cog.run(*command, env=env, timeout=20)
        assert result.returncode == 69, (command, result.stderr)
        assert "no D-Bus session bus" in result.stderr
        assert result.stdout == ""
    assert not marker.exists()


def test_a_bus_without_a_secret_service_exits_69(cog, signed_in, tmp_path):
    # A session bus with no service activation directories: nothing can
    # provide org.freedesktop.secrets.
    config = bus_config_without_activation(tmp_path / "bus.conf")
    lonely = Bus(tmp_path / "lonely", secrets=False, config_file=config)
    try:
        result = cog.run("token", env=lonely.env, timeout=30)
        assert result.returncode == 69, result.stderr
        assert "Secret Service is not available" in result.stderr
    finally:
        lonely.stop()


def test_a_locked_keyring_is_not_mistaken_for_signed_out(cog, bus, signed_in):
    lock = subprocess.run(
        ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
         "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login"],
        env={**os.environ, **bus.env}, capture_output=True, text=True)
    assert lock.returncode == 0, lock.stderr
    try:
        # Everything that reads the keyring says it is locked, at once: the
        # fresh token stored there is not handed out from anywhere else;
        # status prints what it can, the keyring locked, never "not signed in".
        for command in (["refresh"], ["token"], ["get-header"], ["status"]):
            result = cog.run(*command)
            assert result.returncode == 69, command
            assert "locked" in result.stderr
            if command == ["status"]:
                assert "keyring:       locked" in result.stdout.splitlines() and "signed in:     no" not in result.stdout
            else:
                assert result.stdout == ""
    finally:
        # Unlock again for the other tests: restart the daemon on the same data.
        bus.keyring.terminate()
        bus.keyring.wait(timeout=10)
        bus.start_keyring()
    assert cog.ok("token").stdout.strip() == stored(bus, "access")


def test_help_documents_every_exit_status_and_version_matches(cog):
    help_text = cog.ok("--help").stdout
    for code in ("64", "65", "69", "75", "77", "78"):
        assert re.search(rf"^\s+{code}\s", help_text, re.M), code
    version = cog.ok("--version").stdout.strip()
    source = (Path(__file__).resolve().parents[2] / "Sources/CogCredWrite/Version.swift").read_text()
    assert f'"{version}"' in source


def test_the_version_command_prints_what_the_version_flag_prints(cog):
    flag = cog.ok("--version")
    # The front hands `version` over to cog-cred-cli like any command it does not read.
    assert cog.ok("version").stdout == flag.stdout and cog.ok("version").stderr == ""
    # A profile is taken (an alias that always names one works) and said to be unused.
    for words in (["version", "--profile", "work"], ["-p", "work", "version"]):
        command = cog.ok(*words)
        assert command.stdout == flag.stdout, words
        assert command.stderr == "cog-cred: note: version does not use --profile: the version is the same for every profile\n"
    extra = cog.run("version", "extra")
    assert extra.returncode == 64 and extra.stdout == ""
    assert extra.stderr.count("\n") == 1 and "'extra'" in extra.stderr


def test_unknown_options_are_one_line_usage_errors(cog):
    result = cog.run("token", "--bogus")
    assert result.returncode == 64
    assert result.stderr.count("\n") == 1
    assert "--bogus" in result.stderr
