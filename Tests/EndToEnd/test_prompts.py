"""Prompts that forgive: a mistyped code on a terminal is asked again (the
same prompt, up to three tries) and costs no new sign-in, email or password;
piped input that a prompt does not read is named; a locked keyring is said
before the password is asked for; Ctrl-C and Ctrl-D at any prompt end the
command on a line of its own, and are no answer. On a pseudo-terminal,
against the Cognito test double."""
import hashlib
import re
import signal
import time

import pyotp
import pytest

from soft_authenticator import SoftAuthenticator
from support import all_stored, configure_on_double, lock_collection, no_terminal, on_terminal, stored

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


# --- #63: a refused answer asked again; Ctrl-C and Ctrl-D at any prompt ---------------------------
#
# A person at the terminal whose code Cognito refuses (CodeMismatchException)
# is asked again in the same Cognito session: the code was sent, the
# password typed, and the session takes another answer, as Cognito's does.
# Ctrl-C and Ctrl-D end the command where they are typed, on a new line,
# and are never an answer: nothing is sent after them, nothing stored.

WRONG_CODE = r"cog-cred: Cognito says the code is incorrect; enter it again \(2 of 3\)\.\r\n"
CTRL_C = "cog-cred: cancelled at the prompt (Ctrl-C)"
CTRL_D = "cog-cred: error: cancelled at the prompt (end of input, Ctrl-D)"
EMAIL_PROMPT = r"Enter the code sent by email to e\*\*\*@e\*\*\*: "
CHOICE_PROMPT = r"Sign in with: 1\) password  2\) srp  3\) email-otp  4\) sms-otp\? "
PIN = "246813"
RP = "auth.cog-cred.test"


def digest(code):
    """What the double records of a code sent (endpoint.code_digest)."""
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def digests(double, challenge):
    """The code digests of each RespondToAuthChallenge `challenge` (or
    VerifySoftwareToken, named so), one list a request."""
    if challenge == "VerifySoftwareToken":
        return [r.get("code_digests") for r in double.requests() if r.get("action") == challenge]
    return [r.get("code_digests") for r in double.requests()
            if r.get("action") == "RespondToAuthChallenge" and r.get("challenge") == challenge]


def not_the_code(*right):
    """Six digits that are none of `right` (the codes Cognito would take)."""
    return next(code for code in (d * 6 for d in "0123456789") if code not in right)


def wrong_totp(secret):
    """A code the authenticator (`secret`, or its pyotp.TOTP) shows at no
    time near now: Cognito takes one step of drift either way, and the test
    may run into the next steps."""
    totp = secret if isinstance(secret, pyotp.TOTP) else pyotp.TOTP(secret)
    now = time.time()
    return not_the_code(*(totp.at(now + 30 * step) for step in range(-2, 4)))


def at_the_code_prompt(cog, profile):
    """sign-in on a terminal for a user with an authenticator app, the
    password given, waiting at the code prompt."""
    profile.add_totp_user(USER, PASSWORD)
    pexpect, child = spawn(cog, ["sign-in"])
    child.expect("Password for")
    child.sendline(PASSWORD)
    child.expect_exact(CODE_PROMPT)
    return pexpect, child


def the_apps_secret(cog, child):
    """The new authenticator's secret, read from the otpauth:// URI shown on
    the terminal, once its first code is asked for."""
    child.expect(r"otpauth://totp/\S+")
    secret = re.search(r"secret=([A-Z2-7]+)", child.after).group(1)
    cog.remember_secret(secret)
    child.expect("Enter the code the app shows: ")
    return secret


def ended(pexpect, child):
    """What the command wrote after the last thing matched, once it has ended."""
    child.expect(pexpect.EOF)
    child.close()
    return child.before


def on_its_own_line(shown, message):
    """`shown` (what followed a prompt) is a new line, then `message`: the
    cursor was taken off the prompt's line first. A ^C the terminal echoes
    itself (ECHOCTL, with echo on) is the terminal's, not the command's."""
    return shown.replace("^C", "") == "\r\n" + message + "\r\n"


@pytest.fixture
def choice(cog, double):
    """The default profile signing in by choice (USER_AUTH), whose user has an
    email address and a phone number: password, srp, email-otp and sms-otp
    are the pool's choices for them."""
    configure_on_double(cog, double.url, "--username", USER, "--auth-flow", "choice")
    cog.remember_secret(PASSWORD)
    double.configure(allowed_first_auth_factors=["PASSWORD", "EMAIL_OTP", "SMS_OTP"])
    double.admin("users", {"username": USER, "password": PASSWORD,
                           "attributes": {"email": USER, "phone_number": "+15555550123"}})
    return double


