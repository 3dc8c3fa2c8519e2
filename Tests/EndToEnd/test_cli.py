"""The command line as gh and aws users expect it: the profile before the
subcommand, suggestions for typos, one-line usage errors that name the
subcommand's own help, and shells' exit statuses for exec."""
import json
import os
import subprocess

import pytest

from support import cli_path, lock_collection, run, stored


def test_the_profile_goes_before_or_after_the_subcommand(cog, bus, pool):
    cog.ok("configure", "-p", "work", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id,
           "--endpoint-url", pool.url, "--username", pool.username)
    cog.ok("--profile", "work", "sign-in", "--password-stdin", input=pool.password + "\n")
    token = stored(bus, "access", profile="work")
    for args in (["--profile", "work", "token"], ["-p", "work", "token"], ["--profile=work", "token"],
                 ["token", "-p", "work"], ["token", "--profile", "work"]):
        assert cog.ok(*args).stdout == token + "\n", args
    # The full command too (status is not a read the front answers).
    status = cog.run("-p", "work", "status")
    assert status.returncode == 0 and "work" in status.stdout + status.stderr
    # Without it, the default profile, which does not exist here.
    assert cog.run("token").returncode == 78
    # The top-level usage shows it.
    assert "cog-cred [--profile <name>] <subcommand>" in cog.ok("--help").stdout


@pytest.mark.parametrize("typed, suggested", [("tokn", "token"), ("statu", "status"), ("sigin", "sign-in"),
                                              ("get-heade", "get-header")])
def test_a_mistyped_subcommand_suggests_the_closest(cog, typed, suggested):
    for args in ([typed], ["--profile", "work", typed]):
        result = cog.run(*args)
        assert result.returncode == 64 and result.stdout == ""
        assert result.stderr.strip() == (f"cog-cred: error: unknown command '{typed}'; did you mean '{suggested}'? "
                                         "(see: cog-cred --help)")


def test_help_for_a_command_there_is_not_is_a_usage_error(cog):
    for args in (["help", "no-such-command"], ["help", "tokn"]):
        result = cog.run(*args)
        assert result.returncode == 64 and result.stdout == "", result.stderr
        assert result.stderr.count("\n") == 1 and f"unknown command '{args[1]}'" in result.stderr, result.stderr
    assert "did you mean 'token'?" in cog.run("help", "tokn").stderr
    # A command there is, and an alias, still get their help.
    assert "OVERVIEW: Sign in" in cog.ok("help", "login").stdout


def test_login_logout_and_whoami_as_users_of_other_tools_type_them(cog, bus, pool):
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id,
           "--endpoint-url", pool.url, "--username", pool.username)
    not_yet = cog.run("whoami")
    assert not_yet.returncode == 77 and not_yet.stdout == "", not_yet.stderr
    cog.ok("login", "--password-stdin", input=pool.password + "\n")
    token = stored(bus, "access")
    assert token is not None
    # The name alone on stdout, for scripts: Cognito's name for the user.
    whoami = cog.ok("whoami")
    assert whoami.stdout == f"{pool.username}\n" and whoami.stderr == "", whoami
    assert cog.ok("-p", "default", "whoami").stdout == whoami.stdout
    cog.ok("logout", "--local")  # moto has no RevokeToken
    assert stored(bus, "access") is None
    assert cog.run("whoami").returncode == 77


def test_usage_errors_are_one_line_naming_the_subcommands_help(cog, bus, signed_in):
    for args, fragment in (
        (["token", "--bogus"], "unknown option '--bogus'"),
        (["token", "--min-ttl", "-5"], "--min-ttl takes a whole number of seconds from 0 to 86400, not '-5'"),
        (["token", "--min-ttl", "ten"], "not 'ten'"),
        (["get-header", "--min-ttl=90000"], "not '90000'"),
        (["token", "--format", "yaml"], "the value 'yaml' is invalid for '--format <format>': it takes bare, header, json or env"),
    ):
        # The front hands what it does not take to cog-cred-cli: the same answer either way.
        for binary in (cog.binary, cli_path(cog.binary)):
            result = run(binary, args, cog.env)
            assert result.returncode == 64, (binary, args, result.stderr)
            lines = result.stderr.splitlines()
            assert len(lines) == 1 and fragment in lines[0], (args, result.stderr)
            assert lines[0].endswith(f"(see: cog-cred {args[0]} --help)"), lines


