"""What the commands say, and say only when it is so: whoami of a machine
profile; sign-out saying what Cognito was asked and answered; a --min-ttl
longer than the pool's tokens live; the ID token on get-header and exec;
configure that asks on a terminal and writes nothing when nothing changes;
profiles -p; docker-credential -p for a registry no profile is mapped to.
Against the project's Cognito test double (moto has no RevokeToken)."""
import json
import shutil
from pathlib import Path

import pytest

from support import (DOUBLE_CLIENT_ID, DOUBLE_POOL_ID, claims, configure_on_double, no_terminal, on_terminal, run,
                     stored)

USER, PASSWORD = "mona@example.com", "Messages-Password-1"
CLIENT_SECRET = "messages-client-secret-0123"


@pytest.fixture
def work(cog, bus, double):
    """Profile `work` on the double, MONA signed in with her password."""
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER, profile="work")
    cog.ok("-p", "work", "sign-in", "--password-stdin", input=PASSWORD + "\n")
    cog.remember_secret(stored(bus, "refresh", profile="work"))
    return double


@pytest.fixture
def machine(cog, bus, double):
    """Profile `robot`: the double's app client with a secret, signed in with the client-credentials grant."""
    double.configure(client_secret=CLIENT_SECRET, oauth_flows=["code", "client_credentials"],
                     custom_scopes=["orders/read", "orders/write"])
    cog.remember_secret(CLIENT_SECRET)
    configure_on_double(cog, double.url, "--domain", double.url, "--grant", "client-credentials", "--scopes",
                        "orders/read", "--client-secret-stdin", input=CLIENT_SECRET + "\n", profile="robot")
    cog.ok("-p", "robot", "sign-in")
    assert double.calls("oauth2/token:client_credentials") == 1
    return double


def revocations(double):
    """Every call that ends a session at Cognito, by name: RevokeToken, GlobalSignOut, /oauth2/revoke."""
    return {key: n for key, n in double.stats()["calls"].items()
            if "revoke" in key.lower() or key.startswith("GlobalSignOut")}


def front_alone(cog, tmp_path):
    """The front copied where no cog-cred-cli is beside it: what it answers, it answered itself."""
    alone = tmp_path / "alone"
    alone.mkdir()
    front = alone / "cog-cred"
    shutil.copy2(Path(cog.binary).resolve(), front)
    assert not (alone / "cog-cred-cli").exists()
    return str(front)


# --- whoami -----------------------------------------------------------------------------------------

def test_whoami_of_a_machine_profile_is_its_app_client(cog, bus, machine):
    result = cog.run("-p", "robot", "whoami")
    assert (result.returncode, result.stdout, result.stderr) == (0, DOUBLE_CLIENT_ID + "\n", ""), result
    as_json = json.loads(cog.ok("-p", "robot", "whoami", "--json").stdout)
    # The grant as status --json and configure --grant spell it.
    assert as_json == {"profile": "robot", "name": DOUBLE_CLIENT_ID, "grant": "client-credentials"}
    assert as_json["grant"] == json.loads(cog.ok("-p", "robot", "status", "--json").stdout)["grant"]
    # A machine's whoami costs no call to Cognito.
    assert machine.calls("oauth2/token:client_credentials") == 1


# --- sign-out says what Cognito was asked ---------------------------------------------------------

def test_sign_out_of_a_user_says_the_session_was_revoked(cog, bus, work):
    result = cog.ok("-p", "work", "sign-out")
    assert "session revoked at Cognito" in result.stderr, result.stderr
    assert revocations(work) == {"RevokeToken": 1}
    assert stored(bus, "refresh", profile="work") is None


def test_sign_out_local_does_not_say_revoked(cog, bus, work):
    result = cog.ok("-p", "work", "sign-out", "--local")
    assert "Signed out of profile 'work'" in result.stderr
    assert "revoked" not in result.stderr and "Cognito" not in result.stderr, result.stderr
    assert revocations(work) == {}
    assert stored(bus, "refresh", profile="work") is None


def test_sign_out_of_a_machine_says_nothing_was_sent(cog, bus, machine):
    result = cog.ok("-p", "robot", "sign-out")
    assert "nothing was sent to Cognito" in result.stderr, result.stderr
    assert "revoked at Cognito" not in result.stderr
    assert revocations(machine) == {}
    assert stored(bus, "access", profile="robot") is None


