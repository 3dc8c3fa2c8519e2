"""One grammar for every command: the global options (--profile/-p and
--debug) anywhere before `--` (before the command's words, between a
group's words, after them), shown in every command's help and offered by the
completion; --json on every command that prints data; the nearest option for
a typo at the root and in a group. The command tree is walked from
`cog-cred --experimental-dump-help`, so a command added tomorrow is checked
too."""
import json
import subprocess

import pytest

from support import DOUBLE_CLIENT_ID, DOUBLE_POOL_ID, claims, configure_on_double, stored

USER, PASSWORD = "gina@example.com", "Grammar-Password-1"
RP = "auth.cog-cred.test"
NOT_CONFIGURED = "profile 'nosuch' is not configured"
DEVICE_KEY = "us-east-1_0a1b2c3d-1234-5678-9abc-def012345678"
GIT_REQUEST = "protocol=https\nhost=git.example.com\n\n"


def command_paths(binary):
    """Every command's words ([] for the root), from the dump of the help, `help` left out."""
    dump = json.loads(subprocess.run([binary, "--experimental-dump-help"], capture_output=True, text=True,
                                     check=True, timeout=30).stdout)
    paths = []

    def walk(command, words):
        paths.append(words)
        for sub in command.get("subcommands", []):
            if sub["commandName"] != "help":
                walk(sub, words + [sub["commandName"]])
    walk(dump["command"], [])
    return paths


# What a command needs after its words to get as far as reading its profile
# (valid dummies, each command's --help), and what it reads on stdin. A new
# command that needs arguments shows in the walk as a 64 until it is added here.
def arguments_for(words, tmp_path):
    return {
        ("exec",): ["--", "true"],
        ("git-credential",): ["get"],
        ("docker-credential",): ["get"],
        ("mfa", "enable"): ["email"],
        ("mfa", "disable"): ["email"],
        ("mfa", "prefer"): ["email"],
        ("devices", "forget"): [DEVICE_KEY],
        ("passkey", "remove"): ["A" * 22],
        ("configure",): ["--show"],
        ("setup-git",): ["git.example.com"],
        ("setup-docker",): ["registry.example.com"],
        ("setup-kubectl",): ["--cluster", "demo", "--kubeconfig", str(tmp_path / "kubeconfig")],
        # Ends at once after the note: a socket path longer than a UNIX socket takes (64).
        ("agent",): ["--socket", str(tmp_path / ("s" * 120))],
        # Ends at once after the note: an empty password (65).
        ("unlock",): ["--password-stdin"],
        # The profile is checked before anything listens (78).
        ("proxy",): ["--upstream", "https://api.example.com"],
    }.get(tuple(words), [])


STDIN = {("git-credential",): GIT_REQUEST, ("docker-credential",): "registry.example.com\n"}
# Commands that use no profile: -p is taken (an alias that always names one
# works) and a note says it is not used; then each goes on as without it.
NO_PROFILE = {("agent",): 64, ("unlock",): 65, ("version",): 0}
# The ways to spell the option, each used in turn.
FORMS = (["-p", "nosuch"], ["--profile=nosuch"], ["-pnosuch"], ["--profile", "nosuch"])


def placements(words, args, turn=0):
    """(where, argv): the global options before the words, between a group's
    words, after them, and after the arguments (when no `--` ends the options);
    the option spelled each way in turn (`turn`: where in FORMS to start)."""
    found = [("before", []), *[(f"between {i}", words[:i]) for i in range(1, len(words))], ("after", words)]
    out = []
    for n, (where, head) in enumerate(found):
        form = FORMS[(n + turn) % len(FORMS)]
        options = [*form, "--debug"] if n % 2 else ["--debug", *form]
        out.append((where, head + options + words[len(head):] + args))
    if args and "--" not in args:
        out.append(("after the arguments", words + args + ["--profile", "nosuch", "--debug"]))
    return out


def error_lines(text):
    return [line for line in text.splitlines() if line.startswith("cog-cred: error:")]


