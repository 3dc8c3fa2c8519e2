"""The account's life from the terminal, end to end.

Codes are checked by the project's Cognito test double (cognito_double/),
which issues a real code per user, readable by the test as if from the email,
rejects wrong ones, expires them and limits resends: moto accepts any code.
moto is used where it is a faithful, independent peer: sign-up, confirmation,
change-password, and its own SECRET_HASH check on refresh.
"""
import base64
import hashlib
import hmac
import json

import pytest

from conftest import boto_client
from support import all_stored, claims, configure_on_double, on_terminal, stored

PASSWORD = "First-Password-1"
NEW_PASSWORD = "Second-Password-2"
EMAIL = "dana@example.com"


@pytest.fixture
def profile(cog, double):
    configure_on_double(cog, double.url)
    cog.remember_secret(PASSWORD, NEW_PASSWORD)
    return double


def test_sign_up_wrong_code_expired_code_resend_confirm_sign_in(cog, bus, profile):
    result = cog.ok("sign-up", "--username", EMAIL, "--password-stdin", "--attribute", "name=Dana",
                    input=PASSWORD + "\n")
    assert "sent by EMAIL to d***@e***" in result.stderr
    assert f"cog-cred confirm-sign-up --username {EMAIL} (it asks for the code)" in result.stderr
    assert result.stdout == ""
    user = profile.user(EMAIL)
    assert user["confirmed"] is False
    assert user["attributes"]["email"] == EMAIL  # the username went out as the email attribute
    assert user["attributes"]["name"] == "Dana"

    code = profile.codes(EMAIL)["signup"]
    wrong = "000000" if code != "000000" else "111111"
    # A code Cognito refuses is a rejected credential (77), as in every command.
    mismatch = cog.run("confirm-sign-up", "--username", EMAIL, "--code", wrong)
    assert mismatch.returncode == 77
    assert "the code is incorrect" in mismatch.stderr
    # Read from standard input, a wrong code is sent once and not asked again.
    calls = profile.stats()["calls"].get("ConfirmSignUp", 0)
    piped = cog.run("confirm-sign-up", "--username", EMAIL, "--code", "-", input=wrong + "\n")
    assert piped.returncode == 77 and "the code is incorrect" in piped.stderr
    assert piped.stderr.count("\n") == 1
    assert profile.stats()["calls"]["ConfirmSignUp"] == calls + 1

    profile.expire_codes(EMAIL)
    expired = cog.run("confirm-sign-up", "--username", EMAIL, "--code", code)
    assert expired.returncode == 77
    assert "resend-code" in expired.stderr

    resent = cog.ok("resend-code", "--username", EMAIL)
    assert "sent by EMAIL" in resent.stderr
    new_code = profile.codes(EMAIL)["signup"]
    assert profile.user(EMAIL)["confirmed"] is False

    confirmed = cog.ok("confirm-sign-up", "--username", EMAIL, "--code", f"  {new_code}\n")  # white space trimmed
    assert "confirmed" in confirmed.stderr and "cog-cred sign-in" in confirmed.stderr
    assert profile.user(EMAIL)["confirmed"] is True

    again = cog.run("confirm-sign-up", "--username", EMAIL, "--code", new_code)
    assert again.returncode == 65
    assert "confirmed already" in again.stderr

    cog.ok("sign-in", "--username", EMAIL, "--password-stdin", input=PASSWORD + "\n")
    assert claims(cog.ok("token").stdout.strip())["username"] == EMAIL


def test_sign_up_of_an_existing_user_and_a_weak_password(cog, profile):
    profile.add_user(EMAIL, PASSWORD)
    exists = cog.run("sign-up", "--username", EMAIL, "--password-stdin", input=PASSWORD + "\n")
    assert exists.returncode == 65
    assert "already exists" in exists.stderr and "forgot-password" in exists.stderr
    weak = cog.run("sign-up", "--username", "erin@example.com", "--password-stdin", input="short\n")
    assert weak.returncode == 65
    assert "password policy" in weak.stderr
    assert "Password did not conform with policy" in weak.stderr  # Cognito's own words


def test_sign_up_in_a_pool_that_confirms_at_once_says_to_sign_in(cog, profile):
    profile.configure(auto_confirm=True)
    result = cog.ok("sign-up", "--username", EMAIL, "--password-stdin", input=PASSWORD + "\n")
    assert "already confirmed" in result.stderr
    assert f"cog-cred sign-in --username {EMAIL}" in result.stderr