def test_sign_out_of_a_session_cognito_had_ended_says_so(cog, bus, work):
    # Ended at Cognito behind this machine's back (a sign-out everywhere elsewhere).
    assert work.revoke(USER)["revoked"] == 1
    result = cog.ok("-p", "work", "sign-out", "--global")
    assert "Cognito had already ended the session" in result.stderr, result.stderr
    assert "session revoked" not in result.stderr and "signed out everywhere" not in result.stderr
    assert stored(bus, "refresh", profile="work") is None


# --- --min-ttl longer than the tokens live ---------------------------------------------------------

def test_a_min_ttl_longer_than_the_tokens_life_is_said_once(cog, bus, work):
    long = cog.run("-p", "work", "token", "--min-ttl", "7200")
    assert long.returncode == 0, long.stderr
    assert claims(long.stdout.strip())["token_use"] == "access"
    notes = [line for line in long.stderr.splitlines() if "the 7200 s of life asked for is not less than" in line]
    assert len(notes) == 1, long.stderr
    assert "3600" in notes[0]
    # Exactly the tokens' life is never left either (usable means more than asked): said too.
    exact = cog.run("-p", "work", "token", "--min-ttl", "3600")
    assert exact.returncode == 0 and "the 3600 s of life asked for is not less than" in exact.stderr, exact.stderr
    short = cog.run("-p", "work", "token", "--min-ttl", "60")
    assert short.returncode == 0 and short.stdout == stored(bus, "access", profile="work") + "\n"
    assert "of life asked for" not in short.stderr, short.stderr


# --- the ID token on get-header and exec ----------------------------------------------------------

def test_the_id_token_on_get_header_and_exec_from_the_front(cog, bus, work, tmp_path):
    front = front_alone(cog, tmp_path)
    id_token, access = stored(bus, "id", profile="work"), stored(bus, "access", profile="work")
    assert claims(id_token)["token_use"] == "id" and claims(access)["token_use"] == "access"
    calls = work.stats()["calls"]

    header = run(front, ["-p", "work", "get-header", "--id-token"], cog.env)
    assert (header.returncode, header.stdout) == (0, f"Authorization: Bearer {id_token}\n"), header.stderr
    script = 'printf %s "$COG_CRED_AUTHORIZATION"'
    with_id = run(front, ["-p", "work", "exec", "--id-token", "--", "sh", "-c", script], cog.env)
    assert (with_id.returncode, with_id.stdout) == (0, f"Bearer {id_token}"), with_id.stderr
    plain = run(front, ["-p", "work", "exec", "--", "sh", "-c", script], cog.env)
    assert (plain.returncode, plain.stdout) == (0, f"Bearer {access}"), plain.stderr
    # From the stored tokens: Cognito was not asked.
    assert work.stats()["calls"] == calls

    env = cog.ok("-p", "work", "token", "--id-token", "--format", "env").stdout
    assert f"export COG_CRED_AUTHORIZATION='Bearer {id_token}'\n" in env, env
    # The full command gives the same.
    assert cog.ok("-p", "work", "get-header", "--id-token").stdout == header.stdout


def test_a_machine_profile_has_no_id_token_to_give(cog, bus, machine, tmp_path):
    marker = tmp_path / "ran"
    for args in (["get-header", "--id-token"], ["exec", "--id-token", "--", "touch", str(marker)]):
        result = cog.run("-p", "robot", *args)
        assert result.returncode == 64 and result.stdout == "", (args, result.stderr)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and "machine" in lines[0] and "no ID token" in lines[0], (args, result.stderr)
    assert not marker.exists()
    # Without --id-token the machine's access token is there.
    assert cog.ok("-p", "robot", "get-header").stdout == f"Authorization: Bearer {stored(bus, 'access', 'robot')}\n"


# --- configure writes only what changes, and asks on a terminal -----------------------------------

