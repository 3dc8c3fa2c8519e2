"""`cog-cred mfa`: a signed-in user's own MFA settings, end to end against the
project's Cognito test double (moto has no SetUserMFAPreference worth the
name): shown, an authenticator set up, methods enabled, preferred and
disabled, and Cognito's refusals passed on.
"""
import json
import re
import subprocess

import pyotp
import pytest

from support import add_authenticator, configure_on_double

PASSWORD = "Mfa-Password-1"
USER = "erin@example.com"
NONE = {"enabled": False, "preferred": False}


@pytest.fixture
def profile(cog, bus, double):
    configure_on_double(cog, double.url, "--username", USER, "--auth-flow", "password")
    cog.remember_secret(PASSWORD)
    double.admin("users", {"username": USER, "password": PASSWORD,
                           "attributes": {"email": USER, "phone_number": "+15555550123"}})
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    return double


def shown(cog):
    return json.loads(cog.ok("mfa", "--json").stdout)


def test_without_a_terminal_the_seed_is_shown_nowhere_unless_asked(cog, bus, profile):
    proc = subprocess.Popen([cog.binary, "mfa", "enable", "totp", "--code", "-"], env=cog.env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    out, err = proc.communicate("123456\n", timeout=60)
    secret = profile.user(USER).get("totp_secret") or profile.user(USER).get("pending_totp_secret")
    assert "--print-uri" in err  # says where the secret can be had
    assert "otpauth://totp/" not in out + err and (not secret or secret not in out + err)


def test_on_a_terminal_the_seed_skips_a_redirected_stderr(cog, bus, profile, tmp_path):
    """stderr a file (a CI log): the URI and QR code go to the terminal only."""
    pexpect = pytest.importorskip("pexpect")
    log = tmp_path / "stderr.log"
    child = pexpect.spawn("/bin/sh", ["-c", f'exec "$0" mfa enable totp 2>"$1"', cog.binary, str(log)],
                          env=cog.env, encoding="utf-8", timeout=30)
    child.expect(r"otpauth://totp/\S+")
    secret = re.search(r"secret=([A-Z2-7]+)", child.after).group(1)
    child.expect("Enter the code the app shows: ")
    child.sendline(pyotp.TOTP(secret).now())
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    written = log.read_text()
    assert "Enabled totp MFA" in written  # stderr was used, and holds no secret
    assert secret not in written and "otpauth://totp/" not in written


def test_nothing_enabled_at_first(cog, bus, profile):
    assert shown(cog) == {"totp": NONE, "sms": NONE, "email": NONE}
    assert cog.ok("mfa").stdout == "totp   not enabled\nsms    not enabled\nemail  not enabled\n"
    assert cog.ok("mfa", "show").stdout == cog.ok("mfa").stdout


def test_an_authenticator_set_up_enabled_and_asked_at_sign_in(cog, bus, profile):
    status, secret, err = add_authenticator(cog)
    assert status == 0, err
    assert "Enabled totp MFA" in err
    assert shown(cog)["totp"] == {"enabled": True, "preferred": False}
    assert profile.user(USER)["totp_secret"] == secret
    cog.ok("sign-out", "--local")
    asked = cog.run("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert asked.returncode == 77 and "--mfa-code" in asked.stderr  # the app's code, now
    cog.ok("sign-in", "--password-stdin", "--mfa-code", pyotp.TOTP(secret).now(), input=PASSWORD + "\n")


def test_an_authenticator_set_up_on_a_terminal(cog, bus, profile):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(cog.binary, ["mfa", "enable", "totp"], env=cog.env, encoding="utf-8", timeout=30)
    child.expect(r"otpauth://totp/\S+")
    secret = re.search(r"secret=([A-Z2-7]+)", child.after).group(1)
    child.expect("Enter the code the app shows: ")
    child.sendline(pyotp.TOTP(secret).now())
    child.expect("Enabled totp MFA")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert shown(cog)["totp"] == {"enabled": True, "preferred": False}


def test_a_wrong_first_code_enables_nothing(cog, bus, profile):
    status, secret, err = add_authenticator(cog, code_for=lambda s: "000000" if pyotp.TOTP(s).now() != "000000" else "111111")
    # A code Cognito refuses is a rejected credential (77), as in every command;
    # read from standard input, it is sent once and not asked again.
    assert status == 77 and "EnableSoftwareTokenMFAException" in err and "code is incorrect" in err, err
    assert profile.calls("VerifySoftwareToken") == 1
    assert shown(cog)["totp"] == NONE


def test_a_malformed_first_code_is_65_and_not_sent(cog, bus, profile):
    status, secret, err = add_authenticator(cog, code_for=lambda s: "12345")
    assert status == 65 and "exactly 6 digits" in err, err
    assert profile.calls("VerifySoftwareToken") == 0


def test_without_a_terminal_or_a_code_the_error_names_print_uri(cog, bus, profile):
    result = subprocess.run([cog.binary, "mfa", "enable", "totp"], env=cog.env, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, start_new_session=True, timeout=60)
    assert result.returncode == 77 and result.stdout == "", result.stderr
    [line] = result.stderr.splitlines()
    assert "--print-uri" in line and "--code -" in line, line
    assert profile.calls("VerifySoftwareToken") == 0 and shown(cog)["totp"] == NONE
    # A code without --print-uri cannot be made from this secret, never shown: refused, not sent.
    coded = subprocess.run([cog.binary, "mfa", "enable", "totp", "--code", "-"], env=cog.env, input="123456\n",
                           capture_output=True, text=True, start_new_session=True, timeout=60)
    assert coded.returncode == 77 and coded.stdout == "", coded.stderr
    [line] = coded.stderr.splitlines()
    assert "--print-uri" in line and "--code -" not in line, line
    assert profile.calls("VerifySoftwareToken") == 0 and shown(cog)["totp"] == NONE


def test_a_wrong_mfa_code_at_sign_in_read_from_stdin_is_77_and_not_asked_again(cog, bus, profile):
    status, secret, err = add_authenticator(cog)
    assert status == 0, err
    cog.ok("sign-out", "--local")
    wrong = "000000" if pyotp.TOTP(secret).now() != "000000" else "111111"
    before = profile.calls("RespondToAuthChallenge:SOFTWARE_TOKEN_MFA")
    result = cog.run("sign-in", "--password-stdin", "--mfa-code", "-", input=f"{PASSWORD}\n{wrong}\n{wrong}\n")
    assert result.returncode == 77 and "code is incorrect" in result.stderr, result.stderr
    assert profile.calls("RespondToAuthChallenge:SOFTWARE_TOKEN_MFA") == before + 1
    assert result.stderr.count("reading it from standard input") == 1


def test_disabling_a_method_that_was_never_enabled_says_so(cog, bus, profile):
    result = cog.ok("mfa", "disable", "sms")
    assert result.stderr == "sms MFA was not enabled; nothing changed.\n" and result.stdout == ""
    assert profile.calls("SetUserMFAPreference") == 0
    cog.ok("mfa", "enable", "email")
    disabled = cog.ok("mfa", "disable", "email")
    assert disabled.stderr == "Disabled email MFA.\n"
    assert profile.calls("SetUserMFAPreference") == 2 and shown(cog)["email"] == NONE


def test_enable_prefer_and_disable(cog, bus, profile):
    cog.ok("mfa", "enable", "email")
    cog.ok("mfa", "enable", "sms")
    assert shown(cog) == {"totp": NONE, "sms": {"enabled": True, "preferred": False},
                          "email": {"enabled": True, "preferred": False}}
    prefer = cog.ok("mfa", "prefer", "email")
    assert "Sign-in now asks for email MFA" in prefer.stderr and prefer.stdout == ""
    assert cog.ok("mfa").stdout == "totp   not enabled\nsms    enabled\nemail  enabled, preferred\n"
    # The preferred method is what sign-in asks for: an emailed code, no choice.
    cog.ok("sign-out", "--local")
    before = len(profile.requests())
    status, said, _, err = cog.answer_when_asked("sign-in", "--password-stdin", "--mfa-code", "-", first_lines=[PASSWORD],
                                                 answer=lambda _: profile.codes(USER)["email"])
    assert status == 0 and "sent by email" in said, err
    assert profile.sign_in_steps(since=before) == ["InitiateAuth:USER_PASSWORD_AUTH", "RespondToAuthChallenge:EMAIL_OTP"]
    # Enabling again keeps the preference; disabling takes it away.
    cog.ok("mfa", "enable", "email")
    assert shown(cog)["email"] == {"enabled": True, "preferred": True}
    cog.ok("mfa", "disable", "email")
    cog.ok("mfa", "disable", "sms")
    assert shown(cog) == {"totp": NONE, "sms": NONE, "email": NONE}
    cog.ok("sign-out", "--local")
    before = len(profile.requests())
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert profile.sign_in_steps(since=before) == ["InitiateAuth:USER_PASSWORD_AUTH"]  # no MFA asked


def test_cognitos_refusals_with_its_code_and_message(cog, bus, profile):
    profile.configure(email_mfa=False)
    refused = cog.run("mfa", "enable", "email")
    assert refused.returncode != 0 and refused.stdout == ""
    assert "InvalidParameterException" in refused.stderr and "Email MFA is not enabled for this user pool" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
    profile.admin("users", {"username": USER, "password": PASSWORD, "attributes": {"email": USER}})
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    no_phone = cog.run("mfa", "prefer", "sms")
    assert "User does not have delivery config set to turn on SMS_MFA" in no_phone.stderr
    assert shown(cog) == {"totp": NONE, "sms": NONE, "email": NONE}


def test_a_pool_without_email_mfa_does_not_ask_for_it(cog, bus, profile):
    cog.ok("mfa", "enable", "email")
    profile.configure(email_mfa=False)
    cog.ok("sign-out", "--local")
    before = len(profile.requests())
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert profile.sign_in_steps(since=before) == ["InitiateAuth:USER_PASSWORD_AUTH"]  # no MFA asked


def test_a_stale_access_token_is_refreshed_first(cog, bus, profile):
    profile.configure(issued_at_offset=-7200)
    cog.ok("refresh")
    profile.configure(issued_at_offset=0)
    before = profile.stats()["calls"].get("GetTokensFromRefreshToken", 0)
    assert shown(cog) == {"totp": NONE, "sms": NONE, "email": NONE}
    assert profile.stats()["calls"]["GetTokensFromRefreshToken"] == before + 1


def test_not_signed_in_or_a_bad_method(cog, bus, profile):
    cog.ok("sign-out", "--local")
    result = cog.run("mfa")
    assert result.returncode == 77 and "not signed in" in result.stderr
    bad = cog.run("mfa", "enable", "carrier-pigeon")
    assert bad.returncode == 64 and "it takes totp, sms or email" in bad.stderr
