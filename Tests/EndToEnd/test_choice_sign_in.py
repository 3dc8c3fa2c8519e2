"""Choice-based sign-in (USER_AUTH) end to end, against the project's Cognito
test double (moto has no USER_AUTH): one-time codes by email or SMS, the
password or SRP as a first factor, the pool's list of choices, and the
challenges that follow.
"""
import json

import pytest

from support import all_stored, configure_on_double, no_terminal, stored

PASSWORD = "Choice-Password-1"
USER = "erin@example.com"
EVERY_FACTOR = ["PASSWORD", "EMAIL_OTP", "SMS_OTP", "WEB_AUTHN"]


@pytest.fixture
def profile(cog, double):
    configure_on_double(cog, double.url, "--username", USER, "--auth-flow", "choice")
    cog.remember_secret(PASSWORD)
    double.configure(allowed_first_auth_factors=EVERY_FACTOR)
    double.admin("users", {"username": USER, "password": PASSWORD,
                           "attributes": {"email": USER, "phone_number": "+15555550123"}})
    return double


def with_code_on_stdin(cog, profile, kind, *args, code=None, first_line=None):
    """sign-in with `--code -` (after `first_line`, a password): the code sent, once it is."""
    return cog.answer_when_asked("sign-in", *args, first_lines=[] if first_line is None else [first_line],
                                 answer=lambda _: code or profile.codes(USER)[kind])


def user_auths(profile):
    """What each InitiateAuth USER_AUTH carried (the double records names, and the choice)."""
    return [r for r in profile.stats()["requests"] if r.get("action") == "InitiateAuth" and r["auth_flow"] == "USER_AUTH"]


@pytest.mark.parametrize("method,kind,where", [("email-otp", "email", "by email to e***@e***"),
                                               ("sms-otp", "sms", "by SMS to +*******0123")])
def test_a_one_time_code_signs_in_without_a_password(cog, bus, profile, method, kind, where):
    status, said, out, err = with_code_on_stdin(cog, profile, kind, "--method", method, "--code", "-")
    assert status == 0, err
    assert f"sent {where}; reading it from standard input" in said
    assert out == "" and stored(bus, "refresh")
    # No password went anywhere: USER_AUTH asked for the method, and nothing else.
    [sent] = user_auths(profile)
    assert sent["parameter_names"] == ["PREFERRED_CHALLENGE", "USERNAME"]
    assert sent["preferred_challenge"] == method.replace("-", "_").upper()


def test_a_wrong_or_spent_code_stores_nothing(cog, bus, profile):
    sent = {}

    def wrong(kind):
        sent["code"] = profile.codes(USER)[kind]
        return "000000" if sent["code"] != "000000" else "111111"

    status, _, _, error = cog.answer_when_asked("sign-in", "--method", "email-otp", "--code", "-",
                                                answer=lambda _: wrong("email"))
    assert status == 77
    # Cognito's own code and message, after what to do.
    assert "code is incorrect" in error and "CodeMismatchException" in error and "Invalid code received" in error
    assert all_stored(bus)["refresh"] is None
    # The code of that sign-in is spent with it: a new sign-in mails a new one.
    status, _, _, err = with_code_on_stdin(cog, profile, "email", "--method", "email-otp", "--code", "-", code=sent["code"])
    assert status == 77 and "CodeMismatchException" in err
    assert all_stored(bus)["refresh"] is None


def test_an_expired_code_says_so(cog, bus, profile):
    profile.configure(session_lifetime=0)
    status, _, _, err = with_code_on_stdin(cog, profile, "email", "--method", "email-otp", "--code", "-")
    assert status == 77 and "sign-in session is over" in err and "session is expired" in err, err
    assert all_stored(bus)["refresh"] is None


def test_the_code_on_a_terminal(cog, bus, profile):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(cog.binary, ["sign-in", "--method", "sms-otp"], env=cog.env, encoding="utf-8", timeout=30)
    child.expect(r"Enter the code sent by SMS to \+\*+0123: ")
    assert "Password" not in child.before
    child.sendline(profile.codes(USER)["sms"])
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert stored(bus, "refresh")


@pytest.mark.parametrize("method", ["password", "srp"])
def test_the_password_as_first_factor(cog, bus, profile, method):
    # configure --method keeps the default; the SRP proof is the real one.
    cog.ok("configure", "--method", method)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert stored(bus, "refresh")
    sent = user_auths(profile)[-1]
    assert sent["preferred_challenge"] == {"password": "PASSWORD", "srp": "PASSWORD_SRP"}[method]
    names = sent["parameter_names"]
    assert ("PASSWORD" in names) == (method == "password") and ("SRP_A" in names) == (method == "srp")
    cog.ok("sign-out", "--local")
    wrong = cog.run("sign-in", "--password-stdin", input="not-" + PASSWORD + "\n")
    assert wrong.returncode == 77 and "NotAuthorizedException" in wrong.stderr
    assert all_stored(bus)["refresh"] is None