def test_resends_are_limited(cog, profile):
    profile.configure(max_resends=1)
    cog.ok("sign-up", "--username", EMAIL, "--password-stdin", input=PASSWORD + "\n")
    cog.ok("resend-code", "--username", EMAIL)
    limited = cog.run("resend-code", "--username", EMAIL)
    assert limited.returncode == 75
    assert "try again later" in limited.stderr


def test_forgot_password_then_sign_in_with_the_new_one(cog, bus, profile):
    profile.add_user(EMAIL, PASSWORD)
    cog.ok("configure", "--username", EMAIL)  # --username defaults to the profile's
    started = cog.ok("forgot-password")
    assert "reset code was sent by EMAIL" in started.stderr
    code = profile.codes(EMAIL)["reset"]

    wrong = cog.run("confirm-forgot-password", "--code", "999999" if code != "999999" else "888888",
                    "--password-stdin", input=NEW_PASSWORD + "\n")
    assert wrong.returncode == 77 and "incorrect" in wrong.stderr
    assert profile.stats()["calls"]["ConfirmForgotPassword"] == 1
    profile.expire_codes(EMAIL)
    expired = cog.run("confirm-forgot-password", "--code", code, "--password-stdin", input=NEW_PASSWORD + "\n")
    assert expired.returncode == 77 and "forgot-password again" in expired.stderr
    cog.ok("forgot-password")
    code = profile.codes(EMAIL)["reset"]

    cog.ok("confirm-forgot-password", "--code", code, "--password-stdin", input=NEW_PASSWORD + "\n")
    old = cog.run("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert old.returncode == 77
    cog.ok("sign-in", "--password-stdin", input=NEW_PASSWORD + "\n")
    assert stored(bus, "refresh")


def test_change_password_uses_the_access_token(cog, bus, profile):
    profile.add_user(EMAIL, PASSWORD)
    cog.ok("configure", "--username", EMAIL)
    not_signed_in = cog.run("change-password", "--password-stdin", input=f"{PASSWORD}\n{NEW_PASSWORD}\n")
    assert not_signed_in.returncode == 77
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    cog.remember_secret(*all_stored(bus).values())

    wrong = cog.run("change-password", "--password-stdin", input=f"Not-The-Password-1\n{NEW_PASSWORD}\n")
    assert wrong.returncode == 77 and "current password is incorrect" in wrong.stderr

    cog.ok("change-password", "--password-stdin", input=f"{PASSWORD}\n{NEW_PASSWORD}\n")
    assert cog.run("sign-in", "--password-stdin", input=PASSWORD + "\n").returncode == 77
    cog.ok("sign-in", "--password-stdin", input=NEW_PASSWORD + "\n")
    change = [r for r in profile.stats()["requests"] if r["action"] == "ChangePassword"]
    assert change and all("authorization" not in r["headers"] for r in change)


@pytest.mark.parametrize("command, stdin, phrase", [
    (["sign-up", "--username", "frank@", "--password-stdin"], PASSWORD + "\n", "not an email address"),
    (["sign-up", "--username", "frank", "--attribute", "email=nope", "--password-stdin"], PASSWORD + "\n",
     "not an email address"),
    (["sign-up", "--username", EMAIL, "--password-stdin"], "\n", "empty"),
    (["confirm-sign-up", "--username", EMAIL, "--code", "12345"], None, "exactly 6 digits"),
    (["confirm-sign-up", "--username", EMAIL, "--code", "12a456"], None, "exactly 6 digits"),
    (["confirm-forgot-password", "--username", EMAIL, "--code", "1234567", "--password-stdin"], NEW_PASSWORD + "\n",
     "exactly 6 digits"),
    (["confirm-forgot-password", "--username", EMAIL, "--code", "123456", "--password-stdin"], "\n", "empty"),
    (["change-password", "--password-stdin"], f"{PASSWORD}\n{PASSWORD}\n", "same as the current one"),
])
def test_bad_input_exits_65_before_any_request(cog, profile, command, stdin, phrase):
    result = cog.run(*command, input=stdin)
    assert result.returncode == 65, result.stderr
    assert phrase in result.stderr
    assert result.stderr.count("\n") == 1
    assert profile.stats()["calls"] == {}


def test_passwords_need_a_terminal_or_stdin(cog, profile):
    import subprocess
    for command in (["sign-up", "--username", EMAIL], ["change-password"],
                    ["confirm-forgot-password", "--username", EMAIL, "--code", "123456"]):
        result = subprocess.run([cog.binary, *command], env=cog.env, capture_output=True, text=True,
                                stdin=subprocess.DEVNULL, start_new_session=True, timeout=30)
        assert result.returncode == 64, (command, result.stderr)
        assert "--password-stdin" in result.stderr


def test_sign_up_asks_twice_on_the_terminal_and_compares(cog, profile):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(cog.binary, ["sign-up", "--username", EMAIL], env=cog.env, encoding="utf-8", timeout=30)
    child.expect("Password for dana@example.com: ")
    child.sendline(PASSWORD)
    child.expect("Repeat it: ")
    child.sendline(PASSWORD + "x")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 65
    assert "do not match" in child.before
    assert PASSWORD not in child.before
    assert profile.stats()["calls"] == {}

    on_terminal(cog, ["sign-up", "--username", EMAIL], ("Password for", PASSWORD), ("Repeat it: ", PASSWORD))
    assert profile.user(EMAIL)["confirmed"] is False


# --- app clients with a secret -------------------------------------------------------

SECRET = "s3cr3t-client-value-0123456789abcdef"


def expected_hash(username, client_id="doubleclient", secret=SECRET):
    return base64.b64encode(hmac.new(secret.encode(), (username + client_id).encode(), hashlib.sha256).digest()).decode()


def test_a_client_with_a_secret_works_through_the_whole_life(cog, bus, profile):
    profile.configure(client_secret=SECRET, username_attributes=["email"])
    cog.remember_secret(SECRET)
    result = cog.ok("configure", "--client-secret-stdin", input=SECRET + "\n")
    assert "Secret Service" in result.stderr
    assert SECRET not in cog.config_file.read_text()
    assert json.loads(cog.config_file.read_text())["profiles"]["default"]["client-secret-in-keyring"] is True
    assert stored(bus, "client-secret") == SECRET

    cog.ok("sign-up", "--username", EMAIL, "--password-stdin", input=PASSWORD + "\n")
    cog.ok("confirm-sign-up", "--username", EMAIL, "--code", profile.codes(EMAIL)["signup"])
    cog.ok("sign-in", "--username", EMAIL, "--password-stdin", input=PASSWORD + "\n")
    cog.remember_secret(*all_stored(bus).values())
    canonical = claims(stored(bus, "access"))["username"]
    assert canonical != EMAIL  # signed in by email alias

    cog.ok("refresh")  # SECRET_HASH over the canonical name, or the double refuses
    hashes = [r for r in profile.stats()["requests"] if r["action"] in ("SignUp", "ConfirmSignUp", "InitiateAuth")]
    assert all(r["status"] == 200 for r in hashes)

    cog.ok("sign-out")
    assert stored(bus, "client-secret") == SECRET  # sign-out ends the session, not the configuration


def test_a_wrong_client_secret_is_a_clear_error_and_stores_nothing(cog, bus, profile):
    profile.configure(client_secret=SECRET)
    profile.add_user(EMAIL, PASSWORD)
    cog.ok("configure", "--client-secret-stdin", input="not-the-secret\n")
    result = cog.run("sign-in", "--username", EMAIL, "--password-stdin", input=PASSWORD + "\n")
    assert result.returncode == 78
    assert "client's secret does not match" in result.stderr
    assert all_stored(bus) == {"access": None, "id": None, "refresh": None}


def test_a_missing_client_secret_is_reported(cog, bus, profile):
    profile.add_user(EMAIL, PASSWORD)
    cog.ok("configure", "--client-secret-stdin", input=SECRET + "\n")
    bus.secret_tool("clear", "service", "cog-cred", "kind", "client-secret")
    result = cog.run("sign-in", "--username", EMAIL, "--password-stdin", input=PASSWORD + "\n")
    assert result.returncode == 78
    assert "--client-secret-stdin" in result.stderr
    cog.ok("configure", "--remove-client-secret")
    cog.ok("sign-in", "--username", EMAIL, "--password-stdin", input=PASSWORD + "\n")


# --- moto as an independent peer -----------------------------------------------------------

def test_sign_up_and_confirm_against_moto(cog, bus, pool):
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id, "--endpoint-url", pool.url)
    cog.remember_secret(PASSWORD, NEW_PASSWORD)
    cog.ok("sign-up", "--username", "gina@example.com", "--password-stdin", input=PASSWORD + "\n")
    idp = boto_client(pool.url)
    user = idp.admin_get_user(UserPoolId=pool.pool_id, Username="gina@example.com")
    assert user["UserStatus"] == "UNCONFIRMED"
    assert {"Name": "email", "Value": "gina@example.com"} in user["UserAttributes"]
    cog.ok("confirm-sign-up", "--username", "gina@example.com", "--code", "123456")
    assert idp.admin_get_user(UserPoolId=pool.pool_id, Username="gina@example.com")["UserStatus"] == "CONFIRMED"
    cog.ok("sign-in", "--username", "gina@example.com", "--password-stdin", input=PASSWORD + "\n")
    cog.ok("change-password", "--password-stdin", input=f"{PASSWORD}\n{NEW_PASSWORD}\n")
    cog.ok("sign-in", "--username", "gina@example.com", "--password-stdin", input=NEW_PASSWORD + "\n")


