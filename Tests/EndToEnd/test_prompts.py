"""Prompts that forgive: a mistyped code on a terminal is asked again (the
same prompt, up to three tries) and costs no new sign-in, email or password;
piped input that a prompt does not read is named; a locked keyring is said
before the password is asked for. On a pseudo-terminal, against the Cognito
test double."""
import pytest

from support import configure_on_double, lock_collection, no_terminal, on_terminal, stored

USER, PASSWORD = "erin@example.com", "Prompt-Password-1"
CODE_PROMPT = "Enter the code from your authenticator app: "


@pytest.fixture
def profile(cog, double):
    """The default profile on the double, for USER; the user is each test's to add."""
    configure_on_double(cog, double.url, "--username", USER)
    cog.remember_secret(PASSWORD)
    return double


def sign_ins(double):
    """InitiateAuth calls, whatever their flow (the double counts "InitiateAuth:USER_SRP_AUTH")."""
    return sum(n for key, n in double.stats()["calls"].items() if key.split(":")[0] == "InitiateAuth")


def spawn(cog, args):
    pexpect = pytest.importorskip("pexpect")
    return pexpect, pexpect.spawn(cog.binary, args, env=cog.env, encoding="utf-8", timeout=30)


def test_a_mistyped_code_is_asked_again_without_a_new_sign_in(cog, bus, profile):
    totp = profile.add_totp_user(USER, PASSWORD)
    shown = on_terminal(cog, ["sign-in"], ("Password for erin@example.com: ", PASSWORD),
                        (CODE_PROMPT, "12345"),
                        (r"the code must be exactly 6 digits; try again \(2 of 3\)\.\r\n" + CODE_PROMPT, ""),
                        (r"try again \(3 of 3\)\.\r\n" + CODE_PROMPT, totp.now))
    assert "Signed in as" in shown
    assert stored(bus, "refresh")
    # One sign-in, one answer: the typos never reached Cognito.
    assert sign_ins(profile) == 1
    assert profile.calls("RespondToAuthChallenge:SOFTWARE_TOKEN_MFA") == 1


def test_three_mistyped_codes_end_it_65_and_a_flag_is_never_asked_again(cog, bus, profile):
    profile.add_totp_user(USER, PASSWORD)
    pexpect, child = spawn(cog, ["sign-in"])
    child.expect("Password for")
    child.sendline(PASSWORD)
    for typed in ("1", "abcdef", "1234567"):
        child.expect_exact(CODE_PROMPT)
        child.sendline(typed)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 65 and "the code must be exactly 6 digits" in child.before
    assert child.before.count(CODE_PROMPT) == 0  # the last prompt was matched above: no fourth
    assert stored(bus, "refresh") is None
    # From a flag (or stdin) a bad code fails at once, even on a terminal.
    pexpect, child = spawn(cog, ["sign-in", "--mfa-code", "12345"])
    child.expect("Password for")
    child.sendline(PASSWORD)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 65 and "try again" not in child.before and CODE_PROMPT not in child.before


def test_an_emailed_code_is_asked_again_too(cog, bus, profile):
    """confirm-sign-up: the account commands' code prompt is the same rule."""
    cog.ok("sign-up", "--username", USER, "--password-stdin", input=PASSWORD + "\n")
    code = profile.codes(USER)["signup"]
    prompt = "Enter the 6-digit code from the email: "
    on_terminal(cog, ["confirm-sign-up", "--username", USER], (prompt, "12 34"),
                (r"try again \(2 of 3\)\.\r\n" + prompt, code))
    assert profile.user(USER)["confirmed"] is True
    assert profile.calls("SignUp") == 1 and profile.calls("ResendConfirmationCode") == 0


def test_piped_input_on_a_terminal_names_password_stdin(cog, bus, profile):
    """`printf pw | cog-cred sign-in`: the pipe is not read; say what reads it."""
    profile.add_user(USER, PASSWORD)
    note = r"standard input is piped but not read: asking on the terminal \(--password-stdin reads standard input\)"
    shown = on_terminal(cog, ["sign-in"], (note, None), ("Password for erin@example.com: ", PASSWORD), piped="not-read")
    assert "Signed in as" in shown and stored(bus, "refresh")
    # With the flag, nothing to say.
    cog.ok("sign-out", "--local")
    quiet = cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert "piped" not in quiet.stderr


def test_a_locked_keyring_is_said_before_the_password_is_asked(cog, double, own_bus):
    configure_on_double(cog, double.url, "--username", USER)
    cog.remember_secret(PASSWORD)
    double.add_user(USER, PASSWORD)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    lock_collection(own_bus)
    pexpect, child = spawn(cog, ["sign-in"])
    index = child.expect(["Password for", pexpect.EOF])
    if index == 0:
        child.sendline(PASSWORD)
        child.expect(pexpect.EOF)
    child.close()
    assert index == 1, "the password was asked for first"
    assert child.exitstatus == 69 and "locked" in child.before
    assert sign_ins(double) == 1  # the first sign-in only


def test_a_profile_without_a_username_asks_for_one_on_a_terminal(cog, bus, double):
    configure_on_double(cog, double.url)  # no --username
    cog.remember_secret(PASSWORD)
    double.add_user(USER, PASSWORD)
    shown = on_terminal(cog, ["sign-in"], ("Username: ", USER), ("Password for erin@example.com: ", PASSWORD))
    assert f"Signed in as {USER}" in shown and stored(bus, "refresh")
    # Without a terminal it stays an error naming the ways to give one, and nothing is sent.
    asked = len(double.requests())
    result = no_terminal(cog, "sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert result.returncode == 64 and "--username" in result.stderr and "configure --username" in result.stderr
    assert len(result.stderr.splitlines()) == 1 and double.requests(since=asked) == []


def test_a_password_prompt_appears_only_once_echo_is_off(cog, bus, profile, tmp_path):
    """What is typed (or pasted) the moment "Password for" shows is neither
    echoed nor thrown away: the terminal is made silent (TCSAFLUSH, which
    flushes what was typed before) before the prompt is written. Written
    first, the prompt raced the switch, whose flush dropped a line sent
    at once and left the command waiting; a loaded machine showed it. The
    order is read from the system calls (strace), not from timing."""
    profile.add_user(USER, PASSWORD)
    trace = tmp_path / "trace"
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn("strace", ["-f", "-qq", "-e", "trace=ioctl,write", "-e", "signal=none", "-o", str(trace),
                                     cog.binary, "sign-in"], env=cog.env, encoding="utf-8", timeout=30)
    child.expect("Password for erin@example.com: ")
    child.sendline(PASSWORD)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert PASSWORD not in child.before
    calls = trace.read_text().splitlines()
    silenced = next(i for i, line in enumerate(calls) if "TCSETSF" in line)
    prompted = next(i for i, line in enumerate(calls) if "Password for erin" in line)
    assert silenced < prompted, "\n".join(calls[min(silenced, prompted):max(silenced, prompted) + 1])
    assert stored(bus, "refresh")
