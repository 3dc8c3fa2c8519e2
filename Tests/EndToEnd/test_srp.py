"""Secure sign-in end to end: SRP, every challenge, rotation, sign-out, verify.

moto returns an SRP challenge but never checks the proof, accepts any SMS
code, has no RevokeToken or GetTokensFromRefreshToken and never rotates
refresh tokens, so these tests run against the project's Cognito test double,
whose SRP server keeps a real verifier and rejects a wrong password, whose
TOTP codes are real RFC 6238 codes, and which rotates and revokes. moto is
used for what it does serve: its JWKS, to verify real RS256 signatures.
"""
import json
import re
import shutil
import subprocess

import pyotp
import pytest

from support import all_stored, b64url, claims, configure_on_double, no_terminal, on_terminal, stored

PASSWORD = "Srp-Password-1"
NEW_PASSWORD = "Srp-Password-2"
USER = "erin@example.com"


@pytest.fixture
def profile(cog, double):
    configure_on_double(cog, double.url, "--username", USER)
    cog.remember_secret(PASSWORD, NEW_PASSWORD)
    return double


def auth_flows(double):
    return [r["auth_flow"] for r in double.stats()["requests"] if r["action"] == "InitiateAuth"]


# --- SRP ------------------------------------------------------------------------------

def test_srp_is_the_default_and_signs_in_with_the_right_password(cog, bus, profile):
    profile.add_user(USER, PASSWORD)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert auth_flows(profile) == ["USER_SRP_AUTH"]
    assert profile.calls("RespondToAuthChallenge:PASSWORD_VERIFIER") == 1
    assert claims(stored(bus, "access"))["username"] == USER


@pytest.mark.parametrize("salt", ["007fab12cd34ef56aa", "000c11", "-5a5a5a5a5a5a", "-00ecec", "-80"])
def test_srp_reads_the_salt_as_a_number_as_amazons_sdks_do(cog, bus, profile, salt):
    # Salts Cognito has sent: leading zeros, a leading "-". Read as text they
    # give another key, and that user could never sign in.
    profile.configure(srp_salt=salt)
    profile.add_user(USER, PASSWORD)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert profile.calls("RespondToAuthChallenge:PASSWORD_VERIFIER") == 1
    assert claims(stored(bus, "access"))["username"] == USER
    wrong = cog.run("sign-in", "--password-stdin", input="Wrong-Password-9\n")
    assert wrong.returncode == 77


def test_srp_with_the_wrong_password_is_rejected_and_stores_nothing(cog, bus, profile):
    profile.add_user(USER, PASSWORD)
    result = cog.run("sign-in", "--password-stdin", input="Wrong-Password-9\n")
    assert result.returncode == 77
    assert "incorrect username or password" in result.stderr
    assert all_stored(bus) == {"access": None, "id": None, "refresh": None}


def test_the_password_flow_can_be_chosen_per_profile(cog, profile):
    profile.add_user(USER, PASSWORD)
    cog.ok("configure", "--auth-flow", "password")
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert auth_flows(profile) == ["USER_PASSWORD_AUTH"]
    bad = cog.run("configure", "--auth-flow", "magic")
    assert bad.returncode == 64


def test_srp_with_a_client_secret_and_an_email_alias(cog, bus, profile):
    secret = "srp-client-secret-0123456789"
    profile.configure(client_secret=secret, username_attributes=["email"])
    cog.remember_secret(secret)
    cog.ok("configure", "--client-secret-stdin", input=secret + "\n")
    cog.ok("sign-up", "--password-stdin", input=PASSWORD + "\n")
    cog.ok("confirm-sign-up", "--code", profile.codes(USER)["signup"])
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert claims(stored(bus, "access"))["username"] != USER  # the canonical name, not the alias
    cog.ok("refresh")


# --- challenges -------------------------------------------------------------------------