def test_a_wrong_authenticator_code_is_asked_again_in_the_same_session(cog, bus, profile):
    """Cognito refuses the code; its session takes another, so the prompt
    comes back and the right code signs in: no second sign-in, no second
    password."""
    totp = profile.add_totp_user(USER, PASSWORD)
    wrong = wrong_totp(totp)
    right = {}

    def now():
        right["code"] = totp.now()
        return right["code"]

    shown = on_terminal(cog, ["sign-in"], ("Password for erin@example.com: ", PASSWORD), (CODE_PROMPT, wrong),
                        (WRONG_CODE + CODE_PROMPT, now))
    assert "Signed in as" in shown and "Password for" not in shown and stored(bus, "refresh")
    assert sign_ins(profile) == 1
    assert profile.calls("RespondToAuthChallenge:SOFTWARE_TOKEN_MFA") == 2
    # Two answers, each the code typed: the wrong one, then the right one.
    assert digests(profile, "SOFTWARE_TOKEN_MFA") == [[digest(wrong)], [digest(right["code"])]]


def test_a_wrong_emailed_sign_in_code_is_asked_again_without_a_new_email(cog, bus, choice):
    """An emailed code as the first factor: a typo of it costs no new sign-in
    and no new email; the code that came is still the one to type."""
    pexpect, child = spawn(cog, ["sign-in", "--method", "email-otp"])
    child.expect(EMAIL_PROMPT)
    sent = choice.codes(USER)["email"]
    wrong = not_the_code(sent)
    child.sendline(wrong)
    child.expect(WRONG_CODE + EMAIL_PROMPT)
    child.sendline(sent)
    shown = ended(pexpect, child)
    assert child.exitstatus == 0, shown
    assert "Signed in as" in shown and stored(bus, "refresh")
    assert "Password" not in shown
    assert choice.codes(USER)["email"] == sent  # no second email
    assert choice.sign_in_steps() == ["InitiateAuth:USER_AUTH", "RespondToAuthChallenge:EMAIL_OTP",
                                      "RespondToAuthChallenge:EMAIL_OTP"]
    assert digests(choice, "EMAIL_OTP") == [[digest(wrong)], [digest(sent)]]


def test_a_choice_that_is_not_one_is_asked_again_and_three_end_it_65(cog, bus, choice):
    pexpect, child = spawn(cog, ["sign-in"])
    child.expect(CHOICE_PROMPT)
    child.sendline("9")
    child.expect(r"'9' is not one of the choices; try again \(2 of 3\)\.\r\n" + CHOICE_PROMPT)
    child.sendline("3")
    child.expect(EMAIL_PROMPT)
    child.sendline(choice.codes(USER)["email"])
    shown = ended(pexpect, child)
    assert child.exitstatus == 0, shown
    assert stored(bus, "refresh")
    # The choice Cognito was sent is the valid one, once.
    steps = [r for r in choice.requests() if r.get("challenge") == "SELECT_CHALLENGE"]
    assert [r["answer"] for r in steps] == ["EMAIL_OTP"]

    cog.ok("sign-out", "--local")
    asked = len(choice.requests())
    pexpect, child = spawn(cog, ["sign-in"])
    for typed, attempt in (("9", None), ("0", 2), ("pasword", 3)):
        if attempt:
            child.expect(rf"try again \({attempt} of 3\)\.\r\n" + CHOICE_PROMPT)
        else:
            child.expect(CHOICE_PROMPT)
        child.sendline(typed)
    shown = ended(pexpect, child)
    assert child.exitstatus == 65, shown
    assert "'pasword' is not one of the choices" in shown and "try again" not in shown
    assert not re.search(CHOICE_PROMPT, shown)  # no fourth question
    # Cognito heard of the sign-in (it lists the choices), never of an answer.
    assert choice.sign_in_steps(since=asked) == ["InitiateAuth:USER_AUTH"]
    assert stored(bus, "refresh") is None


