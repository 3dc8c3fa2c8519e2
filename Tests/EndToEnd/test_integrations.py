"""The integrations with the real clients: git, curl, docker's and kubectl's
protocols, and exec.

git runs against a local smart-HTTP server (git_server.py: git's own
http-backend behind a server that admits only Cognito access tokens whose
RS256 signature verifies against moto's JWKS, sent as Bearer or as the
Basic password, and answers 401 with Bearer and Basic challenges). The git
here is 2.39: it never announces capability[]=authtype, so the Bearer path
is tested at the protocol level, and the Bearer credential it yields is then
used with curl against the same server. docker and kubectl have no engine or
cluster here: their protocols are driven through stdin/stdout and checked
against the shapes those tools parse.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

import git_server
from support import GIT_REFUSALS, all_stored, claims, cli_path, git, git_refusal, git_server_admin, run, stored


@pytest.fixture
def server(repos, signed_in):
    pool = signed_in
    issuer = f"https://cognito-idp.us-east-1.amazonaws.com/{pool.pool_id}"
    srv, url = git_server.start_git_server(repos, f"{pool.url}{pool.pool_id}/.well-known/jwks.json", [issuer],
                                           pool.client_id)
    srv.url = url
    yield srv
    srv.shutdown()
    srv.server_close()


def helper_input(server, *extra):
    host = server.url.split("//")[1].rstrip("/")
    return "".join(f"{line}\n" for line in ("protocol=http", f"host={host}", *extra)) + "\n"


# --- git -----------------------------------------------------------------------------------

def test_git_clone_and_push_through_the_helper(cog, bus, server, helper_bin, tmp_path):
    cog.remember_secret(stored(bus, "access"), stored(bus, "refresh"))
    work = tmp_path / "clone"
    clone = git(cog, "clone", "-q", server.url + "project.git", str(work), helper="cog-cred --profile default")
    assert clone.returncode == 0, clone.stderr
    assert (work / "README").read_text() == "hello\n"
    (work / "NEW").write_text("pushed\n")
    git(cog, "add", "NEW", cwd=work)
    git(cog, "commit", "-qm", "second", cwd=work)
    push = git(cog, "push", "-q", "origin", "main", cwd=work, helper="cog-cred --profile default")
    assert push.returncode == 0, push.stderr
    log = git_server_admin(server, "log")
    used = {entry["jti"] for entry in log if entry["status"] == 200}
    assert used == {claims(stored(bus, "access"))["jti"]}
    assert stored(bus, "refresh") not in json.dumps(log)


def test_git_picks_the_profile_by_url_pattern_and_the_explicit_form_works(cog, bus, server, helper_bin, tmp_path):
    cog.ok("configure", "--git-url", server.url)
    plain = git(cog, "clone", "-q", server.url + "project.git", str(tmp_path / "a"), helper="cog-cred")
    assert plain.returncode == 0, plain.stderr
    explicit = git(cog, "clone", "-q", server.url + "project.git", str(tmp_path / "b"),
                   helper="!cog-cred git-credential --profile default")
    assert explicit.returncode == 0, explicit.stderr


def test_without_the_helper_or_a_matching_profile_git_fails(cog, server, helper_bin, tmp_path):
    none = git(cog, "clone", "-q", server.url + "project.git", str(tmp_path / "a"))
    assert none.returncode != 0 and "could not read Username" in none.stderr
    unmatched = git(cog, "clone", "-q", server.url + "project.git", str(tmp_path / "b"), helper="cog-cred")
    assert unmatched.returncode != 0  # no --profile and no --git-url pattern: cog-cred stays silent


def test_a_rejected_token_is_erased_and_the_next_git_command_gets_a_fresh_one(cog, bus, server, helper_bin,
                                                                            tmp_path):
    work = tmp_path / "clone"
    assert git(cog, "clone", "-q", server.url + "project.git", str(work), helper="cog-cred --profile default").returncode == 0
    first = stored(bus, "access")
    refresh_token = stored(bus, "refresh")
    git_server_admin(server, "revoke_current", {})  # the server now rejects that token
    rejected = git(cog, "fetch", "-q", cwd=work, helper="cog-cred --profile default")
    assert rejected.returncode != 0
    # git 2.39 called erase with the rejected token: cog-cred dropped it and kept the refresh token.
    assert stored(bus, "access") is None
    assert stored(bus, "refresh") == refresh_token
    retried = git(cog, "fetch", "-q", cwd=work, helper="cog-cred --profile default")
    assert retried.returncode == 0, retried.stderr
    assert stored(bus, "access") not in (None, first)


def test_the_helper_protocol_with_and_without_the_authtype_capability(cog, bus, signed_in, helper_bin):
    access = stored(bus, "access")
    request = "protocol=https\nhost=git.example.com\n\n"
    basic = cog.ok("git-credential", "--profile", "default", "get", input=request).stdout
    assert basic == (f"username=alice@example.com\npassword={access}\n"
                     f"password_expiry_utc={claims(access)['exp']}\n")
    bearer = cog.ok("git-credential", "--profile", "default", "get",
                    input="capability[]=authtype\nprotocol=https\nhost=git.example.com\nwwwauth[]=Bearer\n\n").stdout
    assert bearer == f"capability[]=authtype\nauthtype=Bearer\ncredential={access}\nephemeral=true\n"
    assert stored(bus, "refresh") not in basic + bearer
    # The same through the name git runs.
    linked = subprocess.run([str(helper_bin / "git-credential-cog-cred"), "--profile", "default", "get"],
                            input=request, env=cog.env, capture_output=True, text=True, timeout=30)
    assert linked.stdout == basic
    capability = cog.ok("git-credential", "capability").stdout
    assert capability == "version 0\ncapability authtype\n"


def test_the_bearer_credential_opens_the_server(cog, bus, server, helper_bin):
    answer = cog.ok("git-credential", "--profile", "default", "get",
                    input=helper_input(server, "capability[]=authtype")).stdout
    credential = dict(line.split("=", 1) for line in answer.splitlines())["credential"]
    status = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", f"Authorization: Bearer {credential}",
                             server.url + "project.git/info/refs?service=git-upload-pack"],
                            capture_output=True, text=True, timeout=30).stdout
    assert status == "200"


def test_store_erase_of_others_and_unknown_actions_change_nothing(cog, bus, signed_in):
    before = stored(bus, "access")
    assert cog.ok("git-credential", "--profile", "default", "store",
                  input="protocol=https\nhost=x\nusername=u\npassword=p\n\n").stdout == ""
    assert cog.ok("git-credential", "--profile", "default", "erase",
                  input="protocol=https\nhost=x\nusername=u\npassword=someone-elses\n\n").stdout == ""
    assert cog.ok("git-credential", "--profile", "default", "frobnicate", input="").stdout == ""
    assert stored(bus, "access") == before


@pytest.mark.parametrize("request_text, why", GIT_REFUSALS)
def test_the_helper_hands_a_token_only_where_it_may_go(cog, bus, signed_in, request_text, why):
    """A profile named on the command line (a helper set for every host,
    as other helpers' READMEs show) answers only an https host git named,
    within its git URLs, in values with no CR: otherwise one line on
    stderr, nothing on stdout, and git asks its next helper. Both binaries:
    the front, and cog-cred-cli it hands a refresh to."""
    cog.ok("configure", "--git-url", "https://git.example.com/")
    before = all_stored(bus)
    for binary in (cog.binary, cli_path(cog.binary)):
        result = run(binary, ["git-credential", "--profile", "default", "get"], cog.env, input=request_text)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", git_refusal(why)), (binary, result.stderr)
    assert all_stored(bus) == before


def test_https_to_the_profiles_host_and_http_to_this_machine_are_answered(cog, bus, server, helper_bin):
    loopback = server.url.rstrip("/")
    cog.ok("configure", "--git-url", "https://git.example.com/", "--git-url", loopback)
    access = stored(bus, "access")
    host = loopback.split("//")[1]
    for request_text in ("protocol=https\nhost=git.example.com\npath=org/repo.git\n\n", f"protocol=http\nhost={host}\n\n"):
        for binary in (cog.binary, cli_path(cog.binary)):
            result = run(binary, ["git-credential", "--profile", "default", "get"], cog.env, input=request_text)
            assert result.returncode == 0 and f"password={access}\n" in result.stdout, (binary, request_text, result.stderr)
    # Real git asks for what its remote's URL says: http to another machine gets nothing and git says it could not read one.
    remote = subprocess.run(["git", "-c", "credential.helper=cog-cred --profile default", "credential", "fill"],
                            input="url=http://git.example.com/org/repo.git\n\n", env={**cog.env, "GIT_TERMINAL_PROMPT": "0"},
                            capture_output=True, text=True, timeout=60)
    assert remote.returncode != 0 and f"password={access}" not in remote.stdout
    assert git_refusal(GIT_REFUSALS[0][1]).strip() in remote.stderr, remote.stderr
    secure = subprocess.run(["git", "-c", "credential.helper=cog-cred --profile default", "credential", "fill"],
                            input="url=https://git.example.com/org/repo.git\n\n", env={**cog.env, "GIT_TERMINAL_PROMPT": "0"},
                            capture_output=True, text=True, timeout=60)
    assert secure.returncode == 0 and f"password={access}\n" in secure.stdout, secure.stderr


def test_configure_refuses_a_git_url_over_plain_http_to_another_machine(cog, bus, signed_in):
    before = cog.config_file.read_text()
    result = cog.run("configure", "--git-url", "http://git.example.com/")
    assert result.returncode == 64 and "http://git.example.com is not https" in result.stderr, result.stderr
    assert cog.config_file.read_text() == before
    cog.ok("configure", "--git-url", "http://localhost:8080/")


@pytest.mark.parametrize("payload", [
    b"protocol=https\nhost=a\x00b\n\n",
    b"protocol=https\n" + b"password=" + b"x" * 70000 + b"\n\n",
    b"protocol=https\nnot-a-pair\n\n",
])
def test_malformed_helper_input_exits_65_and_changes_nothing(cog, bus, signed_in, payload):
    before = stored(bus, "access")
    result = subprocess.run([cog.binary, "git-credential", "--profile", "default", "erase"], input=payload,
                            env=cog.env, capture_output=True, timeout=30)
    assert result.returncode == 65
    assert result.stdout == b""
    assert stored(bus, "access") == before


# --- curl and scripts ----------------------------------------------------------------------------

def test_curl_with_the_header(cog, server):
    script = f'curl -fsS -o /dev/null -w "%{{http_code}}" -H "$(cog-cred get-header)" "{server.url}project.git/info/refs?service=git-upload-pack"'
    result = subprocess.run(["bash", "-c", script], env={**cog.env, "PATH": f"{Path(cog.binary).parent}:{cog.env['PATH']}"},
                            capture_output=True, text=True, timeout=30)
    assert result.stdout == "200", result.stderr
    unauthenticated = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                      server.url + "project.git/info/refs?service=git-upload-pack"],
                                     capture_output=True, text=True, timeout=30)
    assert unauthenticated.stdout == "401"


def test_token_formats(cog, bus, signed_in):
    access = stored(bus, "access")
    assert cog.ok("token", "--format", "bare").stdout == access + "\n"
    assert cog.ok("token", "--format", "header").stdout == f"Authorization: Bearer {access}\n"
    data = json.loads(cog.ok("token", "--format", "json").stdout)
    assert data["token"] == access and data["token_type"] == "Bearer"
    assert data["expires_at"].endswith("Z")
    # env sets what exec sets, and when the first of the tokens expires.
    env = cog.ok("token", "--format", "env").stdout
    show = 'eval "$1"; printf "%s|%s|%s|%s" "$COG_CRED_ACCESS_TOKEN" "$COG_CRED_ID_TOKEN" "$COG_CRED_AUTHORIZATION" "$COG_CRED_TOKEN_EXPIRES_AT"'
    for shell in ("bash", "sh"):
        evaluated = subprocess.run([shell, "-c", show, "_", env], capture_output=True, text=True, timeout=30,
                                   env={"PATH": os.environ["PATH"], "COG_CRED_ID_TOKEN": "inherited"})
        got = evaluated.stdout.split("|")
        assert got[:3] == [access, stored(bus, "id"), f"Bearer {access}"], shell
        first = min(claims(access)["exp"], claims(stored(bus, "id"))["exp"])
        assert got[3] == subprocess.run(["date", "-u", "-d", f"@{first}", "+%Y-%m-%dT%H:%M:%SZ"], capture_output=True,
                                        text=True).stdout.strip()
    # --id-token: the same variables, the ID token authorizing (as exec --id-token sets them).
    assert cog.ok("token", "--id-token", "--format", "env").stdout == env.replace(f"'Bearer {access}'", f"'Bearer {stored(bus, 'id')}'")
    assert cog.run("token", "--format", "yaml").returncode == 64


# --- exec ---------------------------------------------------------------------------------------------

def test_exec_puts_the_tokens_in_the_environment_only(cog, bus, signed_in):
    access, id_token = stored(bus, "access"), stored(bus, "id")
    result = cog.ok("exec", "--", "sh", "-c",
                    'printf "%s\\n%s\\n%s\\n" "$COG_CRED_ACCESS_TOKEN" "$COG_CRED_ID_TOKEN" "$COG_CRED_AUTHORIZATION";'
                    ' tr "\\0" " " < /proc/$$/cmdline')
    lines = result.stdout.split("\n")
    assert lines[:3] == [access, id_token, f"Bearer {access}"]
    assert access not in lines[3]  # not on the command line


def test_exec_passes_exit_status_and_signals_through(cog, signed_in):
    assert cog.run("exec", "--", "sh", "-c", "exit 7").returncode == 7
    assert cog.run("exec", "--", "sh", "-c", "kill -TERM $$").returncode == -15
    missing = cog.run("exec", "--", "no-such-command-here")
    assert missing.returncode == 127 and "cannot run no-such-command-here" in missing.stderr
    assert cog.run("exec").returncode == 64


def test_exec_refreshes_first(cog, bus, signed_in):
    before = stored(bus, "access")
    printed = cog.ok("exec", "--min-ttl", "4000", "--", "sh", "-c", 'printf %s "$COG_CRED_ACCESS_TOKEN"').stdout
    assert printed == stored(bus, "access") != before


# --- docker -----------------------------------------------------------------------------------------

def docker_helper(cog, helper_bin, action, stdin):
    return subprocess.run([str(helper_bin / "docker-credential-cog-cred"), action], input=stdin, env=cog.env,
                          capture_output=True, text=True, timeout=30)


def test_docker_credential_helper_protocol(cog, bus, signed_in, helper_bin):
    cog.ok("configure", "--docker-registry", "registry.example.com:5000")
    got = docker_helper(cog, helper_bin, "get", "https://registry.example.com:5000/v2/\n")
    assert got.returncode == 0, got.stdout + got.stderr
    credential = json.loads(got.stdout)
    # docker's credentials.Credentials: ServerURL, Username, Secret.
    assert set(credential) == {"ServerURL", "Username", "Secret"}
    assert credential["Secret"] == stored(bus, "access")
    assert credential["Username"] == "alice@example.com"

    unknown = docker_helper(cog, helper_bin, "get", "other.example.com")
    assert unknown.returncode == 1
    assert unknown.stdout.strip() == "credentials not found in native keychain"

    listed = json.loads(docker_helper(cog, helper_bin, "list", "").stdout)
    assert listed == {"registry.example.com:5000": "alice@example.com"}
    assert docker_helper(cog, helper_bin, "version", "").stdout.startswith("cog-cred ")

    stored_ok = docker_helper(cog, helper_bin, "store",
                              json.dumps({"ServerURL": "registry.example.com:5000", "Username": "u", "Secret": "s"}))
    assert stored_ok.returncode == 0
    refused = docker_helper(cog, helper_bin, "store", json.dumps({"ServerURL": "other.example", "Username": "u", "Secret": "s"}))
    assert refused.returncode == 1 and "--docker-registry" in refused.stdout

    before = stored(bus, "refresh")
    assert docker_helper(cog, helper_bin, "erase", "registry.example.com:5000").returncode == 0
    assert stored(bus, "access") is None and stored(bus, "refresh") == before
    again = json.loads(docker_helper(cog, helper_bin, "get", "registry.example.com:5000").stdout)
    assert again["Secret"] == stored(bus, "access")


# --- kubectl ------------------------------------------------------------------------------------------

def test_kubectl_exec_credential(cog, bus, signed_in):
    for args, kind in (([], "access"), (["--id-token"], "id")):
        credential = json.loads(cog.ok("kubectl-credential", *args).stdout)
        assert credential["apiVersion"] == "client.authentication.k8s.io/v1"
        assert credential["kind"] == "ExecCredential"
        assert credential["status"]["token"] == stored(bus, kind)
        exp = claims(stored(bus, kind))["exp"]
        expected = subprocess.run(["date", "-u", "-d", f"@{exp}", "+%Y-%m-%dT%H:%M:%SZ"], capture_output=True,
                                  text=True).stdout.strip()
        assert credential["status"]["expirationTimestamp"] == expected