def test_a_password_on_the_command_line_is_refused_with_the_way_to_give_it(cog, bus, signed_in):
    before = stored(bus, "access")
    for command in ("sign-in", "sign-up", "change-password"):
        for args in (["--password", "Hunter2-secret"], ["--password=Hunter2-secret"]):
            result = cog.run(command, *args)
            assert result.returncode == 64, (command, result.stderr)
            assert "--password-stdin" in result.stderr and f"cog-cred {command} --help" in result.stderr
            assert "Hunter2-secret" not in result.stderr + result.stdout
    assert stored(bus, "access") == before


def test_configure_of_a_new_profile_without_the_pool_or_client_is_a_usage_error(cog):
    result = cog.run("configure", "--profile", "new", "--client-id", "abc")
    assert result.returncode == 64
    assert "--user-pool-id is required" in result.stderr and "cog-cred configure --help" in result.stderr
    assert not cog.config_file.exists()


def test_exec_exits_126_for_a_command_it_cannot_run_and_127_for_one_it_cannot_find(cog, bus, signed_in, tmp_path):
    not_executable = tmp_path / "script.sh"
    not_executable.write_text("#!/bin/sh\necho ran\n")
    os.chmod(not_executable, 0o644)
    for binary in (cog.binary, cli_path(cog.binary)):
        for command, status, reason in ((str(not_executable), 126, "Permission denied"), (str(tmp_path), 126, ""),
                                        ("no-such-command-here", 127, "No such file")):
            result = run(binary, ["exec", "--", command], cog.env)
            assert result.returncode == status, (binary, command, result.returncode, result.stderr)
            assert f"cannot run {command}" in result.stderr and reason in result.stderr
            assert result.stdout == ""
    # And as a shell says it, for comparison.
    assert subprocess.run(["sh", "-c", str(not_executable)], capture_output=True).returncode == 126


@pytest.fixture
def not_cognito():
    """A web server that answers every request with an HTML 404, as a mistyped endpoint would."""
    from serving import QuietServer, serve_in_background
    from token_servers import Handler

    class NotFound(Handler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send(404, "text/html", b"<html><body><h1>404 Not Found</h1></body></html>")

    server = QuietServer(("127.0.0.1", 0), NotFound)
    serve_in_background(server, "not-cognito")
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_an_endpoint_that_is_not_cognito_is_a_configuration_error(cog, bus, signed_in, not_cognito):
    before = stored(bus, "refresh")
    refreshed = cog.run("refresh", env={"AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER": not_cognito})
    assert refreshed.returncode == 78, refreshed.stderr
    assert "does not look like Cognito (HTTP 404" in refreshed.stderr and "--endpoint-url" in refreshed.stderr
    assert "try again later" not in refreshed.stderr
    assert stored(bus, "refresh") == before
    cog.ok("configure", "--profile", "elsewhere", "--user-pool-id", signed_in.pool_id, "--client-id",
           signed_in.client_id, "--endpoint-url", not_cognito, "--username", signed_in.username)
    signed = cog.run("sign-in", "--profile", "elsewhere", "--password-stdin", input=signed_in.password + "\n")
    assert signed.returncode == 78 and "does not look like Cognito" in signed.stderr


# --- profiles, configure --show and --delete ----------------------------------------------------------

def test_profiles_lists_every_profile_and_whether_it_is_signed_in(cog, bus, signed_in):
    cog.ok("configure", "-p", "work", "--user-pool-id", signed_in.pool_id, "--client-id", "otherclient",
           "--endpoint-url", signed_in.url)
    table = cog.ok("profiles").stdout.splitlines()
    assert table[0].split() == ["PROFILE", "USER", "POOL", "APP", "CLIENT", "USERNAME", "SIGNED", "IN", "ACCESS", "TOKEN"]
    rows = {line.split()[0]: line for line in table[1:]}
    assert set(rows) == {"default", "work"}
    assert signed_in.username in rows["default"] and " yes " in rows["default"] and "expires " in rows["default"]
    assert " no " in rows["work"] and "otherclient" in rows["work"]
    listed = {p["profile"]: p for p in __import__("json").loads(cog.ok("profiles", "--json").stdout)}
    assert listed["default"]["signed_in"] is True and listed["work"]["signed_in"] is False
    assert listed["default"]["client_id"] == signed_in.client_id
    assert listed["default"]["access_token_expires_at"].endswith("Z") and listed["work"]["access_token_expires_at"] is None
    for secret in (stored(bus, "access"), stored(bus, "refresh")):
        assert secret not in table and secret not in str(listed)


def test_profiles_with_a_locked_keyring_still_lists_them_and_exits_69(cog, pool, tmp_path):
    from conftest import Bus

    private = Bus(tmp_path / "own-bus")
    try:
        cog.env.update(private.env)
        cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url)
        lock_collection(private)
        result = cog.run("profiles")
        assert result.returncode == 69 and "locked" in result.stderr
        assert "unknown" in result.stdout.splitlines()[1]
    finally:
        private.stop()