@pytest.mark.parametrize("method", ["password", "srp"])
def test_mfa_and_a_new_password_follow_the_password(cog, bus, profile, method):
    totp = profile.add_totp_user(USER, PASSWORD, force_change_password=True, attributes={"email": USER})
    new_password = "Choice-Password-2"
    cog.remember_secret(new_password)
    cog.ok("sign-in", "--method", method, "--password-stdin", "--new-password-stdin",
           "--mfa-code", totp.now(), input=f"{PASSWORD}\n{new_password}\n")
    assert stored(bus, "refresh")
    # Email MFA after the password: the MFA code, not the sign-in code.
    cog.ok("sign-out", "--local")
    profile.admin("users", {"username": USER, "password": PASSWORD, "mfa": "email", "attributes": {"email": USER}})
    status, said, _, err = with_code_on_stdin(cog, profile, "email", "--method", method, "--password-stdin",
                                              "--mfa-code", "-", first_line=PASSWORD)
    assert status == 0, err
    assert "sent by email to e***@e***; reading it from standard input" in said


def test_a_secret_hash_goes_with_every_call(cog, bus, profile):
    profile.configure(client_secret="choice-client-secret")
    cog.remember_secret("choice-client-secret")
    cog.ok("configure", "--client-secret-stdin", input="choice-client-secret\n")
    status, _, _, err = with_code_on_stdin(cog, profile, "email", "--method", "email-otp", "--code", "-")
    assert status == 0, err
    assert "SECRET_HASH" in user_auths(profile)[-1]["parameter_names"]
    steps = [r for r in profile.stats()["requests"] if r.get("action") == "RespondToAuthChallenge"]
    assert "SECRET_HASH" in steps[-1]["parameter_names"]


def test_without_a_method_the_pools_choices(cog, bus, profile):
    pexpect = pytest.importorskip("pexpect")
    profile.admin("users", {"username": USER, "password": PASSWORD, "passkey": True,
                            "attributes": {"email": USER, "phone_number": "+15555550123"}})
    # No terminal: exit 77, naming --method and what the pool offers, a passkey too.
    missing = no_terminal(cog, "sign-in")
    assert missing.returncode == 77, missing.stderr
    assert "--method password|srp|email-otp|sms-otp|passkey" in missing.stderr
    assert all_stored(bus)["refresh"] is None
    # A method the user lacks: what the pool offers instead.
    profile.admin("users", {"username": USER, "password": PASSWORD, "attributes": {"email": USER}})
    lacking = no_terminal(cog, "sign-in", "--method", "sms-otp")
    assert lacking.returncode == 64 and "offers password, srp, email-otp to this user, not sms-otp" in lacking.stderr
    # The profile's default gives way to the pool's list instead.
    cog.ok("configure", "--method", "sms-otp")
    by_default = no_terminal(cog, "sign-in")
    assert by_default.returncode == 77 and "--method password|srp|email-otp" in by_default.stderr, by_default.stderr
    cog.ok("configure", "--method", "")

    # On a terminal: the list, then what the choice needs.
    child = pexpect.spawn(cog.binary, ["sign-in"], env=cog.env, encoding="utf-8", timeout=30)
    child.expect(r"Sign in with: 1\) password  2\) srp  3\) email-otp\? ")
    child.sendline("3")
    child.expect(r"Enter the code sent by email to e\*\*\*@e\*\*\*: ")
    child.sendline(profile.codes(USER)["email"])
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert stored(bus, "refresh")
    steps = [r for r in profile.stats()["requests"] if r.get("action") == "RespondToAuthChallenge"]
    assert steps[-2]["challenge"] == "SELECT_CHALLENGE" and steps[-2]["answer"] == "EMAIL_OTP"
    assert steps[-2]["parameter_names"] == ["ANSWER", "USERNAME"]


def test_the_password_is_asked_for_only_when_the_choice_needs_it(cog, bus, profile):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(cog.binary, ["sign-in"], env=cog.env, encoding="utf-8", timeout=30)
    child.expect(r"Sign in with: .*\? ")
    child.sendline("password")
    child.expect("Password for ")
    child.sendline(PASSWORD)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert stored(bus, "refresh")


def test_method_and_flow_are_checked(cog, bus, profile):
    bad = cog.run("sign-in", "--method", "fingerprint")
    assert bad.returncode == 64 and "the value 'fingerprint' is invalid for '--method <method>': it takes email-otp, sms-otp, password, srp or passkey" in bad.stderr
    mixed = cog.run("sign-in", "--method", "email-otp", "--auth-flow", "srp")
    assert mixed.returncode == 64 and "--method goes with --auth-flow choice" in mixed.stderr
    assert cog.run("configure", "--method", "fingerprint").returncode == 64
    shown = json.loads(cog.ok("configure", "--method", "sms-otp").stdout or cog.ok("configure", "--show").stdout)
    assert shown["method"] == "sms-otp" and shown["auth-flow"] == "choice"
    # A method kept for a profile that signs in another way: said so.
    noted = cog.ok("configure", "--auth-flow", "srp")
    assert "--method applies to --auth-flow choice; this profile signs in with srp" in noted.stderr