def test_the_profile_and_debug_go_anywhere_in_every_command(cog, tmp_path):
    paths = [words for words in command_paths(cog.binary) if words]
    walked = {tuple(words) for words in paths}
    # The walk is the tree, not a few names: the groups and their words are in it.
    assert {("token",), ("mfa", "enable"), ("devices", "forget"), ("passkey", "list"), ("profiles",), ("agent",),
            ("unlock",), ("exec",), ("git-credential",), ("docker-credential",), ("setup-kubectl",)} <= walked
    wrong = []
    for turn, words in enumerate(paths):
        args = arguments_for(words, tmp_path)
        for where, argv in placements(words, args, turn):
            result = cog.run(*argv, input=STDIN.get(tuple(words), ""))
            said = (" ".join(argv), result.returncode, result.stdout[-300:], result.stderr[-500:])
            if tuple(words) in NO_PROFILE:
                expected = f"cog-cred: note: {words[0]} does not use --profile"
                status = NO_PROFILE[tuple(words)]
                if result.returncode != status or expected not in result.stderr:
                    wrong.append((f"{status} and " + expected, *said))
            elif tuple(words) == ("docker-credential",):
                # docker's helper protocol: 1, the message on stdout.
                if result.returncode != 1 or NOT_CONFIGURED not in result.stdout:
                    wrong.append(("1 and the message on stdout", *said))
            elif tuple(words) == ("sign-out",):
                # A profile that is not configured still has its local items deleted (nothing is sent).
                if (result.returncode != 0
                        or "Profile 'nosuch' is not configured: deleting its local items only." not in result.stderr):
                    wrong.append(("0 and the local items of 'nosuch' deleted", *said))
            else:
                if result.returncode != 78 or not any(NOT_CONFIGURED in line for line in error_lines(result.stderr)):
                    wrong.append(("78 and " + NOT_CONFIGURED, *said))
    assert wrong == [], "\n".join(map(repr, wrong))


@pytest.fixture
def work(cog, bus, double):
    """Profile `work` on the double, signed in; the pool tracks devices and offers passkeys."""
    double.configure(device_tracking="always", allowed_first_auth_factors=["PASSWORD", "WEB_AUTHN"],
                     webauthn_rp_id=RP)
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD)
    configure_on_double(cog, double.url, "--username", USER, "--passkey-rp-id", RP, profile="work")
    cog.ok("-p", "work", "sign-in", "--password-stdin", input=PASSWORD + "\n")
    cog.remember_secret(stored(bus, "refresh", profile="work"))
    return double


# Commands that print data, with the same answer wherever -p work stands.
SAME_ANSWER = [["whoami"], ["token"], ["get-header"], ["mfa", "show"], ["devices", "list"], ["passkey", "list", "--json"],
               ["configure", "--show"], ["profiles", "--json"], ["status", "--offline", "--json"]]


def test_a_signed_in_profile_anywhere_gives_the_same_answer(cog, bus, work):
    wrong = []
    for words in SAME_ANSWER:
        first = cog.run("-p", "work", *words)
        assert first.returncode == 0 and first.stdout, (words, first.stderr)
        head = words[:1]
        for argv in (["--profile=work", *words], [*head, "-p", "work", *words[1:]], [*words, "-pwork"],
                     [*words, "--profile", "work"]):
            result = cog.run(*argv)
            if (result.returncode, result.stdout) != (0, first.stdout):
                wrong.append((argv, result.returncode, result.stdout, result.stderr))
    assert wrong == [], wrong
    # Between a group's words, and it is work's answer: work has its one device listed.
    devices = json.loads(cog.ok("devices", "-p", "work", "list", "--json").stdout)
    assert len(devices) == 1 and devices[0]["current"] is True
    assert json.loads(cog.ok("passkey", "-p", "work", "list", "--json").stdout) == []


def test_status_and_token_take_the_profile_and_debug_on_either_side(cog, bus, work):
    token = stored(bus, "access", profile="work")
    for args in (["-p", "work", "status"], ["status", "-p", "work"], ["status", "-pwork"]):
        result = cog.ok(*args)
        assert "profile:       work" in result.stdout and "signed in:     yes" in result.stdout, (args, result.stdout)
    for args in (["--debug", "-p", "work", "token"], ["token", "-p", "work", "--debug"], ["-pwork", "token", "--debug"],
                 ["token", "--debug", "--profile=work"]):
        result = cog.ok(*args)
        assert result.stdout == token + "\n", args
        assert claims(result.stdout.strip())["token_use"] == "access"
        debug = [line for line in result.stderr.splitlines() if line.startswith("cog-cred: debug:")]
        assert debug and "profile 'work'" in result.stderr, (args, result.stderr)
    # Without --debug, nothing on stderr.
    assert cog.ok("token", "-p", "work").stderr == ""
    # Without -p, the default profile, which does not exist here: -p was what chose work.
    assert cog.run("token").returncode == 78


def test_a_profile_after_the_double_dash_is_the_commands(cog, bus, work):
    assert cog.ok("exec", "-p", "work", "--", "printf", "%s", "-p").stdout == "-p"
    assert cog.ok("-p", "work", "exec", "--", "printf", "%s|", "-p", "nosuch", "--debug").stdout == "-p|nosuch|--debug|"
    # The command's -p nosuch did not become cog-cred's: work's token was given.
    shown = cog.ok("exec", "--profile", "work", "--", "sh", "-c", 'printf %s "$COG_CRED_ACCESS_TOKEN"', "-p", "nosuch")
    assert shown.stdout == stored(bus, "access", profile="work")