def test_configure_show_prints_the_settings_and_changes_nothing(cog, bus, signed_in):
    import json

    before = cog.config_file.read_text()
    shown = json.loads(cog.ok("configure", "--show").stdout)
    assert shown["user-pool-id"] == signed_in.pool_id and shown["client-id"] == signed_in.client_id
    assert shown == json.loads(before)["profiles"]["default"]
    assert cog.config_file.read_text() == before
    assert cog.run("configure", "--show", "--region", "eu-west-1").returncode == 64
    missing = cog.run("configure", "--show", "-p", "nowhere")
    assert missing.returncode == 78 and "not configured" in missing.stderr


def test_configure_delete_removes_the_profile_and_its_keyring_items(cog, bus, signed_in):
    import json

    printf = subprocess.run(["printf", "%s", "s3cr3t-client"], capture_output=True, text=True).stdout
    cog.ok("configure", "--client-secret-stdin", input=printf + "\n")
    assert stored(bus, "client-secret") is not None and stored(bus, "refresh") is not None
    cog.ok("configure", "-p", "keep", "--user-pool-id", signed_in.pool_id, "--client-id", signed_in.client_id)
    deleted = cog.run("configure", "--delete")
    assert deleted.returncode == 0, deleted.stderr
    assert "4 items" in deleted.stderr
    assert all(stored(bus, kind) is None for kind in ("access", "id", "refresh", "client-secret"))
    assert set(json.loads(cog.config_file.read_text())["profiles"]) == {"keep"}
    assert cog.run("token").returncode == 78
    again = cog.run("configure", "--delete")
    assert again.returncode == 78 and "not configured" in again.stderr
    assert cog.run("configure", "-p", "keep", "--delete", "--username", "x").returncode == 64
    assert "keep" in json.loads(cog.config_file.read_text())["profiles"]


# --- first contact: the sandbox shell ---------------------------------------------------------------