def test_moto_checks_our_secret_hash_on_refresh(cog, bus, moto):
    # moto verifies SECRET_HASH on REFRESH_TOKEN_AUTH with its own HMAC code:
    # an independent check of ours.
    idp = boto_client(moto.url)
    pool_id = idp.create_user_pool(PoolName="secret")["UserPool"]["Id"]
    client = idp.create_user_pool_client(UserPoolId=pool_id, ClientName="c", GenerateSecret=True,
                                         ExplicitAuthFlows=["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"])
    client_id, secret = client["UserPoolClient"]["ClientId"], client["UserPoolClient"]["ClientSecret"]
    idp.admin_create_user(UserPoolId=pool_id, Username="hank", MessageAction="SUPPRESS")
    idp.admin_set_user_password(UserPoolId=pool_id, Username="hank", Password=PASSWORD, Permanent=True)
    cog.remember_secret(secret, PASSWORD)
    cog.ok("configure", "--user-pool-id", pool_id, "--client-id", client_id, "--endpoint-url", moto.url,
           "--username", "hank", "--client-secret-stdin", input=secret + "\n")
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    cog.ok("refresh")
    cog.ok("configure", "--client-secret-stdin", input="wrong-secret\n")
    assert cog.run("refresh").returncode == 77  # moto's message does not say "secret hash"