# --- every command's help ---------------------------------------------------------------------------

def test_every_commands_help_shows_debug_and_profile(cog):
    missing = []
    for words in command_paths(cog.binary):
        text = cog.ok(*words, "--help").stdout
        # Listed under OPTIONS, each with its own entry.
        options = text[text.index("\nOPTIONS:"):]
        for entry in ("\n  -p, --profile <name> ", "\n  --debug "):
            if entry not in options:
                missing.append(" ".join(["cog-cred", *words, "--help"]) + ": no" + entry.replace("\n", ""))
    assert missing == [], "\n".join(missing)


# --- --json on the commands that print data -------------------------------------------------------

def test_json_on_every_data_command(cog, bus, work):
    access = stored(bus, "access", profile="work")
    as_json = json.loads(cog.ok("-p", "work", "token", "--json").stdout)
    assert set(as_json) == {"token", "token_type", "expires_at"}
    assert as_json["token"] == access and as_json["token_type"] == "Bearer" and as_json["expires_at"].endswith("Z")
    assert cog.ok("-p", "work", "token", "--format", "json").stdout == cog.ok("-p", "work", "token", "--json").stdout
    clash = cog.run("-p", "work", "token", "--json", "--format", "env")
    assert clash.returncode == 64 and clash.stdout == "" and len(error_lines(clash.stderr)) == 1, clash.stderr

    assert json.loads(cog.ok("-p", "work", "whoami", "--json").stdout) == {"profile": "work", "name": USER,
                                                                           "grant": "user"}

    shown = cog.ok("-p", "work", "configure", "--show", "--json").stdout
    assert json.loads(shown)["user-pool-id"] == DOUBLE_POOL_ID and json.loads(shown)["client-id"] == DOUBLE_CLIENT_ID
    assert cog.ok("-p", "work", "configure", "--json").stdout == shown
    assert cog.ok("-p", "work", "configure", "--show").stdout == shown
    saved = cog.ok("-p", "work", "configure", "--json", "--username", "bob")
    assert json.loads(saved.stdout) == {**json.loads(shown), "username": "bob"}
    assert json.loads(cog.config_file.read_text())["profiles"]["work"]["username"] == "bob"
    cog.ok("-p", "work", "configure", "--username", USER)

    configure_on_double(cog, work.url, profile="other")
    everyone = json.loads(cog.ok("profiles", "--json").stdout)
    assert sorted(p["profile"] for p in everyone) == ["other", "work"]
    [one] = json.loads(cog.ok("profiles", "-p", "work", "--json").stdout)
    assert one["profile"] == "work" and one["signed_in"] is True and one["username"] == USER

    status = json.loads(cog.ok("-p", "work", "status", "--json").stdout)
    assert status["profile"] == "work" and status["grant"] == "user" and status["signed_in"] is True

    mfa = json.loads(cog.ok("-p", "work", "mfa", "--json").stdout)
    assert set(mfa) == {"totp", "sms", "email"} and set(mfa["email"]) == {"enabled", "preferred"}
    assert json.loads(cog.ok("-p", "work", "mfa", "show", "--json").stdout) == mfa

    devices = json.loads(cog.ok("-p", "work", "devices", "--json").stdout)
    assert len(devices) == 1 and {"key", "name", "current", "remembered", "last_seen"} <= set(devices[0])
    assert devices[0]["key"] == work.admin(f"devices?username={USER}")["devices"][0]["device_key"]
    assert json.loads(cog.ok("-p", "work", "devices", "list", "--json").stdout) == devices
    assert json.loads(cog.ok("-p", "work", "passkey", "list", "--json").stdout) == []


# --- did you mean -----------------------------------------------------------------------------------

@pytest.mark.parametrize("args, typed, meant, where", [
    (["--porfile", "x", "token"], "--porfile", "--profile", "cog-cred --help"),
    (["devices", "--porfile", "x"], "--porfile", "--profile", "cog-cred devices --help"),
    (["mfa", "--jsn"], "--jsn", "--json", "cog-cred mfa --help"),
    (["token", "--degub"], "--degub", "--debug", "cog-cred token --help"),
])
def test_a_mistyped_global_or_group_option_names_the_nearest(cog, args, typed, meant, where):
    result = cog.run(*args)
    assert result.returncode == 64 and result.stdout == "", result.stderr
    assert result.stderr == f"cog-cred: error: unknown option '{typed}'; did you mean '{meant}'? (see: {where})\n"