def test_a_new_password_the_policy_refuses_is_asked_again_with_its_words(cog, bus, profile):
    profile.admin("users", {"username": USER, "password": PASSWORD, "force_change_password": True})
    refused, chosen = "no-uppercase-1", "New-Prompt-Password-2"
    cog.remember_secret(refused, chosen)
    pexpect, child = spawn(cog, ["sign-in"])
    child.expect("Password for erin@example.com: ")
    child.sendline(PASSWORD)
    child.expect("Cognito requires a new password for erin@example.com")
    for typed in (refused, chosen):
        child.expect("New password: ")
        child.sendline(typed)
        child.expect("Repeat it: ")
        child.sendline(typed)
        if typed == refused:
            child.expect(re.escape("cog-cred: Cognito refuses the new password (Password did not conform with policy: "
                                   "Password must have uppercase characters); choose another (2 of 3).") + r"\r\n")
    shown = ended(pexpect, child)
    assert child.exitstatus == 0, shown
    assert "Signed in as" in shown and stored(bus, "refresh")
    assert sign_ins(profile) == 1 and profile.calls("RespondToAuthChallenge:NEW_PASSWORD_REQUIRED") == 2
    # The second one is the password now.
    cog.ok("sign-out", "--local")
    cog.ok("sign-in", "--password-stdin", input=chosen + "\n")


def test_a_wrong_first_code_of_an_authenticator_set_up_at_sign_in_is_asked_again(cog, bus, profile):
    """The pool requires an authenticator (MFA_SETUP): a wrong first code is
    verified again in the same session; the app, set up already, is not
    shown again."""
    profile.admin("users", {"username": USER, "password": PASSWORD, "mfa": "setup"})
    pexpect, child = spawn(cog, ["sign-in"])
    child.expect("Password for")
    child.sendline(PASSWORD)
    secret = the_apps_secret(cog, child)
    wrong = wrong_totp(secret)
    child.sendline(wrong)
    child.expect(WRONG_CODE + r"Enter the code (the app shows|from your authenticator app): ")
    right = pyotp.TOTP(secret).now()
    child.sendline(right)
    shown = ended(pexpect, child)
    assert child.exitstatus == 0, shown
    assert "otpauth://" not in shown and stored(bus, "refresh")
    assert profile.user(USER)["totp_secret"] == secret
    assert sign_ins(profile) == 1 and profile.calls("AssociateSoftwareToken") == 1
    assert digests(profile, "VerifySoftwareToken") == [[digest(wrong)], [digest(right)]]


def test_a_wrong_first_code_of_mfa_enable_totp_is_asked_again(cog, bus, profile):
    """`mfa enable totp` on a terminal: Cognito keeps the association after a
    wrong code (VerifySoftwareToken takes another), so a typo costs no new
    secret, and the app need not be set up again."""
    profile.add_user(USER, PASSWORD)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    pexpect, child = spawn(cog, ["mfa", "enable", "totp"])
    secret = the_apps_secret(cog, child)
    wrong = wrong_totp(secret)
    child.sendline(wrong)
    index = child.expect([WRONG_CODE + "Enter the code the app shows: ", pexpect.EOF])
    assert index == 0, f"not asked again: {child.before!r}"
    right = pyotp.TOTP(secret).now()
    child.sendline(right)
    shown = ended(pexpect, child)
    assert child.exitstatus == 0, shown
    assert "Enabled totp MFA" in shown and "otpauth://" not in shown
    assert profile.calls("AssociateSoftwareToken") == 1
    assert digests(profile, "VerifySoftwareToken") == [[digest(wrong)], [digest(right)]]
    assert profile.user(USER)["totp_secret"] == secret


def test_ctrl_c_at_the_code_prompt_ends_on_a_new_line_and_sends_nothing(cog, bus, profile):
    pexpect, child = at_the_code_prompt(cog, profile)
    child.sendintr()
    shown = ended(pexpect, child)
    assert child.signalstatus == signal.SIGINT, (child.exitstatus, shown)
    assert on_its_own_line(shown, CTRL_C), repr(shown)
    # Nothing was sent after the password's proof, which came before the prompt.
    assert profile.sign_in_steps() == ["InitiateAuth:USER_SRP_AUTH", "RespondToAuthChallenge:PASSWORD_VERIFIER"]
    assert all_stored(bus) == {"access": None, "id": None, "refresh": None}


def test_ctrl_d_at_the_password_prompt_ends_it_1_before_any_sign_in(cog, bus, profile):
    profile.add_user(USER, PASSWORD)
    pexpect, child = spawn(cog, ["sign-in"])
    child.expect_exact("Password for erin@example.com: ")
    child.sendeof()
    shown = ended(pexpect, child)
    assert child.exitstatus == 1, shown
    # The message on a line of its own, not after the prompt.
    assert on_its_own_line(shown, CTRL_D), repr(shown)
    assert profile.requests() == [] and stored(bus, "refresh") is None