@pytest.mark.parametrize("flags", [[], ["--double"]])
def test_the_sandbox_shell_is_ready_to_sign_in(cog, flags, tmp_path):
    """scripts/sandbox with no command: a shell with a pool, a user and the profile ready."""
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    commands = 'printf "%s\\n" "$SANDBOX_PASSWORD" | cog-cred sign-in --password-stdin && cog-cred get-header\nexit\n'
    env = {**os.environ, "COG_CRED": str(Path(cog.binary).resolve()), "TMPDIR": str(tmp_path)}
    for name in ("DBUS_SESSION_BUS_ADDRESS", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME"):
        env.pop(name, None)
    result = subprocess.run([str(repo / "scripts/sandbox"), *flags], input=commands, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith("Authorization: Bearer eyJ")
    assert "SANDBOX_PASSWORD" in result.stderr and "us-east-1_" in result.stderr
    assert not list(tmp_path.glob("cog-cred-sandbox.*")), "the sandbox left its directory behind"


def test_a_joined_short_profile_works_in_both_binaries(cog, bus, pool):
    """-pNAME as getopt reads it, before or after the subcommand: token is the
    front's, sign-in and status cog-cred-cli's, git-credential get both's."""
    cog.ok("configure", "-p", "work", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id,
           "--endpoint-url", pool.url, "--username", pool.username)
    cog.ok("-pwork", "sign-in", "--password-stdin", input=pool.password + "\n")
    token = stored(bus, "access", profile="work")
    for args in (["-pwork", "token"], ["token", "-pwork"]):
        assert cog.ok(*args).stdout == token + "\n", args
    status = cog.ok("status", "-pwork")
    assert "work" in status.stdout + status.stderr
    git = cog.ok("git-credential", "-pwork", "get", input="protocol=https\nhost=git.example.com\n\n")
    assert f"password={token}\n" in git.stdout
    # After --, exec's command keeps its words as typed.
    shown = cog.ok("exec", "-pwork", "--", "printf", "%s", "-pwork")
    assert shown.stdout == "-pwork"


def test_a_mistyped_profile_names_the_nearest_in_both_binaries(cog, bus, pool):
    cog.ok("configure", "-p", "work", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id,
           "--endpoint-url", pool.url, "--username", pool.username)
    # token goes to the front, which hands a missing profile over; the others are cog-cred-cli's.
    for args in (["-p", "wrok", "token"], ["-pwrok", "token"], ["sign-in", "-p", "wrok", "--password-stdin"],
                 ["get-header", "--profile=wrok"]):
        result = cog.run(*args, input="x\n")
        assert result.returncode == 78 and result.stdout == "", (args, result.stderr)
        assert result.stderr.count("\n") == 1
        assert "profile 'wrok' is not configured" in result.stderr and "did you mean 'work'?" in result.stderr, args
        assert "COG_CRED_PROFILE" not in result.stderr
    # From the environment: said so, the one place the name was never typed.
    from_env = cog.run("token", env={"COG_CRED_PROFILE": "wrok"})
    assert from_env.returncode == 78
    assert "profile 'wrok' (from COG_CRED_PROFILE) is not configured" in from_env.stderr
    assert "did you mean 'work'?" in from_env.stderr
    # Nothing near: the way to add it, no guess.
    far = cog.run("-p", "production", "token")
    assert far.returncode == 78 and "did you mean" not in far.stderr and "run: cog-cred configure" in far.stderr


def test_a_mistyped_option_suggests_the_nearest(cog):
    result = cog.run("sign-in", "--passwrod-stdin")
    assert result.returncode == 64 and result.stdout == ""
    assert result.stderr == ("cog-cred: error: unknown option '--passwrod-stdin'; did you mean '--password-stdin'? "
                             "(see: cog-cred sign-in --help)\n")
    nested = cog.run("mfa", "enable", "totp", "--prnt-uri")
    assert nested.returncode == 64 and "did you mean '--print-uri'?" in nested.stderr


def subcommands_in(help_text):
    """The command names a help text lists under its SUBCOMMANDS headings (the
    root's groups too: SIGN IN AND OUT SUBCOMMANDS, ...), `help` left out."""
    names, inside = [], False
    for line in help_text.splitlines():
        if line.endswith("SUBCOMMANDS:"):
            inside = True
        elif not line.startswith("  "):
            inside = False
        elif inside and not line.startswith("   "):
            name = line.split()[0].rstrip(",")
            if name != "help":
                names.append(name)
    return names


def assert_ends_with_examples(text, asked):
    lines = text.rstrip("\n").splitlines()
    assert "EXAMPLES:" in lines, f"{asked}: no EXAMPLES section"
    examples = lines[len(lines) - lines[::-1].index("EXAMPLES:"):]
    assert 1 <= len(examples) <= 4, f"{asked}: {examples}"
    for line in examples:
        assert line.startswith("  cog-cred "), f"{asked}: {line!r}"


def test_every_commands_help_ends_with_examples(cog, tmp_path):
    # Walked from the root's help down each command's SUBCOMMANDS, so a new
    # command is checked the day it is added.
    root = cog.ok("--help").stdout
    assert_ends_with_examples(root, "--help")
    assert cog.ok("help").stdout == root
    pending, seen = [[name] for name in subcommands_in(root)], []
    assert {"sign-in", "token", "configure", "mfa", "devices"} <= {words[0] for words in pending}
    while pending:
        words = pending.pop(0)
        seen.append(words)
        text = cog.ok(*words, "--help").stdout
        assert_ends_with_examples(text, " ".join(words) + " --help")
        assert cog.ok("help", *words).stdout == text, words
        pending += [words + [name] for name in subcommands_in(text)]
    assert ["mfa", "enable"] in seen and ["devices", "list"] in seen
    # Run by the names git and docker look for, too.
    for helper in ("git-credential-cog-cred", "docker-credential-cog-cred"):
        (tmp_path / helper).symlink_to(cog.binary)
        result = run(str(tmp_path / helper), ["--help"], cog.env)
        assert result.returncode == 0
        assert_ends_with_examples(result.stdout, helper + " --help")


def test_the_root_help_puts_usage_and_commands_first(cog):
    text = cog.ok("--help").stdout
    order = [text.index(heading) for heading in ("OVERVIEW:", "USAGE:", "SIGN IN AND OUT SUBCOMMANDS:",
                                                 "TOKENS FOR TOOLS SUBCOMMANDS:", "ACCOUNT SUBCOMMANDS:",
                                                 "SETTINGS SUBCOMMANDS:", "EXIT STATUS", "ENVIRONMENT", "EXAMPLES:")]
    assert order == sorted(order), text


def test_configure_help_groups_its_options(cog):
    text = cog.ok("configure", "--help").stdout
    for title, option in (("CONNECTION:", "--user-pool-id"), ("SIGN-IN:", "--auth-flow"), ("BROWSER SIGN-IN:", "--domain"),
                          ("AWS CREDENTIALS:", "--identity-pool-id"), ("TIMEOUTS:", "--connect-timeout"),
                          ("HELPERS:", "--git-url")):
        # The option's own entry (a line that starts with it), after its group's title.
        assert title in text and text.index(title) < text.index("\n  " + option + " "), title


# --- one grammar: help and errors (#63) --------------------------------------------------------------

def test_bare_cog_cred_is_its_help_and_help_before_a_command_is_its_help(cog):
    root = cog.ok("--help").stdout
    bare = cog.run()
    assert (bare.returncode, bare.stdout, bare.stderr) == (0, root, ""), bare.stderr
    assert root.index("SUBCOMMANDS:") < root.index("EXIT STATUS") < root.index("EXAMPLES:")
    for words in (["status"], ["mfa", "enable"], ["passkey", "list"]):
        assert cog.ok("--help", *words).stdout == cog.ok(*words, "--help").stdout, words
        assert cog.ok("-h", *words).stdout == cog.ok(*words, "--help").stdout, words


def test_version_takes_json_as_every_data_command(cog):
    version = cog.ok("version").stdout.strip()
    assert cog.ok("--version").stdout.strip() == version
    for args in (["version", "--json"], ["--version", "--json"]):
        assert json.loads(cog.ok(*args).stdout) == {"version": version}, args
    assert cog.run("--version", "--bogus").returncode == 64


# Mistakes at every depth, each with the nearest right word.
MISTAKES = [
    (["passkey", "lst"], "unknown command 'passkey lst'; did you mean 'list'?", "passkey"),
    (["mfa", "enbale", "totp"], "unknown command 'mfa enbale'; did you mean 'enable'?", "mfa"),
    (["devices", "forgt"], "unknown command 'devices forgt'; did you mean 'forget'?", "devices"),
    (["tokn"], "unknown command 'tokn'; did you mean 'token'?", None),
    (["status", "--jsn"], "unknown option '--jsn'; did you mean '--json'?", "status"),
    (["sign-in", "--auth-flow", "sro"],
     "the value 'sro' is invalid for '--auth-flow <flow>': it takes srp, password, browser, choice, custom or "
     "custom-srp; did you mean 'srp'?", "sign-in"),
    (["configure", "--grant", "usr"], "it takes user or client-credentials; did you mean 'user'?", "configure"),
    (["mfa", "enable", "emial"], "did you mean 'email'?", "mfa enable"),
    (["token", "--format", "jsn"], "did you mean 'json'?", "token"),
    (["sign-in", "--timeout", "abc"], "the value 'abc' is invalid for '--timeout <seconds>'", "sign-in"),
    (["mfa", "enable"], "missing expected argument '<method>'", "mfa enable"),
    (["whoami", "extra"], "unexpected argument 'extra'", "whoami"),
    (["token", "--profile"], "missing value for '--profile <name>'", "token"),
]


@pytest.mark.parametrize("args,said,help_of", MISTAKES, ids=[" ".join(m[0]) for m in MISTAKES])
def test_every_mistake_is_one_line_in_lower_case_with_the_nearest_word(cog, args, said, help_of):
    result = cog.run(*args)
    assert (result.returncode, result.stdout) == (64, ""), result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cog-cred: error: "), result.stderr
    message = lines[0][len("cog-cred: error: "):]
    assert message[0].islower() or message[0] in "-'", message
    assert said in message, message
    assert message.endswith(f"(see: cog-cred {help_of + ' ' if help_of else ''}--help)"), message