# --- codes off the command line ----------------------------------------------------------------------

def test_codes_come_from_stdin_or_the_terminal_not_only_argv(cog, bus, profile, tmp_path):
    """/proc/PID/cmdline is world-readable: --code - and the prompt keep codes off it."""
    cog.ok("sign-up", "--username", EMAIL, "--password-stdin", input=PASSWORD + "\n")
    code = profile.codes(EMAIL)["signup"]
    # No terminal and no --code: say how, change nothing.
    no_tty = cog.run("confirm-sign-up", "--username", EMAIL)
    assert no_tty.returncode == 64 and "--code -" in no_tty.stderr
    assert profile.user(EMAIL)["confirmed"] is False
    # On a terminal, asked for (echo on: a code is not a password).
    on_terminal(cog, ["confirm-sign-up", "--username", EMAIL], ("Enter the 6-digit code from the email: ", code))
    assert profile.user(EMAIL)["confirmed"] is True

    # Reset: the code's line, then the new password's, both on stdin.
    cog.ok("forgot-password", "--username", EMAIL)
    reset = profile.codes(EMAIL)["reset"]
    cog.ok("confirm-forgot-password", "--username", EMAIL, "--code", "-", "--password-stdin",
           input=f"{reset}\n{NEW_PASSWORD}\n")
    cog.ok("sign-in", "--username", EMAIL, "--password-stdin", input=NEW_PASSWORD + "\n")
    bad = cog.run("confirm-forgot-password", "--username", EMAIL, "--code", "-", "--password-stdin", input="12x456\nX\n")
    assert bad.returncode == 65 and "6 digits" in bad.stderr