def test_ctrl_d_at_the_code_prompt_ends_it_1_and_is_no_answer(cog, bus, profile):
    pexpect, child = at_the_code_prompt(cog, profile)
    child.sendeof()
    shown = ended(pexpect, child)
    assert child.exitstatus == 1, shown
    assert on_its_own_line(shown, CTRL_D), repr(shown)
    assert "try again" not in shown
    assert profile.sign_in_steps() == ["InitiateAuth:USER_SRP_AUTH", "RespondToAuthChallenge:PASSWORD_VERIFIER"]
    assert all_stored(bus) == {"access": None, "id": None, "refresh": None}


def test_ctrl_d_at_configures_first_question_ends_it_and_changes_nothing(cog, bus, profile):
    """One Ctrl-D is enough: not a blank answer that moves on to the next question."""
    before = cog.config_file.read_bytes()
    stamp = cog.config_file.stat().st_mtime_ns
    pexpect, child = spawn(cog, ["configure", "-p", "new"])
    child.expect_exact("User pool id: ")
    child.sendeof()
    shown = ended(pexpect, child)
    assert child.exitstatus == 1, shown
    assert on_its_own_line(shown, CTRL_D), repr(shown)
    assert cog.config_file.read_bytes() == before and cog.config_file.stat().st_mtime_ns == stamp
    # The same for the profile that exists, whose settings are offered.
    pexpect, child = spawn(cog, ["configure"])
    child.expect(r"User pool id \[us-east-1_double\]: ")
    child.sendeof()
    shown = ended(pexpect, child)
    assert child.exitstatus == 1 and "App client id" not in shown, shown
    assert cog.config_file.read_bytes() == before and cog.config_file.stat().st_mtime_ns == stamp


def test_ctrl_c_and_ctrl_d_at_the_choice_of_sign_in(cog, bus, choice):
    pexpect, child = spawn(cog, ["sign-in"])
    child.expect(CHOICE_PROMPT)
    child.sendintr()
    shown = ended(pexpect, child)
    assert child.signalstatus == signal.SIGINT, (child.exitstatus, shown)
    assert on_its_own_line(shown, CTRL_C), repr(shown)

    pexpect, child = spawn(cog, ["sign-in"])
    child.expect(CHOICE_PROMPT)
    child.sendeof()
    shown = ended(pexpect, child)
    assert child.exitstatus == 1, shown
    assert on_its_own_line(shown, CTRL_D), repr(shown)
    assert "not one of the choices" not in shown
    # Each told Cognito of a sign-in (it lists the choices), and never chose.
    assert choice.sign_in_steps() == ["InitiateAuth:USER_AUTH"] * 2
    assert stored(bus, "refresh") is None


def test_ctrl_d_at_the_remember_device_question_keeps_the_sign_in(cog, bus, profile):
    """The question comes once signed in, after ConfirmDevice (whose answer
    says the user chooses): Ctrl-D ends the command there; the sign-in is
    kept, the device not remembered (no UpdateDeviceStatus)."""
    totp = profile.add_totp_user(USER, PASSWORD)
    profile.configure(device_tracking="opt_in")
    question = "Remember this device ('desk') so that signing in here skips MFA? [y/N] "
    pexpect, child = spawn(cog, ["sign-in", "--device-name", "desk"])
    child.expect("Password for")
    child.sendline(PASSWORD)
    child.expect_exact(CODE_PROMPT)
    child.sendline(totp.now())
    child.expect_exact(question)
    child.sendeof()
    shown = ended(pexpect, child)
    assert child.exitstatus == 1, shown
    assert on_its_own_line(shown, CTRL_D + ": signed in; this machine is not remembered"), repr(shown)
    assert stored(bus, "refresh")
    assert profile.calls("ConfirmDevice") == 1 and profile.calls("UpdateDeviceStatus") == 0
    [device] = profile.admin("devices?username=" + USER)["devices"]
    assert device["confirmed"] and not device["remembered"]


@pytest.fixture
def pin_key(cog, bus, double, tmp_path):
    """USER's passkey on a security key with a PIN, USER signed out; the
    profile signs in by choice, with the key's relying party."""
    double.configure(allowed_first_auth_factors=["PASSWORD", "WEB_AUTHN"], webauthn_rp_id=RP)
    double.add_user(USER, PASSWORD)
    cog.remember_secret(PASSWORD, PIN)
    configure_on_double(cog, double.url, "--username", USER, "--auth-flow", "choice", "--passkey-rp-id", RP)
    cog.ok("sign-in", "--method", "password", "--password-stdin", input=PASSWORD + "\n")
    with SoftAuthenticator(tmp_path, pin=PIN) as key:
        cog.ok("passkey", "add", "--authenticator", key.device, "--pin-stdin", input=PIN + "\n")
        cog.ok("sign-out", "--local")
        yield key