def test_configure_with_nothing_to_change_writes_nothing(cog, bus, double):
    configure_on_double(cog, double.url, "--username", USER, profile="work")
    before, stamp = cog.config_file.read_bytes(), cog.config_file.stat().st_mtime_ns
    bare = no_terminal(cog, "-p", "work", "configure")
    assert bare.returncode == 0 and "unchanged" in bare.stderr and bare.stdout == "", bare.stderr
    assert cog.config_file.read_bytes() == before and cog.config_file.stat().st_mtime_ns == stamp

    changed = no_terminal(cog, "-p", "work", "configure", "--username", "xavier@example.com")
    assert changed.returncode == 0 and "unchanged" not in changed.stderr, changed.stderr
    assert json.loads(cog.config_file.read_text())["profiles"]["work"]["username"] == "xavier@example.com"
    after, stamp = cog.config_file.read_bytes(), cog.config_file.stat().st_mtime_ns
    again = no_terminal(cog, "-p", "work", "configure", "--username", "xavier@example.com")
    assert again.returncode == 0 and "unchanged" in again.stderr, again.stderr
    assert cog.config_file.read_bytes() == after and cog.config_file.stat().st_mtime_ns == stamp


def test_configure_on_a_terminal_asks_for_each_setting(cog):
    shown = on_terminal(cog, ["configure", "-p", "new"],
                        ("User pool id: ", "eu-west-1_Abc123"),
                        ("App client id: ", "1example23456789"),
                        (r"Region \[eu-west-1\]: ", ""),
                        (r"Username \(optional\): ", "olga@example.com"))
    assert "Saved profile 'new'" in shown
    saved = json.loads(cog.ok("configure", "-p", "new", "--show").stdout)
    assert saved["user-pool-id"] == "eu-west-1_Abc123" and saved["client-id"] == "1example23456789"
    assert saved["username"] == "olga@example.com" and saved.get("region", "eu-west-1") == "eu-west-1"

    # Again on the same profile: each setting offered as it is; Enter keeps it.
    before, stamp = cog.config_file.read_bytes(), cog.config_file.stat().st_mtime_ns
    kept = on_terminal(cog, ["configure", "-p", "new"],
                       (r"User pool id \[eu-west-1_Abc123\]: ", ""),
                       (r"App client id \[1example23456789\]: ", ""),
                       (r"Region \[eu-west-1\]: ", ""),
                       (r"Username \(optional\) \[olga@example.com\]: ", ""))
    assert "unchanged" in kept and "Saved" not in kept, kept
    assert cog.config_file.read_bytes() == before and cog.config_file.stat().st_mtime_ns == stamp


# --- profiles -p ----------------------------------------------------------------------------------

def test_profiles_with_a_profile_lists_that_one(cog, bus, work):
    configure_on_double(cog, work.url, "--username", "other@example.com", profile="other")
    everyone = cog.ok("profiles").stdout.splitlines()
    assert sorted(line.split()[0] for line in everyone[1:]) == ["other", "work"]
    table = cog.ok("profiles", "-p", "work").stdout.splitlines()
    assert table[0].split() == everyone[0].split() and [line.split()[0] for line in table[1:]] == ["work"]
    assert cog.ok("-p", "other", "profiles").stdout.splitlines()[1].split()[0] == "other"
    [one] = json.loads(cog.ok("profiles", "-p", "work", "--json").stdout)
    assert one["profile"] == "work" and one["user_pool_id"] == DOUBLE_POOL_ID
    missing = cog.run("profiles", "-p", "nosuch")
    assert missing.returncode == 78 and missing.stdout == ""
    assert "profile 'nosuch' is not configured" in missing.stderr


# --- docker-credential -p -------------------------------------------------------------------------

def test_docker_credential_with_a_profile_answers_any_registry(cog, bus, work):
    registry = "registry.unmapped.example"
    # No profile is mapped to it: without -p, docker is told there is nothing.
    unmapped = cog.run("docker-credential", "get", input=registry)
    assert unmapped.returncode == 1 and unmapped.stdout.strip(), unmapped
    answer = cog.run("docker-credential", "-p", "work", "get", input=registry)
    assert answer.returncode == 0, answer.stdout + answer.stderr
    reply = json.loads(answer.stdout)
    assert reply["Secret"] == stored(bus, "access", profile="work")
    assert claims(reply["Secret"])["token_use"] == "access"
    assert reply["ServerURL"] == registry
    # The same, -p before the command's word.
    assert json.loads(cog.ok("-p", "work", "docker-credential", "get", input=registry).stdout) == reply
