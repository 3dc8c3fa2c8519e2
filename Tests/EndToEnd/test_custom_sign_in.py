"""Custom challenges (CUSTOM_AUTH) end to end, against the project's Cognito
test double, which plays a pool's Lambda triggers with scripted rounds (moto
has no custom flow): with no password, and after an SRP proof of it.
"""
import pytest

from support import all_stored, configure_on_double, no_terminal, stored

PASSWORD = "Custom-Password-1"
USER = "erin@example.com"
ANSWERS = "5\n424242\n"  # the double's default rounds: 2 + 3, then the badge code


@pytest.fixture
def profile(cog, double):
    configure_on_double(cog, double.url, "--username", USER, "--auth-flow", "custom")
    cog.remember_secret(PASSWORD)
    double.add_user(USER, PASSWORD)
    return double


def test_every_round_is_shown_and_answered_from_standard_input(cog, bus, profile):
    result = cog.run("sign-in", "--answer", "-", input=ANSWERS)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and stored(bus, "refresh")
    # Each round's public parameters, one `key: value` a line, not the names it is addressed by.
    assert "  question: What is 2 + 3?\n" in result.stderr
    assert "  hint: six digits\n  question: The code on your badge\n" in result.stderr
    assert "USER_ID_FOR_SRP" not in result.stderr and "Password" not in result.stderr
    assert profile.stats()["calls"]["RespondToAuthChallenge:CUSTOM_CHALLENGE"] == 2
    # The double records no answer of a custom challenge: they may be secrets.
    steps = [r for r in profile.stats()["requests"] if r.get("challenge") == "CUSTOM_CHALLENGE"]
    assert steps and all("answer" not in r for r in steps)


def test_answers_on_a_terminal(cog, bus, profile):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(cog.binary, ["sign-in"], env=cog.env, encoding="utf-8", timeout=30)
    child.expect("question: What is 2 \\+ 3\\?")
    child.expect("Answer: ")
    child.sendline("5")
    child.expect("question: The code on your badge")
    child.expect("Answer: ")
    child.sendline("424242")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert stored(bus, "refresh")


def test_without_a_terminal_or_answers_it_names_the_flag(cog, bus, profile):
    result = no_terminal(cog, "sign-in")
    assert result.returncode == 77 and "--answer -" in result.stderr, result.stderr
    assert all_stored(bus)["refresh"] is None


def test_a_wrong_answer_stores_nothing(cog, bus, profile):
    result = cog.run("sign-in", "--answer", "-", input="5\n111111\n")
    assert result.returncode == 77 and "NotAuthorizedException" in result.stderr, result.stderr
    assert all_stored(bus)["refresh"] is None


def test_an_answer_never_goes_on_the_command_line(cog, bus, profile):
    result = cog.run("sign-in", "--answer", "5")
    assert result.returncode == 64 and "--answer takes '-'" in result.stderr


def test_the_password_by_srp_first(cog, bus, profile):
    cog.ok("configure", "--auth-flow", "custom-srp")
    result = cog.run("sign-in", "--password-stdin", "--answer", "-", input=PASSWORD + "\n" + ANSWERS)
    assert result.returncode == 0, result.stderr
    assert stored(bus, "refresh")
    calls = profile.stats()["calls"]
    assert calls["InitiateAuth:CUSTOM_AUTH"] == 1 and calls["RespondToAuthChallenge:PASSWORD_VERIFIER"] == 1
    cog.ok("sign-out", "--local")
    wrong = cog.run("sign-in", "--password-stdin", "--answer", "-", input="not-" + PASSWORD + "\n" + ANSWERS)
    assert wrong.returncode == 77 and "NotAuthorizedException" in wrong.stderr
    assert all_stored(bus)["refresh"] is None


def test_a_challenge_cannot_write_to_the_terminal(cog, bus, profile):
    profile.configure(custom_challenges=[{"parameters": {"question": "\x1b]0;pwned\x07\x1b[2Jwhich?\u202e"},
                                          "answer": "ok"}])
    result = cog.run("sign-in", "--answer", "-", input="ok\n")
    assert result.returncode == 0, result.stderr
    assert not any(c in result.stderr for c in "\x1b\x07\u202e"), repr(result.stderr)
    assert "which?" in result.stderr