def test_ctrl_c_and_ctrl_d_at_the_security_keys_pin(cog, bus, double, pin_key):
    """Neither is a PIN: the key is never asked to check one (no try of its
    eight spent), nothing answers Cognito's challenge."""
    before = len(pin_key.commands)
    prompt = r"PIN for the security key \(8 tries left\): "
    pexpect, child = spawn(cog, ["sign-in", "--method", "passkey", "--authenticator", pin_key.device])
    child.expect(prompt)
    child.sendintr()
    shown = ended(pexpect, child)
    assert child.signalstatus == signal.SIGINT, (child.exitstatus, shown)
    assert on_its_own_line(shown, CTRL_C), repr(shown)

    pexpect, child = spawn(cog, ["sign-in", "--method", "passkey", "--authenticator", pin_key.device])
    child.expect(prompt)
    child.sendeof()
    shown = ended(pexpect, child)
    assert child.exitstatus == 1, shown
    assert on_its_own_line(shown, CTRL_D), repr(shown)
    assert "Touch" not in shown
    # The key was asked how many tries are left, and nothing more.
    asked = [c for c in pin_key.commands[before:] if c != "GetInfo"]
    assert asked == ["ClientPIN.getRetries"] * 2, asked
    assert pin_key.pin_retries == 8
    assert double.calls("RespondToAuthChallenge:WEB_AUTHN") == 0
    assert all_stored(bus) == {"access": None, "id": None, "refresh": None}


def test_an_answer_that_ends_the_session_signs_in_again_without_the_password(cog, bus, profile):
    """custom-srp: a wrong answer fails the pool's session (its trigger
    decides); the sign-in starts over, the password proved again from what
    was typed, and says so."""
    profile.add_user(USER, PASSWORD)
    cog.ok("configure", "--auth-flow", "custom-srp")
    pexpect, child = spawn(cog, ["sign-in"])
    child.expect("Password for erin@example.com: ")
    child.sendline(PASSWORD)
    child.expect(r"question: What is 2 \+ 3\?")
    child.expect("Answer: ")
    child.sendline("4")
    child.expect(re.escape("cog-cred: Cognito ended the sign-in after that answer; signing in again "
                           "(the password is not asked again) (2 of 3).") + r"\r\n")
    child.expect(r"question: What is 2 \+ 3\?")
    child.expect("Answer: ")
    assert "Password for" not in child.before
    child.sendline("5")
    child.expect("question: The code on your badge")
    child.expect("Answer: ")
    child.sendline("424242")
    shown = ended(pexpect, child)
    assert child.exitstatus == 0, shown
    assert "Password for" not in shown and stored(bus, "refresh")
    calls = profile.stats()["calls"]
    assert calls["InitiateAuth:CUSTOM_AUTH"] == 2 and calls["RespondToAuthChallenge:PASSWORD_VERIFIER"] == 2
    assert calls["RespondToAuthChallenge:CUSTOM_CHALLENGE"] == 3


def test_a_code_from_standard_input_or_a_flag_is_sent_once_even_on_a_terminal(cog, bus, profile):
    """A script's code is its one answer: refused, it fails at once (77),
    though a terminal is there to ask on; the next line is never read as
    another try."""
    totp = profile.add_totp_user(USER, PASSWORD)
    wrong = wrong_totp(totp)
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn("/bin/sh", ["-c", 'text=$1; shift; printf %s "$text" | exec "$0" "$@"', cog.binary,
                                      f"{PASSWORD}\n{wrong}\n{totp.now()}\n", "sign-in", "--password-stdin",
                                      "--mfa-code", "-"], env=cog.env, encoding="utf-8", timeout=30)
    shown = ended(pexpect, child)
    assert child.exitstatus == 77 and "code is incorrect" in shown, shown
    assert "try again" not in shown and "enter it again" not in shown and CODE_PROMPT not in shown
    assert digests(profile, "SOFTWARE_TOKEN_MFA") == [[digest(wrong)]]
    # The same from the flag.
    pexpect, child = spawn(cog, ["sign-in", "--mfa-code", wrong])
    child.expect("Password for")
    child.sendline(PASSWORD)
    shown = ended(pexpect, child)
    assert child.exitstatus == 77 and "enter it again" not in shown and CODE_PROMPT not in shown, shown
    assert digests(profile, "SOFTWARE_TOKEN_MFA") == [[digest(wrong)], [digest(wrong)]]
    assert sign_ins(profile) == 2 and stored(bus, "refresh") is None