def test_new_password_required_scripted(cog, bus, profile):
    profile.add_user(USER, PASSWORD)
    profile.admin("users", {"username": USER, "password": PASSWORD, "force_change_password": True})
    missing = no_terminal(cog, "sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert missing.returncode == 77
    assert "--new-password-stdin" in missing.stderr
    cog.ok("sign-in", "--password-stdin", "--new-password-stdin", input=f"{PASSWORD}\n{NEW_PASSWORD}\n")
    assert stored(bus, "refresh")
    cog.ok("sign-out", "--local")
    cog.ok("sign-in", "--password-stdin", input=NEW_PASSWORD + "\n")  # the new password is now the password


def test_new_password_required_interactive(cog, bus, profile):
    profile.admin("users", {"username": USER, "password": PASSWORD, "force_change_password": True})
    shown = on_terminal(cog, ["sign-in"], ("Password for erin@example.com: ", PASSWORD),
                        ("New password: ", NEW_PASSWORD), ("Repeat it: ", NEW_PASSWORD))
    assert NEW_PASSWORD not in shown and PASSWORD not in shown
    assert stored(bus, "refresh")


def test_authenticator_code_scripted(cog, bus, profile):
    totp = profile.add_totp_user(USER, PASSWORD)
    missing = no_terminal(cog, "sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert missing.returncode == 77 and "--mfa-code" in missing.stderr
    wrong = cog.run("sign-in", "--password-stdin", "--mfa-code", "000000" if totp.now() != "000000" else "111111",
                    input=PASSWORD + "\n")
    assert wrong.returncode == 77 and "code is incorrect: check it and sign in again" in wrong.stderr
    assert all_stored(bus)["refresh"] is None
    cog.ok("sign-in", "--password-stdin", "--mfa-code", totp.now(), input=PASSWORD + "\n")
    assert stored(bus, "refresh")


def test_authenticator_code_interactive(cog, bus, profile):
    totp = profile.add_totp_user(USER, PASSWORD)
    on_terminal(cog, ["sign-in"], ("Password for", PASSWORD), ("authenticator app: ", totp.now))
    assert stored(bus, "refresh")


def test_sms_code_scripted_and_interactive(cog, bus, profile):
    profile.admin("users", {"username": USER, "password": PASSWORD, "mfa": "sms"})
    missing = no_terminal(cog, "sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert missing.returncode == 77 and "--mfa-code" in missing.stderr

    on_terminal(cog, ["sign-in"], ("Password for", PASSWORD), ("sent by SMS", None),
                (": ", lambda: profile.codes(USER)["sms"]))
    cog.ok("sign-out", "--local")

    # Scripted: the code exists only once the SMS is sent, so `--mfa-code -`
    # reads it from stdin after saying so on stderr.
    status, said, _, err = cog.answer_when_asked("sign-in", "--password-stdin", "--mfa-code", "-", first_lines=[PASSWORD],
                                                 answer=lambda _: profile.codes(USER)["sms"])
    assert status == 0, err
    assert "reading it from standard input" in said
    assert stored(bus, "refresh")


def other_code(code):
    """A six-digit code that is not `code`."""
    return f"{(int(code) + 1) % 10 ** 6:06d}"


def email_user(profile, mfa="email"):
    profile.admin("users", {"username": USER, "password": PASSWORD, "mfa": mfa, "attributes": {"email": USER}})


@pytest.mark.parametrize("challenge", ["EMAIL_OTP", "EMAIL_MFA"])
def test_email_code_scripted_and_interactive(cog, bus, profile, challenge):
    profile.configure(email_mfa_challenge=challenge)
    email_user(profile)
    missing = no_terminal(cog, "sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert missing.returncode == 77 and "--mfa-code" in missing.stderr and "email" in missing.stderr
    assert all_stored(bus)["refresh"] is None

    # On the terminal: where the code went (masked, as Cognito says it), then the code.
    on_terminal(cog, ["sign-in"], ("Password for", PASSWORD),
                (r"sent by email to e\*\*\*@e\*\*\*: ", lambda: profile.codes(USER)["email"]))
    cog.ok("sign-out", "--local")

    # A wrong code: refused, nothing stored.
    status, said, _, err = cog.answer_when_asked("sign-in", "--password-stdin", "--mfa-code", "-", first_lines=[PASSWORD],
                                                 answer=lambda _: other_code(profile.codes(USER)["email"]))
    assert "sent by email to e***@e***; reading it from standard input" in said
    assert status == 77 and "code is incorrect: check it and sign in again" in err
    assert all_stored(bus)["refresh"] is None

    # Scripted: the code exists only once the email is sent, so `--mfa-code -`
    # reads it from stdin after saying so on stderr.
    status, said, _, err = cog.answer_when_asked("sign-in", "--password-stdin", "--mfa-code", "-", first_lines=[PASSWORD],
                                                 answer=lambda _: profile.codes(USER)["email"])
    assert status == 0, err
    assert "reading it from standard input" in said
    assert stored(bus, "refresh")
    calls = profile.stats()["calls"]
    assert calls.get(f"RespondToAuthChallenge:{challenge}", 0) >= 3


def test_choosing_email_mfa(cog, bus, profile):
    email_user(profile, mfa="all")
    missing = no_terminal(cog, "sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert missing.returncode == 77 and "--mfa-type sms|totp|email" in missing.stderr
    status, said, _, err = cog.answer_when_asked("sign-in", "--password-stdin", "--mfa-type", "email", "--mfa-code", "-",
                                                 first_lines=[PASSWORD], answer=lambda _: profile.codes(USER)["email"])
    assert status == 0, err
    assert "sent by email to e***@e***" in said
    assert stored(bus, "refresh")
    # A pool that offers no email: told what it offers.
    cog.ok("sign-out", "--local")
    profile.admin("users", {"username": USER, "password": PASSWORD, "mfa": "both"})
    refused = cog.run("sign-in", "--password-stdin", "--mfa-type", "email", input=PASSWORD + "\n")
    assert refused.returncode == 64 and "Cognito offers sms or totp, not email" in refused.stderr, refused.stderr
    assert all_stored(bus)["refresh"] is None


# What a hostile or broken endpoint could send to take over the terminal: a
# window title (OSC), clear screen (CSI), an 8-bit CSI, a right-to-left override.
TERMINAL_ATTACK = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e"


def test_text_from_cognito_reaches_the_terminal_without_control_characters(cog, bus, profile):
    profile.add_user(USER, PASSWORD)
    cog.ok("configure", "--auth-flow", "password")
    # A challenge whose CODE_DELIVERY_DESTINATION carries escape sequences.
    challenge = {"ChallengeName": "SMS_MFA", "Session": "s" * 40,
                 "ChallengeParameters": {"CODE_DELIVERY_DESTINATION": f"+1{TERMINAL_ATTACK}***1234",
                                         "CODE_DELIVERY_DELIVERY_MEDIUM": "SMS", "USER_ID_FOR_SRP": USER}}
    profile.configure(fail_next={"status": 200, "content_type": "application/x-amz-json-1.1",
                                 "body": json.dumps(challenge)})
    result = cog.run("sign-in", "--password-stdin", "--mfa-code", "-", input=f"{PASSWORD}\n123456\n")
    assert "the code sent by SMS to +1]0;pwned[2J31m***1234;" in result.stderr, result.stderr
    # Cognito's own error message, likewise.
    error = {"__type": "NotAuthorizedException", "message": f"Incorrect{TERMINAL_ATTACK} username or password."}
    profile.configure(fail_next={"status": 400, "content_type": "application/x-amz-json-1.1", "body": json.dumps(error)})
    refused = cog.run("sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert refused.returncode == 77
    for output in (result.stderr, refused.stderr):
        assert not any(c in output for c in "\x1b\x07\x9b\u202e"), repr(output)
    assert "]0;pwned" in refused.stderr  # what is left of the text is still shown


def test_choice_of_mfa_scripted_and_interactive(cog, bus, profile):
    pexpect = pytest.importorskip("pexpect")
    secret = pyotp.random_base32()
    profile.admin("users", {"username": USER, "password": PASSWORD, "mfa": "both", "totp_secret": secret})
    missing = no_terminal(cog, "sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert missing.returncode == 77 and "--mfa-type" in missing.stderr

    cog.ok("sign-in", "--password-stdin", "--mfa-type", "totp", "--mfa-code", pyotp.TOTP(secret).now(),
           input=PASSWORD + "\n")
    cog.ok("sign-out", "--local")

    child = pexpect.spawn(cog.binary, ["sign-in"], env=cog.env, encoding="utf-8", timeout=30)
    child.expect("Password for")
    child.sendline(PASSWORD)
    child.expect(r"Second factor: .*\? ")
    assert "totp" in child.after and "sms" in child.after
    child.sendline("totp")
    child.expect("authenticator app: ")
    child.sendline(pyotp.TOTP(secret).now())
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before


def test_authenticator_setup_interactive_shows_the_uri_and_verifies_the_first_code(cog, bus, profile):
    pexpect = pytest.importorskip("pexpect")
    profile.admin("users", {"username": USER, "password": PASSWORD, "mfa": "setup"})
    child = pexpect.spawn(cog.binary, ["sign-in"], env=cog.env, encoding="utf-8", timeout=30)
    child.expect("Password for")
    child.sendline(PASSWORD)
    child.expect(r"otpauth://totp/\S+")
    uri = child.after.strip()
    shown_before_uri = child.before
    secret = re.search(r"secret=([A-Z2-7]+)", uri).group(1)
    child.expect("Enter the code the app shows: ")
    child.sendline(pyotp.TOTP(secret).now())
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert "issuer=" in uri and USER.replace("@", "%40") in uri
    if shutil.which("qrencode"):
        assert any(block in shown_before_uri for block in "\u2588\u2580\u2584")  # a QR code was drawn
    user = profile.user(USER)
    assert user["mfa"] == "totp" and user["totp_secret"] == secret
    # Next sign-in asks for the code of the app just set up.
    cog.ok("sign-out", "--local")
    cog.ok("sign-in", "--password-stdin", "--mfa-code", pyotp.TOTP(secret).now(), input=PASSWORD + "\n")


def test_authenticator_setup_scripted(cog, bus, profile):
    profile.admin("users", {"username": USER, "password": PASSWORD, "mfa": "setup"})
    proc = subprocess.Popen([cog.binary, "sign-in", "--password-stdin", "--mfa-code", "-", "--print-uri"], env=cog.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    proc.stdin.write(PASSWORD + "\n")
    proc.stdin.flush()
    uri = proc.stdout.readline().strip()  # asked for: on stdout, and nowhere else
    assert uri.startswith("otpauth://"), uri
    secret = re.search(r"secret=([A-Z2-7]+)", uri).group(1)
    proc.stdin.write(pyotp.TOTP(secret).now() + "\n")
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    err = proc.stderr.read()
    assert secret not in err and "otpauth://totp/" not in err
    assert profile.user(USER)["totp_secret"] == secret
    assert stored(bus, "refresh")


def test_authenticator_setup_without_a_terminal_names_the_flag(cog, bus, profile):
    profile.admin("users", {"username": USER, "password": PASSWORD, "mfa": "setup"})
    result = no_terminal(cog, "sign-in", "--password-stdin", input=PASSWORD + "\n")
    assert result.returncode == 77
    assert "--mfa-code" in result.stderr
    # The seed is a secret: not on stderr (a log), and not asked for on stdout.
    assert "otpauth://totp/" not in result.stderr + result.stdout and "--print-uri" in result.stderr
    secret = profile.user(USER).get("totp_secret") or ""
    assert not secret or secret not in result.stderr
    assert all_stored(bus)["refresh"] is None


# --- rotation ---------------------------------------------------------------------------------

def signed_in(cog, profile):
    profile.add_user(USER, PASSWORD)
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")


def refresh_with(profile, token):
    """Presents a refresh token to the double directly, as another client would."""
    import urllib.request
    body = json.dumps({"ClientId": "doubleclient", "RefreshToken": token}).encode()
    req = urllib.request.Request(profile.url, data=body, headers={
        "Content-Type": "application/x-amz-json-1.1",
        "X-Amz-Target": "AWSCognitoIdentityProviderService.GetTokensFromRefreshToken"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_rotation_stores_the_new_refresh_token_and_the_old_one_stops_working(cog, bus, profile):
    profile.configure(rotate_refresh_tokens=True)
    signed_in(cog, profile)
    old = stored(bus, "refresh")
    cog.ok("refresh")
    new = stored(bus, "refresh")
    assert new and new != old
    assert profile.calls("GetTokensFromRefreshToken") == 1
    assert profile.calls("InitiateAuth:REFRESH_TOKEN_AUTH") == 0
    status, answer = refresh_with(profile, old)
    assert status == 400 and answer["__type"] == "NotAuthorizedException"
    cog.ok("refresh")  # the stored one works
    assert stored(bus, "refresh") not in (old, new)


def test_without_get_tokens_from_refresh_token_the_fallback_is_learned_once(cog, bus, profile):
    profile.configure(get_tokens_from_refresh_token=False)
    signed_in(cog, profile)
    cog.ok("refresh")
    assert profile.calls("GetTokensFromRefreshToken") == 1
    assert profile.calls("InitiateAuth:REFRESH_TOKEN_AUTH") == 1
    cog.ok("refresh")
    cog.ok("token", "--min-ttl", "4000")
    assert profile.calls("GetTokensFromRefreshToken") == 1  # remembered: never asked again
    assert profile.calls("InitiateAuth:REFRESH_TOKEN_AUTH") == 3
    # A configure that changes the profile forgets what was learned (a new
    # endpoint may differ); one that changes nothing writes and forgets nothing.
    cog.ok("configure", "--endpoint-url", profile.url)
    cog.ok("refresh")
    assert profile.calls("GetTokensFromRefreshToken") == 1
    cog.ok("configure", "--request-timeout", "16")
    cog.ok("refresh")
    assert profile.calls("GetTokensFromRefreshToken") == 2


# --- sign-out ---------------------------------------------------------------------------------------

def test_sign_out_revokes_the_refresh_token(cog, bus, profile):
    signed_in(cog, profile)
    token = stored(bus, "refresh")
    result = cog.ok("sign-out")
    assert "session revoked" in result.stderr
    assert profile.calls("RevokeToken") == 1
    assert all_stored(bus) == {"access": None, "id": None, "refresh": None}
    status, answer = refresh_with(profile, token)
    assert status == 400 and answer["__type"] == "NotAuthorizedException"


def test_global_sign_out_ends_every_session(cog, bus, profile):
    signed_in(cog, profile)
    configure_on_double(cog, profile.url, "--username", USER, profile="laptop")
    cog.ok("sign-in", "--profile", "laptop", "--password-stdin", input=PASSWORD + "\n")
    cog.ok("sign-out", "--global")
    assert profile.calls("GlobalSignOut") == 1
    other = cog.run("refresh", "--profile", "laptop")
    assert other.returncode == 77  # the other session was ended too


def test_local_sign_out_calls_nothing_and_offline_sign_out_still_deletes(cog, bus, profile):
    signed_in(cog, profile)
    before = len(profile.stats()["requests"])
    cog.ok("sign-out", "--local")
    assert len(profile.stats()["requests"]) == before
    cog.ok("sign-in", "--password-stdin", input=PASSWORD + "\n")
    # Offline through the environment: configure --endpoint-url would delete the tokens.
    offline = cog.run("sign-out", env={"AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER": "http://127.0.0.1:9/"})
    assert offline.returncode == 75
    assert "from the Secret Service, but revoking the session at Cognito failed (cannot reach Cognito" in offline.stderr
    assert all_stored(bus) == {"access": None, "id": None, "refresh": None}


# --- status ------------------------------------------------------------------------------------------

def test_status_shows_the_id_token_claims(cog, bus, profile):
    signed_in(cog, profile)
    text = cog.ok("status").stdout
    assert "email:         erin@example.com (verified)" in text
    assert "sub:" in text and "signed in at:" in text
    data = json.loads(cog.ok("status", "--json").stdout)
    assert data["email"] == USER and data["email_verified"] is True
    assert data["sub"] == claims(stored(bus, "id"))["sub"]


def test_status_verify_checks_signatures_against_the_endpoints_keys(cog, bus, profile):
    signed_in(cog, profile)
    result = cog.ok("status", "--verify")
    assert "verify access:  ok   signature: RS256" in result.stdout
    assert "verify id:      ok   signature: RS256" in result.stdout
    assert f"ok   issuer: {profile.url}us-east-1_double" in result.stdout
    assert "FAIL" not in result.stdout
    data = json.loads(cog.ok("status", "--verify", "--json").stdout)
    assert all(c["passed"] for kind in ("access", "id") for c in data["verification"][kind])

    # Change one claim of the stored access token, keep its signature.
    header, payload, signature = stored(bus, "access").split(".")
    body = claims(stored(bus, "access"))
    body["username"] = "mallory"
    forged = b64url(json.dumps(body).encode())
    (item,) = bus.items(service="cog-cred", profile="default", kind="access")
    bus.store(item["attributes"], f"{header}.{forged}.{signature}", label="forged")
    tampered = cog.run("status", "--verify")
    assert tampered.returncode == 77
    assert "FAIL signature" in tampered.stdout
    assert "verification failed: access signature" in tampered.stderr


def test_status_verify_does_not_let_an_emulators_keys_vouch_for_aws_tokens(cog, bus, signed_in_moto):
    # moto signs with its own keys but names the real AWS issuer: the
    # signatures check out against moto's JWKS, the issuer cannot.
    result = cog.run("status", "--verify")
    assert result.returncode == 77
    aws = f"https://cognito-idp.us-east-1.amazonaws.com/{signed_in_moto.pool_id}"
    assert "verify access:  ok   signature: RS256" in result.stdout
    assert f"FAIL issuer: {aws}, not {signed_in_moto.url.rstrip('/')}/{signed_in_moto.pool_id}, whose keys were checked" \
        in result.stdout
    assert "verification failed: access issuer" in result.stderr


def test_status_verify_with_nothing_to_verify_exits_77(cog, bus, profile):
    signed_in(cog, profile)
    for kind in ("access", "id"):
        assert bus.secret_tool("clear", "service", "cog-cred", "profile", "default", "kind", kind).returncode == 0
    # The refresh token is still there (--offline: a status that asks
    # Cognito would refresh, and store new tokens to verify).
    assert cog.ok("status", "--offline").stdout.count("signed in:     yes") == 1
    result = cog.run("status", "--verify")
    assert result.returncode == 77
    assert "verification failed: no access or ID token is stored to check" in result.stderr


@pytest.fixture
def signed_in_moto(cog, pool):
    cog.ok("configure", "--user-pool-id", pool.pool_id, "--client-id", pool.client_id,
           "--endpoint-url", pool.url, "--username", pool.username)
    cog.ok("sign-in", "--password-stdin", input=pool.password + "\n")
    return pool
