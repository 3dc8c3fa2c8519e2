"""Checks of the Cognito test double itself, so the end-to-end tests can trust it.

The double runs in-process (start_double) and is spoken to over HTTP exactly as
cog-cred would, so these run in milliseconds and need no built binary. They
pin the account-lifecycle behaviour that moto does not model: codes that must
match and can expire, resend limits, password policy, SECRET_HASH, access-token
checks and sign-in by email alias; and the secure sign-in that moto only
pretends to do: SRP proofs (checked against pycognito's client code, which
works against real Cognito), challenges after the password, MFA with real
TOTP codes, refresh-token rotation and revocation.
"""
import base64
import datetime
import hashlib
import hmac
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request

import pyotp
import pytest
from pycognito import aws_srp
from pycognito.aws_srp import AWSSRP

from cognito_double import (DEFAULT_CONFIG, MOTO_500_BODY, SRP_K, SRP_N, TARGET_PREFIX, java_double, pad_hex,
                            parse_cognito_timestamp, secret_hash, srp_session_key, srp_verifier)
from support import DoubleClient, b64url, claims, double_admin

CLIENT = DEFAULT_CONFIG["client_id"]
POOL_ID = DEFAULT_CONFIG["pool_id"]
PASSWORD = "Sign-Up-Pass-1"
EMAIL = "dora@example.com"
SECRET = "s3cr3t-of-the-app-client"


class Pool(DoubleClient):
    """The double's pool, as its tests call it."""

    # The calls most tests make, with the client id filled in.
    def sign_up(self, username=EMAIL, password=PASSWORD, email=EMAIL, **extra):
        attributes = [] if email is None else [{"Name": "email", "Value": email}]
        return self.call("SignUp", ClientId=CLIENT, Username=username, Password=password,
                         UserAttributes=attributes, **extra)

    def sign_in(self, username=EMAIL, password=PASSWORD, **params):
        return self.call("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_PASSWORD_AUTH",
                         AuthParameters={"USERNAME": username, "PASSWORD": password, **params})

    def tokens(self, username=EMAIL, password=PASSWORD, **params):
        status, answer = self.sign_in(username, password, **params)
        assert status == 200, answer
        return answer["AuthenticationResult"]

    def refresh(self, token, **params):
        return self.call("InitiateAuth", ClientId=CLIENT, AuthFlow="REFRESH_TOKEN_AUTH",
                         AuthParameters={"REFRESH_TOKEN": token, **params})

    def code(self, username=EMAIL, kind="signup"):
        return self.admin(f"codes?username={urllib.parse.quote(username)}")[kind]

    def confirmed_user(self, username=EMAIL, password=PASSWORD):
        assert self.sign_up(username, password)[0] == 200
        self.ok("ConfirmSignUp", ClientId=CLIENT, Username=username, ConfirmationCode=self.code(username))


def other_code(code):
    return f"{(int(code) + 1) % 10 ** 6:06d}"


@pytest.fixture
def pool(server):
    p = Pool(server)
    p.admin("reset", {})
    return p


# --- config and admin API ------------------------------------------------------------

def test_defaults_and_reset(pool):
    config = pool.admin("config")
    assert {k: config[k] for k in ("client_secret", "code_lifetime", "max_resends", "auto_confirm",
                                   "username_attributes")} == {
        "client_secret": None, "code_lifetime": 86400, "max_resends": 5, "auto_confirm": False,
        "username_attributes": None}
    assert config["password_policy"] == {"min_length": 8, "require_upper": True, "require_lower": True,
                                         "require_digit": True, "require_symbol": False}
    assert {k: config[k] for k in ("session_lifetime", "srp_challenge_session", "rotate_refresh_tokens",
                                   "rotation_grace_seconds", "reuse_detection",
                                   "get_tokens_from_refresh_token", "revoke_token")} == {
        "session_lifetime": 180, "srp_challenge_session": False, "rotate_refresh_tokens": False,
        "rotation_grace_seconds": 0, "reuse_detection": False,
        "get_tokens_from_refresh_token": True, "revoke_token": True}
    changed = pool.admin("config", {"client_secret": SECRET, "password_policy": {"min_length": 12},
                                    "max_resends": 1, "auto_confirm": True, "username_attributes": ["email"]})
    # A partial policy keeps the defaults for the keys it leaves out.
    assert changed["password_policy"] == {**config["password_policy"], "min_length": 12}
    pool.admin("reset", {})
    assert pool.admin("config") == config


def test_requests_are_recorded_with_their_host_and_connection():
    """Connections are numbered across the double's ports; two requests on
    one kept connection share a number (what test_connections counts)."""
    import http.client

    from cognito_double import start_double

    server, url = start_double(also_ports=[0])
    other = server.other_urls[0]
    try:
        def exchange(conn):
            conn.request("POST", "/", body=b"{}", headers={"Content-Type": "application/x-amz-json-1.1",
                                                          "X-Amz-Target": TARGET_PREFIX + "ListDevices",
                                                          "X-Double-Connection": "999"})
            response = conn.getresponse()
            response.read()
            assert response.status == 400  # no AccessToken: answered, and recorded all the same

        for base in (url, url, other):
            parts = urllib.parse.urlsplit(base)
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
            exchange(conn)
            if base == other:
                exchange(conn)  # the same connection again
            conn.close()
        requests = double_admin(url, "stats")["requests"]
        hosts = [r["host"] for r in requests]
        connections = [r["connection"] for r in requests]
        assert hosts == [urllib.parse.urlsplit(u).netloc for u in (url, url, other, other)]
        assert connections == [1, 2, 3, 3]  # never the number a client sent
        assert double_admin(other, "stats")["requests"] == requests  # one double behind both ports
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("patch", [
    {"client_secret": ""}, {"password_policy": {"min_len": 8}}, {"password_policy": {"require_digit": 1}},
    {"code_lifetime": -1}, {"max_resends": True}, {"auto_confirm": "yes"},
    {"username_attributes": ["phone_number"]}, {"username_attributes": "email"},
    {"session_lifetime": -1}, {"srp_challenge_session": 1}, {"rotation_grace_seconds": 61},
    {"rotation_grace_seconds": -1}, {"reuse_detection": "yes"}, {"get_tokens_from_refresh_token": None},
    {"revoke_token": 0},
])
def test_bad_config_is_refused_and_changes_nothing(pool, patch):
    before = pool.admin("config")
    assert "error" in pool.admin("config", patch, status=400)
    assert pool.admin("config") == before


def test_admin_lookups_of_unknown_users_are_404(pool):
    pool.admin("codes?username=nobody", status=404)
    pool.admin("users?username=nobody", status=404)
    pool.admin("users", status=404)
    pool.admin("expire_codes", {"username": "nobody"}, status=404)
    pool.admin("revoke", {"username": "nobody"}, status=404)


def test_put_user_still_behaves_as_before(pool):
    made = pool.admin("users", {"username": "carol@example.com", "password": "x"})
    assert set(made) == {"username", "sub", "confirmed"} and made["confirmed"] is True
    id_token = claims(pool.tokens("carol@example.com", "x")["IdToken"])
    assert (id_token["email"], id_token["email_verified"]) == ("carol@example.com", True)
    pool.admin("users", {"username": "plain", "password": "x"})
    assert "email" not in claims(pool.tokens("plain", "x")["IdToken"])
    info = pool.admin("users?username=plain")
    assert info == {"username": "plain", "sub": info["sub"], "confirmed": True, "attributes": {},
                    "email_verified": False, "password_set": True,
                    "force_change_password": False, "mfa": None, "totp_secret": None}
    # Unconfirmed: the password is still checked first.
    pool.admin("users", {"username": "eve", "password": "right", "confirmed": False})
    assert pool.sign_in("eve", "wrong")[1]["__type"] == "NotAuthorizedException"
    assert pool.sign_in("eve", "right")[1]["__type"] == "UserNotConfirmedException"


def test_new_actions_are_counted_and_recorded_with_headers(pool):
    pool.sign_up()
    pool.call("ConfirmSignUp", ClientId=CLIENT, Username=EMAIL, ConfirmationCode="000000")
    pool.call("ResendConfirmationCode", ClientId=CLIENT, Username=EMAIL)
    stats = pool.admin("stats")
    assert {k: stats["calls"][k] for k in ("SignUp", "ConfirmSignUp", "ResendConfirmationCode")} == {
        "SignUp": 1, "ConfirmSignUp": 1, "ResendConfirmationCode": 1}
    assert [r["action"] for r in stats["requests"]] == ["SignUp", "ConfirmSignUp", "ResendConfirmationCode"]
    assert [r["status"] for r in stats["requests"]] == [200, 400, 200]
    assert stats["requests"][0]["headers"]["x-amz-target"] == TARGET_PREFIX + "SignUp"


# --- sign-up and confirmation --------------------------------------------------------

def test_the_whole_sign_up_path(pool):
    status, answer = pool.sign_up()
    assert status == 200
    assert answer["UserConfirmed"] is False
    assert answer["CodeDeliveryDetails"] == {"Destination": "d***@e***", "DeliveryMedium": "EMAIL",
                                             "AttributeName": "email"}
    assert pool.admin(f"users?username={EMAIL}")["sub"] == answer["UserSub"]
    assert pool.sign_in()[1]["__type"] == "UserNotConfirmedException"

    first = pool.code()
    assert len(first) == 6 and first.isdigit()
    assert pool.code(kind="reset") is None
    confirm = dict(ClientId=CLIENT, Username=EMAIL)
    assert pool.fails("ConfirmSignUp", "CodeMismatchException", ConfirmationCode=other_code(first), **confirm) == \
        "Invalid verification code provided, please try again."

    assert pool.admin("expire_codes", {"username": EMAIL}) == {"expired": 1}
    assert pool.code() == first  # the email still says it
    assert pool.fails("ConfirmSignUp", "ExpiredCodeException", ConfirmationCode=first, **confirm) == \
        "Invalid code provided, please request a code again."

    resent = pool.ok("ResendConfirmationCode", **confirm)
    assert resent == {"CodeDeliveryDetails": answer["CodeDeliveryDetails"]}
    second = pool.code()
    assert second != first
    pool.fails("ConfirmSignUp", "CodeMismatchException", ConfirmationCode=first, **confirm)
    assert pool.ok("ConfirmSignUp", ConfirmationCode=second, **confirm) == {}
    assert pool.code() is None
    assert pool.fails("ConfirmSignUp", "NotAuthorizedException", ConfirmationCode=second, **confirm) == \
        "User cannot be confirmed. Current status is CONFIRMED"

    info = pool.admin(f"users?username={EMAIL}")
    assert (info["confirmed"], info["email_verified"], info["attributes"]) == (True, True, {"email": EMAIL})
    id_token = claims(pool.tokens()["IdToken"])
    assert (id_token["cognito:username"], id_token["email"], id_token["email_verified"]) == (EMAIL, EMAIL, True)


@pytest.mark.parametrize("password, reason", [
    ("Ab1defg", "Password not long enough"),
    ("ABCDEFG1", "Password must have lowercase characters"),
    ("abcdefg1", "Password must have uppercase characters"),
    ("Abcdefgh", "Password must have numeric characters"),
])
def test_sign_up_enforces_the_password_policy(pool, password, reason):
    assert pool.fails("SignUp", "InvalidPasswordException", ClientId=CLIENT, Username="u", Password=password) == \
        f"Password did not conform with policy: {reason}"
    pool.admin("users?username=u", status=404)


def test_the_password_policy_is_configurable(pool):
    pool.admin("config", {"password_policy": {"min_length": 6, "require_upper": False, "require_symbol": True}})
    assert pool.fails("SignUp", "InvalidPasswordException", ClientId=CLIENT, Username="u", Password="abcde1") == \
        "Password did not conform with policy: Password must have symbol characters"
    assert pool.ok("SignUp", ClientId=CLIENT, Username="u", Password="abc-e1")["UserConfirmed"] is False


def test_sign_up_refusals(pool):
    assert pool.fails("SignUp", "ResourceNotFoundException", ClientId="other", Username="u", Password=PASSWORD)
    assert pool.sign_up()[0] == 200
    assert pool.fails("SignUp", "UsernameExistsException", ClientId=CLIENT, Username=EMAIL,
                      Password=PASSWORD) == "User already exists"
    assert pool.fails("SignUp", "InvalidParameterException", ClientId=CLIENT, Username="bad", Password=PASSWORD,
                      UserAttributes=[{"Name": "email", "Value": "not-an-email"}]) == "Invalid email address format."
    pool.fails("SignUp", "InvalidParameterException", ClientId=CLIENT, Username="u2", Password=" Leading-1")
    pool.fails("SignUp", "InvalidParameterException", ClientId=CLIENT, Username="u2")  # no Password
    pool.fails("SignUp", "NotAuthorizedException", ClientId=CLIENT, Username="u2", Password=PASSWORD,
               UserAttributes=[{"Name": "email_verified", "Value": "true"}])
    pool.fails("SignUp", "InvalidParameterException", ClientId=CLIENT, Username="u2", Password=PASSWORD,
               UserAttributes=[{"Name": "shoe_size", "Value": "44"}])


def test_a_user_without_email_gets_no_delivery_details(pool):
    answer = pool.ok("SignUp", ClientId=CLIENT, Username="nomail", Password=PASSWORD)
    assert "CodeDeliveryDetails" not in answer
    assert pool.ok("ResendConfirmationCode", ClientId=CLIENT, Username="nomail") == {}
    assert pool.code("nomail") is not None


def test_auto_confirm_creates_a_confirmed_user_without_a_code(pool):
    pool.admin("config", {"auto_confirm": True})
    status, answer = pool.sign_up()
    assert status == 200 and answer["UserConfirmed"] is True and "CodeDeliveryDetails" not in answer
    assert pool.code() is None
    assert claims(pool.tokens()["IdToken"])["email_verified"] is True


def test_codes_expire_after_the_configured_lifetime(pool):
    pool.admin("config", {"code_lifetime": 0})
    pool.sign_up()
    pool.fails("ConfirmSignUp", "ExpiredCodeException", ClientId=CLIENT, Username=EMAIL, ConfirmationCode=pool.code())


def test_a_fixed_code_is_every_code_sent(pool):
    pool.admin("config", {"fixed_code": "123456"})
    pool.sign_up()
    assert pool.code() == "123456"
    pool.ok("ResendConfirmationCode", ClientId=CLIENT, Username=EMAIL)
    assert pool.code() == "123456"
    pool.fails("ConfirmSignUp", "CodeMismatchException", ClientId=CLIENT, Username=EMAIL, ConfirmationCode="654321")
    pool.ok("ConfirmSignUp", ClientId=CLIENT, Username=EMAIL, ConfirmationCode="123456")


def test_resending_is_limited_and_only_for_unconfirmed_users(pool):
    assert pool.fails("ResendConfirmationCode", "UserNotFoundException", ClientId=CLIENT, Username=EMAIL)
    pool.admin("config", {"max_resends": 2})
    pool.sign_up()
    for _ in range(2):
        pool.ok("ResendConfirmationCode", ClientId=CLIENT, Username=EMAIL)
    last = pool.code()
    assert pool.fails("ResendConfirmationCode", "LimitExceededException", ClientId=CLIENT, Username=EMAIL) == \
        "Attempt limit exceeded, please try after some time."
    assert pool.code() == last  # a refused resend sends nothing
    pool.ok("ConfirmSignUp", ClientId=CLIENT, Username=EMAIL, ConfirmationCode=last)
    pool.confirmed_user("other@example.com")
    assert pool.fails("ResendConfirmationCode", "InvalidParameterException", ClientId=CLIENT,
                      Username="other@example.com") == "User is already confirmed."


def test_confirming_an_unknown_user(pool):
    pool.fails("ConfirmSignUp", "UserNotFoundException", ClientId=CLIENT, Username="ghost", ConfirmationCode="123456")


# --- forgotten passwords --------------------------------------------------------------

def test_forgot_password_and_confirm(pool):
    pool.fails("ForgotPassword", "UserNotFoundException", ClientId=CLIENT, Username=EMAIL)
    pool.sign_up()
    assert pool.fails("ForgotPassword", "InvalidParameterException", ClientId=CLIENT, Username=EMAIL) == \
        "Cannot reset password for the user as there is no registered/verified email or phone_number"
    pool.ok("ConfirmSignUp", ClientId=CLIENT, Username=EMAIL, ConfirmationCode=pool.code())

    sent = pool.ok("ForgotPassword", ClientId=CLIENT, Username=EMAIL)
    assert sent["CodeDeliveryDetails"]["Destination"] == "d***@e***"
    first = pool.code(kind="reset")
    assert pool.code() is None  # separate from the sign-up code
    pool.ok("ForgotPassword", ClientId=CLIENT, Username=EMAIL)
    code = pool.code(kind="reset")
    assert code != first

    reset = dict(ClientId=CLIENT, Username=EMAIL)
    new = "New-Password-2"
    pool.fails("ConfirmForgotPassword", "CodeMismatchException", ConfirmationCode=first, Password=new, **reset)
    assert pool.fails("ConfirmForgotPassword", "InvalidPasswordException", ConfirmationCode=code,
                      Password="weak", **reset).startswith("Password did not conform with policy")
    assert pool.ok("ConfirmForgotPassword", ConfirmationCode=code, Password=new, **reset) == {}
    assert pool.code(kind="reset") is None
    assert pool.sign_in()[1]["__type"] == "NotAuthorizedException"
    pool.tokens(password=new)
    pool.fails("ConfirmForgotPassword", "CodeMismatchException", ConfirmationCode=code, Password=PASSWORD, **reset)


def test_an_expired_reset_code(pool):
    pool.confirmed_user()
    pool.ok("ForgotPassword", ClientId=CLIENT, Username=EMAIL)
    pool.admin("expire_codes", {"username": EMAIL})
    pool.fails("ConfirmForgotPassword", "ExpiredCodeException", ClientId=CLIENT, Username=EMAIL,
               ConfirmationCode=pool.code(kind="reset"), Password="New-Password-2")


def test_forgot_password_needs_a_verified_email(pool):
    pool.admin("users", {"username": "plain", "password": "x"})
    pool.fails("ForgotPassword", "InvalidParameterException", ClientId=CLIENT, Username="plain")


# --- change password ------------------------------------------------------------------

def change(pool, token, previous=PASSWORD, proposed="Changed-Pass-3"):
    return pool.call("ChangePassword", AccessToken=token, PreviousPassword=previous, ProposedPassword=proposed)


def test_change_password_with_a_valid_token(pool):
    pool.confirmed_user()
    tokens = pool.tokens()
    assert change(pool, tokens["AccessToken"], previous="Wrong-Pass-1")[1] == {
        "__type": "NotAuthorizedException", "message": "Incorrect username or password."}
    assert change(pool, tokens["AccessToken"], proposed="short")[1]["__type"] == "InvalidPasswordException"
    assert change(pool, tokens["AccessToken"]) == (200, {})
    assert pool.sign_in()[1]["__type"] == "NotAuthorizedException"
    pool.tokens(password="Changed-Pass-3")
    # The session goes on: a password change is no sign-out.
    assert pool.refresh(tokens["RefreshToken"])[0] == 200


def test_change_password_refuses_bad_tokens(pool):
    pool.confirmed_user()
    tokens = pool.tokens()
    access = tokens["AccessToken"]
    head, body, signature = access.split(".")
    forged = json.dumps({**claims(access), "exp": claims(access)["exp"] + 9999}).encode()
    bad = {
        "garbage": "not-a-jwt",
        "id token": tokens["IdToken"],
        "forged claims": f"{head}.{b64url(forged)}.{signature}",
        "bad signature": f"{head}.{body}.{signature[:-4]}AAAA",
    }
    for what, token in bad.items():
        assert change(pool, token)[1] == {"__type": "NotAuthorizedException", "message": "Invalid Access Token"}, what

    pool.admin("config", {"issued_at_offset": -7200})
    expired = pool.tokens()["AccessToken"]
    pool.admin("config", {"issued_at_offset": 0})
    assert change(pool, expired)[1]["message"] == "Access Token has expired"

    assert pool.admin("revoke", {"username": EMAIL}) == {"revoked": 2}
    assert change(pool, access)[1] == {"__type": "NotAuthorizedException", "message": "Access Token has been revoked"}
    assert pool.refresh(tokens["RefreshToken"])[1]["message"] == "Refresh Token has been revoked"
    assert change(pool, pool.tokens()["AccessToken"]) == (200, {})  # a new sign-in is a new session


def test_refreshed_access_tokens_are_revoked_too(pool):
    pool.confirmed_user()
    refreshed = pool.refresh(pool.tokens()["RefreshToken"])[1]["AuthenticationResult"]["AccessToken"]
    pool.admin("revoke", {"username": EMAIL})
    assert change(pool, refreshed)[1]["message"] == "Access Token has been revoked"


# --- app client secret ----------------------------------------------------------------

def hashed(username):
    return secret_hash(SECRET, username, CLIENT)


MISSING = f"Client {CLIENT} is configured with secret but SECRET_HASH was not received"
WRONG = f"Unable to verify secret hash for client {CLIENT}"


def test_the_secret_hash_is_the_documented_hmac():
    # Independent of the double: HMAC-SHA256(secret, username + client id), base64.
    expected = base64.b64encode(hmac.new(b"k", b"userclient", hashlib.sha256).digest()).decode()
    assert secret_hash("k", "user", "client") == expected


@pytest.mark.parametrize("action, body", [
    ("SignUp", {"Password": PASSWORD, "UserAttributes": [{"Name": "email", "Value": EMAIL}]}),
    ("ConfirmSignUp", {"ConfirmationCode": "CODE"}),
    ("ResendConfirmationCode", {}),
    ("ForgotPassword", {}),
    ("ConfirmForgotPassword", {"ConfirmationCode": "CODE", "Password": "Reset-Pass-4"}),
])
def test_every_unauthenticated_action_needs_the_secret_hash(pool, action, body):
    # A user in the state each action needs, made before the client gets a secret.
    if action == "ConfirmSignUp" or action == "ResendConfirmationCode":
        pool.sign_up()
    elif action != "SignUp":
        pool.confirmed_user()
        if action == "ConfirmForgotPassword":
            pool.ok("ForgotPassword", ClientId=CLIENT, Username=EMAIL)
    kind = "reset" if action == "ConfirmForgotPassword" else "signup"
    if "ConfirmationCode" in body:
        body = dict(body, ConfirmationCode=pool.code(kind=kind))
    pool.admin("config", {"client_secret": SECRET})
    body = dict(body, ClientId=CLIENT, Username=EMAIL)
    assert pool.fails(action, "NotAuthorizedException", **body) == MISSING
    assert pool.fails(action, "NotAuthorizedException", SecretHash=hashed("someone-else"), **body) == WRONG
    assert pool.call(action, SecretHash=hashed(EMAIL), **body)[0] == 200


def test_a_secret_hash_for_a_client_without_secret_is_refused(pool):
    assert pool.fails("SignUp", "InvalidParameterException", ClientId=CLIENT, Username="u", Password=PASSWORD,
                      SecretHash=hashed("u")) == \
        f"Client {CLIENT} is not configured for secret but secret hash was received"


def test_sign_in_and_refresh_need_the_secret_hash(pool):
    pool.confirmed_user()
    pool.admin("config", {"client_secret": SECRET})
    assert pool.sign_in()[1]["message"] == MISSING
    assert pool.sign_in(SECRET_HASH=hashed("x"))[1]["message"] == WRONG
    refresh = pool.tokens(SECRET_HASH=hashed(EMAIL))["RefreshToken"]
    assert pool.refresh(refresh)[1]["message"] == MISSING
    assert pool.refresh(refresh, SECRET_HASH=hashed("x"))[1]["message"] == WRONG
    assert pool.refresh(refresh, SECRET_HASH=hashed(EMAIL))[0] == 200
    # ChangePassword takes no hash.
    assert change(pool, pool.tokens(SECRET_HASH=hashed(EMAIL))["AccessToken"]) == (200, {})


# --- email as username ----------------------------------------------------------------

def test_signing_up_and_in_by_email(pool):
    pool.admin("config", {"username_attributes": ["email"], "client_secret": SECRET})
    assert pool.fails("SignUp", "InvalidParameterException", ClientId=CLIENT, Username="dora", Password=PASSWORD,
                      SecretHash=hashed("dora")) == "Username should be an email."
    status, answer = pool.sign_up(email=None, SecretHash=hashed(EMAIL))
    assert status == 200 and answer["CodeDeliveryDetails"]["Destination"] == "d***@e***"
    canonical = answer["UserSub"]  # Cognito names such users by their sub
    info = pool.admin(f"users?username={EMAIL}")
    assert (info["username"], info["attributes"]) == (canonical, {"email": EMAIL})
    assert pool.fails("SignUp", "UsernameExistsException", ClientId=CLIENT, Username=EMAIL, Password=PASSWORD,
                      SecretHash=hashed(EMAIL)) == "An account with the given email already exists."

    pool.ok("ConfirmSignUp", ClientId=CLIENT, Username=EMAIL, ConfirmationCode=pool.code(),
            SecretHash=hashed(EMAIL))
    tokens = pool.tokens(SECRET_HASH=hashed(EMAIL))  # the hash of what was typed
    assert claims(tokens["AccessToken"])["username"] == canonical
    id_token = claims(tokens["IdToken"])
    assert (id_token["cognito:username"], id_token["email"]) == (canonical, EMAIL)
    pool.tokens(canonical, SECRET_HASH=hashed(canonical))  # the canonical name works as well

    # A refresh has no typed name: only the canonical username's hash is right.
    assert pool.refresh(tokens["RefreshToken"], SECRET_HASH=hashed(EMAIL))[1]["message"] == WRONG
    assert pool.refresh(tokens["RefreshToken"], SECRET_HASH=hashed(canonical))[0] == 200

    pool.ok("ForgotPassword", ClientId=CLIENT, Username=EMAIL, SecretHash=hashed(EMAIL))
    assert pool.code(canonical, kind="reset") == pool.code(EMAIL, kind="reset") is not None


def test_without_username_attributes_an_email_is_no_alias(pool):
    pool.ok("SignUp", ClientId=CLIENT, Username="dora", Password=PASSWORD,
            UserAttributes=[{"Name": "email", "Value": EMAIL}])
    pool.ok("ConfirmSignUp", ClientId=CLIENT, Username="dora", ConfirmationCode=pool.code("dora"))
    assert pool.sign_in(EMAIL)[1]["__type"] == "UserNotFoundException"
    assert claims(pool.tokens("dora")["AccessToken"])["username"] == "dora"


# --- SRP sign-in (USER_SRP_AUTH), checked against pycognito's client -----------------

def srp_client(username, password, secret=None, pool_id=POOL_ID):
    # pycognito's own client; the boto3 client it would otherwise create is never used.
    return AWSSRP(username, password, pool_id, CLIENT, client=object(), client_secret=secret)


def srp_challenge(pool, srp):
    params = srp.get_auth_params()
    status, challenge = pool.call("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_SRP_AUTH", AuthParameters=params)
    assert status == 200, challenge
    assert challenge["ChallengeName"] == "PASSWORD_VERIFIER"
    return params, challenge


def verify_password(pool, responses, **extra):
    return pool.call("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="PASSWORD_VERIFIER",
                     ChallengeResponses=responses, **extra)


def srp_sign_in(pool, username=EMAIL, password=PASSWORD, secret=None):
    """The whole of pycognito's USER_SRP_AUTH: what the double answers the proof."""
    srp = srp_client(username, password, secret)
    params, challenge = srp_challenge(pool, srp)
    return verify_password(pool, srp.process_challenge(challenge["ChallengeParameters"], params))


def signed_proof(srp, challenge, timestamp, salt=None):
    """process_challenge with a TIMESTAMP (and a reading of SALT) of our choosing, from pycognito's parts."""
    cp = challenge["ChallengeParameters"]
    key = srp.get_password_authentication_key(cp["USER_ID_FOR_SRP"], srp.password, int(cp["SRP_B"], 16),
                                              cp["SALT"] if salt is None else salt)
    message = (POOL_ID.split("_")[1] + cp["USER_ID_FOR_SRP"]).encode() + base64.b64decode(cp["SECRET_BLOCK"]) \
        + timestamp.encode()
    return {"USERNAME": cp["USERNAME"], "PASSWORD_CLAIM_SECRET_BLOCK": cp["SECRET_BLOCK"], "TIMESTAMP": timestamp,
            "PASSWORD_CLAIM_SIGNATURE": base64.b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode()}


def cognito_time(seconds):
    return AWSSRP.get_cognito_formatted_timestamp(datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc))


def last_detail(pool):
    return pool.admin("stats")["requests"][-1].get("detail")


def test_the_srp_group_and_padding_are_pycognitos():
    assert SRP_N == int(aws_srp.N_HEX, 16)
    assert SRP_K == srp_client("u", "p").val_k
    for value in (0x1, 0x7F, 0x80, 0xABC, 0x0FFF, SRP_N - 1):
        assert pad_hex(value) == aws_srp.pad_hex(value), value
    # Negative numbers as amazon-cognito-identity-js's padHex comment gives them.
    for value, padded in ((-236, "ff14"), (-200, "ff38"), (-20, "ec"), (-56, "c8"), (-128, "80"), (-1, "ff")):
        assert pad_hex(value) == padded, value


@pytest.mark.parametrize("salt", ["1", "7f", "80", "abc", "0abc", "f" * 32, "1" + "0" * 31])
def test_both_sides_derive_the_same_key(salt):
    # Salts whose padding differs (odd length, top bit set) are where SRP ports break.
    srp = srp_client("user", "Pass-word-1")
    verifier = srp_verifier("double", "user", "Pass-word-1", salt)
    b_priv = 0x1234567890ABCDEF << 700 | 12345
    b_pub = (SRP_K * verifier + pow(2, b_priv, SRP_N)) % SRP_N
    server = srp_session_key(srp.large_a_value, b_pub, b_priv, verifier)
    assert server == srp.get_password_authentication_key("user", "Pass-word-1", b_pub, salt)
    assert server != srp.get_password_authentication_key("user", "Pass-word-2", b_pub, salt)


@pytest.mark.parametrize("salt", ["007fab12cd34ef56", "000c11", "-5a5a5a5a", "-00ecec", "-80"])
def test_salts_are_numbers_as_amazons_sdks_read_them(pool, salt, monkeypatch):
    """A SALT with leading zeros or a leading "-" (Cognito has sent both):
    the double hashes it as the number amazon-cognito-identity-js reads, so
    pycognito, which pads the raw text (and cannot read "-"), is refused, and
    the same client given the SDK's reading of the salt is let in."""
    pool.admin("config", {"srp_salt": salt})
    pool.admin("users", {"username": EMAIL, "password": PASSWORD})
    srp = srp_client(EMAIL, PASSWORD)
    params, challenge = srp_challenge(pool, srp)
    assert challenge["ChallengeParameters"]["SALT"] == salt
    if not salt.startswith("-"):
        assert verify_password(pool, srp.process_challenge(challenge["ChallengeParameters"], params))[1]["__type"] \
            == "NotAuthorizedException"
        params, challenge = srp_challenge(pool, srp)
    # The SDK's reading: the number, hashed as its two's-complement bytes.
    pycognitos = aws_srp.pad_hex
    monkeypatch.setattr(aws_srp, "pad_hex", lambda v: pad_hex(v) if isinstance(v, int) else pycognitos(v))
    status, answer = verify_password(pool, signed_proof(srp, challenge, cognito_time(time.time()), salt=int(salt, 16)))
    assert status == 200, answer


def test_srp_sign_in_with_the_right_password_and_not_the_wrong_one(pool):
    pool.admin("users", {"username": EMAIL, "password": PASSWORD})
    srp = srp_client(EMAIL, PASSWORD)
    params, challenge = srp_challenge(pool, srp)
    cp = challenge["ChallengeParameters"]
    assert set(cp) == {"SALT", "SRP_B", "SECRET_BLOCK", "USER_ID_FOR_SRP", "USERNAME"}
    assert cp["USER_ID_FOR_SRP"] == cp["USERNAME"] == EMAIL
    assert "Session" not in challenge  # as real Cognito: the SECRET_BLOCK carries the state
    int(cp["SALT"], 16), int(cp["SRP_B"], 16), base64.b64decode(cp["SECRET_BLOCK"], validate=True)

    status, answer = verify_password(pool, srp.process_challenge(cp, params))
    assert status == 200, answer
    tokens = answer["AuthenticationResult"]
    assert claims(tokens["AccessToken"])["username"] == EMAIL and tokens["RefreshToken"]
    assert pool.admin("stats")["calls"] == {"InitiateAuth:USER_SRP_AUTH": 1,
                                            "RespondToAuthChallenge:PASSWORD_VERIFIER": 1}

    assert srp_sign_in(pool, password="Wrong-Pass-9")[1] == {"__type": "NotAuthorizedException",
                                                             "message": "Incorrect username or password."}
    assert "PASSWORD_CLAIM_SIGNATURE does not match" in last_detail(pool)


def test_srp_refusals_before_the_proof(pool):
    def initiate(**params):
        return pool.call("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_SRP_AUTH", AuthParameters=params)

    pool.admin("users", {"username": "u", "password": PASSWORD})
    assert initiate(USERNAME="ghost", SRP_A="abc")[1]["__type"] == "UserNotFoundException"
    assert initiate(USERNAME="u")[1]["message"] == "Missing required parameter SRP_A"
    for bad in ("0", format(SRP_N, "x"), format(3 * SRP_N, "x"), "xyz", "0x12", "1_0"):
        assert initiate(USERNAME="u", SRP_A=bad)[1]["__type"] == "InvalidParameterException", bad


def test_srp_proof_checks(pool):
    pool.admin("users", {"username": "u", "password": PASSWORD})
    srp = srp_client("u", PASSWORD)

    def refused(responses, message="Incorrect username or password."):
        status, answer = verify_password(pool, responses)
        assert (status, answer["message"]) == (400, message), answer
        return last_detail(pool)

    # Rightly signed, but over a TIMESTAMP Cognito would not take.
    now = time.time()
    today = cognito_time(now)
    other_weekday = ("Tue" if today[:3] == "Mon" else "Mon") + today[3:]
    for timestamp, why in [(cognito_time(now - 400), "more than 300 s from now"),
                           (cognito_time(now + 400), "more than 300 s from now"),
                           (other_weekday, "is not like"), (today + " ", "is not like")]:
        params, challenge = srp_challenge(pool, srp)
        assert why in refused(signed_proof(srp, challenge, timestamp)), timestamp
    params, challenge = srp_challenge(pool, srp)  # a slow clock within the limit is fine
    assert verify_password(pool, signed_proof(srp, challenge, cognito_time(now - 200)))[0] == 200

    params, challenge = srp_challenge(pool, srp)
    good = signed_proof(srp, challenge, cognito_time(time.time()))
    tampered = dict(good, PASSWORD_CLAIM_SIGNATURE=base64.b64encode(b"\0" * 32).decode())
    assert "does not match" in refused(tampered)
    # The refused proof spent the challenge: even the right one is too late now.
    refused(good, "Invalid session for the user, session can only be used once.")

    params, challenge = srp_challenge(pool, srp)
    good = signed_proof(srp, challenge, cognito_time(time.time()))
    assert "no SECRET_BLOCK" in refused(dict(good, PASSWORD_CLAIM_SECRET_BLOCK=base64.b64encode(b"x").decode()))
    assert refused(dict(good, PASSWORD_CLAIM_SIGNATURE="%%%")) == "PASSWORD_CLAIM_SIGNATURE is not base64"

    params, challenge = srp_challenge(pool, srp)
    pool.admin("users", {"username": "v", "password": PASSWORD})
    someone_else = dict(signed_proof(srp, challenge, cognito_time(time.time())), USERNAME="v")
    refused(someone_else, "Invalid session for the user.")

    pool.admin("config", {"session_lifetime": 0})
    params, challenge = srp_challenge(pool, srp)
    refused(signed_proof(srp, challenge, cognito_time(time.time())),
            "Invalid session for the user, session is expired.")

    pool.admin("config", {"session_lifetime": 180})
    pool.admin("users", {"username": "u", "password": PASSWORD, "confirmed": False})
    assert srp_sign_in(pool, "u")[1]["__type"] == "UserNotConfirmedException"
    assert srp_sign_in(pool, "u", "Wrong-Pass-9")[1]["__type"] == "NotAuthorizedException"


def test_cognito_timestamps():
    # pycognito's formatter (what works against real Cognito) for one- and two-digit days.
    for moment in (datetime.datetime(2026, 11, 2, 4, 3, 1), datetime.datetime(2026, 11, 21, 23, 59, 59),
                   datetime.datetime(2024, 2, 29, 0, 0, 0)):
        text = AWSSRP.get_cognito_formatted_timestamp(moment)
        assert parse_cognito_timestamp(text) == moment.replace(tzinfo=datetime.timezone.utc).timestamp(), text
    assert AWSSRP.get_cognito_formatted_timestamp(datetime.datetime(2026, 11, 2, 4, 3, 1)) == \
        "Mon Nov 2 04:03:01 UTC 2026"
    for bad in ("Mon Nov 02 04:03:01 UTC 2026",   # zero-padded day: real Cognito refuses it
                "Sun Nov 2 04:03:01 UTC 2026",    # wrong weekday
                "Mon Nov 2 4:03:01 UTC 2026", "Mon Nov  2 04:03:01 UTC 2026", "Mon Nov 2 04:03:01 GMT 2026",
                "Mon Feb 30 04:03:01 UTC 2026", "Mon Nov 2 04:03:01 UTC 2026\n", "mon nov 2 04:03:01 UTC 2026"):
        assert parse_cognito_timestamp(bad) is None, bad


def test_srp_with_a_client_secret_and_email_usernames(pool):
    pool.admin("config", {"username_attributes": ["email"], "client_secret": SECRET, "auto_confirm": True})
    pool.sign_up(email=None, SecretHash=hashed(EMAIL))
    canonical = pool.admin(f"users?username={EMAIL}")["username"]
    srp = srp_client(EMAIL, PASSWORD, SECRET)  # hashes the typed name first, the canonical one after
    params, challenge = srp_challenge(pool, srp)
    assert challenge["ChallengeParameters"]["USER_ID_FOR_SRP"] == canonical != EMAIL
    responses = srp.process_challenge(challenge["ChallengeParameters"], params)
    assert verify_password(pool, dict(responses, SECRET_HASH=hashed(EMAIL)))[1]["message"] == WRONG
    assert verify_password(pool, {k: v for k, v in responses.items() if k != "SECRET_HASH"})[1]["message"] == MISSING
    status, answer = verify_password(pool, responses)
    assert status == 200 and claims(answer["AuthenticationResult"]["AccessToken"])["username"] == canonical
    # The typed name's hash is what InitiateAuth needs.
    assert pool.call("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_SRP_AUTH", AuthParameters=dict(
        params, SECRET_HASH=hashed(canonical)))[1]["message"] == WRONG


def test_the_srp_challenge_can_carry_a_session(pool):
    pool.admin("config", {"srp_challenge_session": True})
    pool.admin("users", {"username": "u", "password": PASSWORD})
    srp = srp_client("u", PASSWORD)
    params, first = srp_challenge(pool, srp)
    params, second = srp_challenge(pool, srp)
    proof = srp.process_challenge(first["ChallengeParameters"], params)
    # The proof must belong to the Session it comes with.
    assert verify_password(pool, proof, Session=second["Session"])[1]["message"] == "Incorrect username or password."
    assert verify_password(pool, proof, Session=first["Session"])[0] == 200


def test_the_verifier_follows_every_password_change(pool):
    def srp_ok(password, username=EMAIL):
        status, answer = srp_sign_in(pool, username, password)
        return status == 200 and "AuthenticationResult" in answer

    pool.confirmed_user()  # SignUp
    assert srp_ok(PASSWORD)
    access = pool.tokens()["AccessToken"]
    pool.ok("ChangePassword", AccessToken=access, PreviousPassword=PASSWORD, ProposedPassword="Changed-Pass-3")
    assert srp_ok("Changed-Pass-3") and not srp_ok(PASSWORD)
    pool.ok("ForgotPassword", ClientId=CLIENT, Username=EMAIL)
    pool.ok("ConfirmForgotPassword", ClientId=CLIENT, Username=EMAIL, ConfirmationCode=pool.code(kind="reset"),
            Password="Reset-Pass-4")
    assert srp_ok("Reset-Pass-4") and not srp_ok("Changed-Pass-3")
    pool.admin("users", {"username": EMAIL, "password": "Admin-Pass-5", "force_change_password": True})
    challenge = srp_sign_in(pool, password="Admin-Pass-5")[1]
    pool.ok("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="NEW_PASSWORD_REQUIRED",
            Session=challenge["Session"], ChallengeResponses={"USERNAME": EMAIL, "NEW_PASSWORD": "Forced-Pass-6"})
    assert srp_ok("Forced-Pass-6") and not srp_ok("Admin-Pass-5")
    # The pool name is part of the verifier: a user proves the password for this pool.
    pool.admin("config", {"pool_id": "us-east-1_other"})
    assert not srp_ok("Forced-Pass-6")


# --- challenges after the password -----------------------------------------------------

FLOWS = ["USER_PASSWORD_AUTH", "USER_SRP_AUTH"]
USER = "mia"


def after_password(pool, flow, username=USER, password=PASSWORD, secret=None):
    """The answer that follows a right password, in either flow."""
    if flow == "USER_PASSWORD_AUTH":
        extra = {} if secret is None else {"SECRET_HASH": secret_hash(secret, username, CLIENT)}
        status, answer = pool.sign_in(username, password, **extra)
    else:
        status, answer = srp_sign_in(pool, username, password, secret)
    assert status == 200, answer
    return answer


def respond(pool, challenge, name=None, username=USER, session=None, **responses):
    return pool.call("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName=name or challenge["ChallengeName"],
                     Session=session or challenge["Session"], ChallengeResponses={"USERNAME": username, **responses})


def not_a_current_code(secret):
    """A six-digit code the double must refuse (not valid within a step or two of now)."""
    totp, guess = pyotp.TOTP(secret), int(pyotp.TOTP(secret).now())
    while True:
        guess = (guess + 1) % 10 ** 6
        if not totp.verify(f"{guess:06d}", valid_window=2):
            return f"{guess:06d}"


@pytest.mark.parametrize("flow", FLOWS)
def test_a_forced_password_change(pool, flow):
    pool.admin("users", {"username": USER, "password": PASSWORD, "force_change_password": True,
                         "attributes": {"email": EMAIL}})
    challenge = after_password(pool, flow)
    assert challenge["ChallengeName"] == "NEW_PASSWORD_REQUIRED" and "AuthenticationResult" not in challenge
    params = challenge["ChallengeParameters"]
    assert params["USER_ID_FOR_SRP"] == USER and params["requiredAttributes"] == "[]"
    assert json.loads(params["userAttributes"]) == {"email": EMAIL, "email_verified": "true"}

    assert respond(pool, challenge, NEW_PASSWORD="weak")[1]["__type"] == "InvalidPasswordException"
    # A password the policy refuses leaves the Session to another; the right one spends it.
    status, answer = respond(pool, challenge, NEW_PASSWORD="Better-Pass-7")
    assert status == 200 and claims(answer["AuthenticationResult"]["AccessToken"])["username"] == USER
    assert respond(pool, challenge, NEW_PASSWORD="Better-Pass-8")[1]["message"] == \
        "Invalid session for the user, session can only be used once."
    assert pool.admin(f"users?username={USER}")["force_change_password"] is False
    assert "AuthenticationResult" in after_password(pool, flow, password="Better-Pass-7")
    assert pool.sign_in(USER, PASSWORD)[1]["__type"] == "NotAuthorizedException"


@pytest.mark.parametrize("flow", FLOWS)
def test_software_token_mfa(pool, flow):
    pool.admin("users", {"username": USER, "password": PASSWORD, "mfa": "totp"})
    info = pool.admin(f"users?username={USER}")
    secret = info["totp_secret"]
    assert info["mfa"] == "totp" and len(secret) == 32 and base64.b32decode(secret)
    challenge = after_password(pool, flow)
    assert (challenge["ChallengeName"], challenge["ChallengeParameters"]) == (
        "SOFTWARE_TOKEN_MFA", {"USER_ID_FOR_SRP": USER})
    assert respond(pool, challenge, SOFTWARE_TOKEN_MFA_CODE=not_a_current_code(secret))[1] == {
        "__type": "CodeMismatchException", "message": "Invalid code received for user"}
    # A wrong code leaves the Session to another; the right one spends it.
    status, answer = respond(pool, challenge, SOFTWARE_TOKEN_MFA_CODE=pyotp.TOTP(secret).now())
    assert status == 200 and answer["AuthenticationResult"]["RefreshToken"]
    assert respond(pool, challenge, SOFTWARE_TOKEN_MFA_CODE=pyotp.TOTP(secret).now())[1]["message"] == \
        "Invalid session for the user, session can only be used once."
    # Five wrong codes are taken; the sixth is Cognito's lockout, and spends the Session.
    challenge = after_password(pool, flow)
    for _ in range(5):
        assert respond(pool, challenge, SOFTWARE_TOKEN_MFA_CODE=not_a_current_code(secret))[1]["__type"] == \
            "CodeMismatchException"
    assert respond(pool, challenge, SOFTWARE_TOKEN_MFA_CODE=not_a_current_code(secret))[1] == {
        "__type": "NotAuthorizedException", "message": "Password attempts exceeded"}
    assert respond(pool, challenge, SOFTWARE_TOKEN_MFA_CODE=pyotp.TOTP(secret).now())[1]["__type"] == \
        "NotAuthorizedException"
    # One step of clock drift is allowed.
    challenge = after_password(pool, flow)
    assert respond(pool, challenge, SOFTWARE_TOKEN_MFA_CODE=pyotp.TOTP(secret).at(time.time() - 30))[0] == 200
    assert pool.admin("stats")["calls"]["RespondToAuthChallenge:SOFTWARE_TOKEN_MFA"] == 11


def test_a_given_totp_secret_is_used(pool):
    secret = pyotp.random_base32()
    pool.admin("users", {"username": USER, "password": PASSWORD, "mfa": "totp", "totp_secret": secret})
    assert pool.admin(f"users?username={USER}")["totp_secret"] == secret
    challenge = after_password(pool, "USER_PASSWORD_AUTH")
    assert respond(pool, challenge, SOFTWARE_TOKEN_MFA_CODE=pyotp.TOTP(secret).now())[0] == 200


@pytest.mark.parametrize("flow", FLOWS)
def test_sms_mfa(pool, flow):
    pool.admin("users", {"username": USER, "password": PASSWORD, "mfa": "sms",
                         "attributes": {"phone_number": "+15555550123"}})
    assert pool.code(USER, "sms") is None
    challenge = after_password(pool, flow)
    assert challenge["ChallengeName"] == "SMS_MFA"
    assert challenge["ChallengeParameters"] == {"CODE_DELIVERY_DELIVERY_MEDIUM": "SMS",
                                                "CODE_DELIVERY_DESTINATION": "+*******0123", "USER_ID_FOR_SRP": USER}
    sent = pool.code(USER, "sms")
    assert len(sent) == 6 and sent.isdigit()
    assert respond(pool, challenge, SMS_MFA_CODE=other_code(sent))[1]["__type"] == "CodeMismatchException"

    # Each sign-in texts a new code; an older one is no good.
    challenge = after_password(pool, flow)
    assert pool.code(USER, "sms") != sent
    assert respond(pool, challenge, SMS_MFA_CODE=sent)[1]["__type"] == "CodeMismatchException"
    challenge = after_password(pool, flow)
    status, answer = respond(pool, challenge, SMS_MFA_CODE=pool.code(USER, "sms"))
    assert status == 200 and "AuthenticationResult" in answer


@pytest.mark.parametrize("name", ["EMAIL_OTP", "EMAIL_MFA"])
def test_email_mfa(pool, name):
    pool.admin("config", {"email_mfa_challenge": name})
    pool.admin("users", {"username": USER, "password": PASSWORD, "mfa": "email",
                         "attributes": {"email": "alice@example.com"}})
    assert pool.code(USER, "email") is None
    challenge = after_password(pool, "USER_SRP_AUTH")
    assert challenge["ChallengeName"] == name
    assert challenge["ChallengeParameters"] == {"CODE_DELIVERY_DELIVERY_MEDIUM": "EMAIL",
                                                "CODE_DELIVERY_DESTINATION": "a***@e***", "USER_ID_FOR_SRP": USER}
    sent = pool.code(USER, "email")
    assert len(sent) == 6 and sent.isdigit()
    # A wrong code leaves the Session to another, the same code still good.
    assert respond(pool, challenge, **{name + "_CODE": other_code(sent)})[1]["__type"] == "CodeMismatchException"
    assert pool.code(USER, "email") == sent
    assert respond(pool, challenge, **{name + "_CODE": sent})[0] == 200
    assert respond(pool, challenge, **{name + "_CODE": sent})[1]["__type"] == "NotAuthorizedException"
    # Under the challenge's own member name only (which spends the Session).
    challenge = after_password(pool, "USER_SRP_AUTH")
    other = "EMAIL_MFA" if name == "EMAIL_OTP" else "EMAIL_OTP"
    assert respond(pool, challenge, **{other + "_CODE": pool.code(USER, "email")})[1]["__type"] == "InvalidParameterException"

    # Each sign-in mails a new code; an older one is no good, nor one of another Session.
    first = after_password(pool, "USER_PASSWORD_AUTH")
    first_code = pool.code(USER, "email")
    second = after_password(pool, "USER_PASSWORD_AUTH")
    assert pool.code(USER, "email") != first_code
    assert respond(pool, second, **{name + "_CODE": first_code})[1]["__type"] == "CodeMismatchException"
    assert respond(pool, first, **{name + "_CODE": pool.code(USER, "email")})[1]["__type"] == "CodeMismatchException"
    challenge = after_password(pool, "USER_PASSWORD_AUTH")
    status, answer = respond(pool, challenge, **{name + "_CODE": pool.code(USER, "email")})
    assert status == 200 and "AuthenticationResult" in answer


def test_email_mfa_needs_an_email(pool):
    answer = pool.admin("users", {"username": "bob", "password": PASSWORD, "mfa": "email", "attributes": {}}, status=400)
    assert "email MFA needs an email attribute" in json.dumps(answer)


def test_choosing_email_among_the_mfa_types(pool):
    pool.admin("users", {"username": USER, "password": PASSWORD, "mfa": "all",
                         "attributes": {"email": "alice@example.com"}})
    challenge = after_password(pool, "USER_SRP_AUTH")
    assert challenge["ChallengeParameters"]["MFAS_CAN_CHOOSE"] == '["SMS_MFA","SOFTWARE_TOKEN_MFA","EMAIL_OTP"]'
    email = pool.ok("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="SELECT_MFA_TYPE",
                    Session=challenge["Session"], ChallengeResponses={"USERNAME": USER, "ANSWER": "EMAIL_OTP"})
    assert email["ChallengeName"] == "EMAIL_OTP"
    assert respond(pool, email, EMAIL_OTP_CODE=pool.code(USER, "email"))[0] == 200
    # Only what was offered: "both" offers no email.
    pool.admin("users", {"username": USER, "password": PASSWORD, "mfa": "both"})
    challenge = after_password(pool, "USER_SRP_AUTH")
    assert respond(pool, challenge, ANSWER="EMAIL_OTP")[1]["__type"] == "InvalidParameterException"


def test_choosing_an_mfa_type(pool):
    pool.admin("users", {"username": USER, "password": PASSWORD, "mfa": "both"})
    secret = pool.admin(f"users?username={USER}")["totp_secret"]
    challenge = after_password(pool, "USER_SRP_AUTH")
    assert challenge["ChallengeName"] == "SELECT_MFA_TYPE"
    assert challenge["ChallengeParameters"]["MFAS_CAN_CHOOSE"] == '["SMS_MFA","SOFTWARE_TOKEN_MFA"]'
    assert respond(pool, challenge, ANSWER="EMAIL_OTP")[1]["__type"] == "InvalidParameterException"

    challenge = after_password(pool, "USER_SRP_AUTH")
    totp = pool.ok("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="SELECT_MFA_TYPE",
                   Session=challenge["Session"], ChallengeResponses={"USERNAME": USER, "ANSWER": "SOFTWARE_TOKEN_MFA"})
    assert totp["ChallengeName"] == "SOFTWARE_TOKEN_MFA" and totp["Session"] != challenge["Session"]
    assert respond(pool, totp, SOFTWARE_TOKEN_MFA_CODE=pyotp.TOTP(secret).now())[0] == 200

    challenge = after_password(pool, "USER_PASSWORD_AUTH")
    sms = pool.ok("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="SELECT_MFA_TYPE",
                  Session=challenge["Session"], ChallengeResponses={"USERNAME": USER, "ANSWER": "SMS_MFA"})
    assert sms["ChallengeName"] == "SMS_MFA"
    assert respond(pool, sms, SMS_MFA_CODE=pool.code(USER, "sms"))[0] == 200


@pytest.mark.parametrize("flow", FLOWS)
def test_setting_up_totp_during_sign_in(pool, flow):
    pool.admin("users", {"username": USER, "password": PASSWORD, "mfa": "setup"})
    challenge = after_password(pool, flow)
    assert challenge["ChallengeName"] == "MFA_SETUP"
    assert challenge["ChallengeParameters"]["MFAS_CAN_SETUP"] == '["SOFTWARE_TOKEN_MFA"]'
    # Nothing to answer before a token is associated and verified.
    assert respond(pool, challenge)[1]["message"] == "Invalid session for the user."

    associated = pool.ok("AssociateSoftwareToken", Session=challenge["Session"])
    secret = associated["SecretCode"]
    assert len(secret) == 32 and base64.b32decode(secret) and associated["Session"] != challenge["Session"]
    assert pool.fails("AssociateSoftwareToken", "NotAuthorizedException", Session=challenge["Session"]) == \
        "Invalid session for the user, session can only be used once."
    assert pool.fails("VerifySoftwareToken", "EnableSoftwareTokenMFAException", Session=associated["Session"],
                      UserCode=not_a_current_code(secret)) == "Code mismatch"
    assert pool.admin(f"users?username={USER}")["mfa"] == "setup"
    # A wrong first code leaves the association's Session to another, as Cognito's does.
    verified = pool.ok("VerifySoftwareToken", Session=associated["Session"], UserCode=pyotp.TOTP(secret).now())
    assert verified["Status"] == "SUCCESS"

    pool.admin("users", {"username": USER, "password": PASSWORD, "mfa": "setup"})
    challenge = after_password(pool, flow)
    associated = pool.ok("AssociateSoftwareToken", Session=challenge["Session"])
    secret = associated["SecretCode"]
    verified = pool.ok("VerifySoftwareToken", Session=associated["Session"], UserCode=pyotp.TOTP(secret).now(),
                       FriendlyDeviceName="phone")
    assert verified["Status"] == "SUCCESS" and verified["Session"]
    status, answer = respond(pool, challenge, session=verified["Session"])
    assert status == 200 and "AuthenticationResult" in answer
    info = pool.admin(f"users?username={USER}")
    assert (info["mfa"], info["totp_secret"]) == ("totp", secret)
    assert after_password(pool, flow)["ChallengeName"] == "SOFTWARE_TOKEN_MFA"


def test_software_token_setup_needs_a_session_or_an_access_token(pool):
    pool.fails("AssociateSoftwareToken", "InvalidParameterException")
    assert pool.fails("AssociateSoftwareToken", "NotAuthorizedException", AccessToken="x") == "Invalid Access Token"
    pool.fails("VerifySoftwareToken", "InvalidParameterException", Session="x")  # no UserCode
    pool.fails("VerifySoftwareToken", "NotAuthorizedException", Session="x", UserCode="123456")


def test_a_new_password_then_mfa(pool):
    pool.admin("users", {"username": USER, "password": PASSWORD, "force_change_password": True, "mfa": "totp"})
    secret = pool.admin(f"users?username={USER}")["totp_secret"]
    challenge = after_password(pool, "USER_SRP_AUTH")
    mfa = pool.ok("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="NEW_PASSWORD_REQUIRED",
                  Session=challenge["Session"], ChallengeResponses={"USERNAME": USER, "NEW_PASSWORD": "Better-Pass-7"})
    assert mfa["ChallengeName"] == "SOFTWARE_TOKEN_MFA"
    assert respond(pool, mfa, SOFTWARE_TOKEN_MFA_CODE=pyotp.TOTP(secret).now())[0] == 200


def test_sessions_are_bound_and_expire(pool):
    pool.admin("users", {"username": USER, "password": PASSWORD, "mfa": "totp"})
    pool.admin("users", {"username": "other", "password": PASSWORD})
    challenge = after_password(pool, "USER_PASSWORD_AUTH")
    assert respond(pool, challenge, name="SMS_MFA", SMS_MFA_CODE="123456")[1]["message"] == \
        "Invalid session for the user."
    assert respond(pool, challenge, username="other", SOFTWARE_TOKEN_MFA_CODE="123456")[1]["message"] == \
        "Invalid session for the user."
    assert respond(pool, challenge, session="bm90IGEgc2Vzc2lvbg==", SOFTWARE_TOKEN_MFA_CODE="1")[1]["message"] == \
        "Invalid session for the user."
    status, answer = pool.call("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="SOFTWARE_TOKEN_MFA",
                               ChallengeResponses={"USERNAME": USER, "SOFTWARE_TOKEN_MFA_CODE": "123456"})
    assert answer == {"__type": "InvalidParameterException", "message": "Missing required parameter Session"}
    assert respond(pool, challenge)[1]["message"] == "Missing required parameter SOFTWARE_TOKEN_MFA_CODE"
    assert respond(pool, challenge, name="CUSTOM_CHALLENGE")[1]["__type"] == "InvalidParameterException"
    secret = pool.admin(f"users?username={USER}")["totp_secret"]
    assert respond(pool, challenge, SOFTWARE_TOKEN_MFA_CODE=pyotp.TOTP(secret).now())[0] == 200  # still unspent

    pool.admin("config", {"session_lifetime": 0})
    challenge = after_password(pool, "USER_PASSWORD_AUTH")
    assert respond(pool, challenge, SOFTWARE_TOKEN_MFA_CODE=pyotp.TOTP(secret).now())[1]["message"] == \
        "Invalid session for the user, session is expired."
    # Replacing the user ends its sign-ins in progress.
    pool.admin("config", {"session_lifetime": 180})
    challenge = after_password(pool, "USER_PASSWORD_AUTH")
    pool.admin("users", {"username": USER, "password": PASSWORD, "mfa": "totp", "totp_secret": secret})
    assert respond(pool, challenge, SOFTWARE_TOKEN_MFA_CODE=pyotp.TOTP(secret).now())[1]["message"] == \
        "Invalid session for the user."


def test_challenge_answers_need_the_hash_of_the_canonical_name(pool):
    pool.admin("config", {"username_attributes": ["email"], "client_secret": SECRET, "auto_confirm": True})
    pool.sign_up(email=None, SecretHash=hashed(EMAIL))
    canonical = pool.admin(f"users?username={EMAIL}")["username"]
    pool.admin("users", {"username": canonical, "password": PASSWORD, "mfa": "totp",
                         "attributes": {"email": EMAIL}})
    secret = pool.admin(f"users?username={EMAIL}")["totp_secret"]
    challenge = after_password(pool, "USER_PASSWORD_AUTH", EMAIL, secret=SECRET)
    assert challenge["ChallengeParameters"]["USER_ID_FOR_SRP"] == canonical
    code = pyotp.TOTP(secret).now()
    assert respond(pool, challenge, username=EMAIL, SOFTWARE_TOKEN_MFA_CODE=code)[1]["message"] == MISSING
    assert respond(pool, challenge, username=EMAIL, SOFTWARE_TOKEN_MFA_CODE=code,
                   SECRET_HASH=hashed(EMAIL))[1]["message"] == WRONG
    # USERNAME may be the alias; the hash is of the name Cognito knows the user by.
    assert respond(pool, challenge, username=EMAIL, SOFTWARE_TOKEN_MFA_CODE=code,
                   SECRET_HASH=hashed(canonical))[0] == 200


@pytest.mark.parametrize("body", [
    {"mfa": "email"}, {"mfa": True}, {"totp_secret": "not base32!"}, {"totp_secret": ""},
    {"force_change_password": "yes"},
])
def test_bad_user_flags_are_refused(pool, body):
    assert "error" in pool.admin("users", {"username": USER, "password": PASSWORD, **body}, status=400)
    pool.admin(f"users?username={USER}", status=404)


# --- refresh tokens: GetTokensFromRefreshToken, rotation, RevokeToken, GlobalSignOut ---

def get_tokens(pool, token, **extra):
    return pool.call("GetTokensFromRefreshToken", ClientId=CLIENT, RefreshToken=token, **extra)


def access_ok(pool, access):
    """Whether an access token still works (ChangePassword is the check real clients meet)."""
    status, answer = pool.call("ChangePassword", AccessToken=access, PreviousPassword=PASSWORD,
                               ProposedPassword=PASSWORD)
    assert status == 200 or answer["__type"] == "NotAuthorizedException", answer
    return status == 200


def test_get_tokens_from_refresh_token_without_rotation(pool):
    pool.confirmed_user()
    signed_in = pool.tokens()
    answer = pool.ok("GetTokensFromRefreshToken", ClientId=CLIENT, RefreshToken=signed_in["RefreshToken"])
    assert list(answer) == ["AuthenticationResult"]
    result = answer["AuthenticationResult"]
    assert set(result) == {"AccessToken", "IdToken", "ExpiresIn", "TokenType"}  # no new refresh token
    assert (result["ExpiresIn"], result["TokenType"]) == (3600, "Bearer")
    assert claims(result["AccessToken"])["auth_time"] == claims(signed_in["AccessToken"])["auth_time"]
    assert get_tokens(pool, signed_in["RefreshToken"])[0] == 200  # still good
    assert get_tokens(pool, "nonsense")[1] == {"__type": "NotAuthorizedException", "message": "Invalid Refresh Token"}
    assert pool.fails("GetTokensFromRefreshToken", "ResourceNotFoundException", ClientId="other",
                      RefreshToken=signed_in["RefreshToken"])
    assert pool.admin("stats")["calls"]["GetTokensFromRefreshToken"] == 4


def test_get_tokens_from_refresh_token_needs_the_raw_client_secret(pool):
    pool.confirmed_user()
    pool.admin("config", {"client_secret": SECRET})
    token = pool.tokens(SECRET_HASH=hashed(EMAIL))["RefreshToken"]
    assert get_tokens(pool, token)[1] == {
        "__type": "NotAuthorizedException",
        "message": f"Client {CLIENT} is configured with secret but ClientSecret was not received"}
    assert get_tokens(pool, token, ClientSecret="wrong")[1]["__type"] == "NotAuthorizedException"
    assert get_tokens(pool, token, ClientSecret=hashed(EMAIL))[1]["__type"] == "NotAuthorizedException"
    assert get_tokens(pool, token, ClientSecret=SECRET)[0] == 200
    pool.admin("config", {"client_secret": None})
    assert get_tokens(pool, token, ClientSecret=SECRET)[1]["__type"] == "InvalidParameterException"


def test_rotation_retires_the_old_refresh_token(pool):
    pool.confirmed_user()
    pool.admin("config", {"rotate_refresh_tokens": True})
    first = pool.tokens()["RefreshToken"]
    second = pool.ok("GetTokensFromRefreshToken", ClientId=CLIENT, RefreshToken=first)["AuthenticationResult"]
    assert second["RefreshToken"] not in (None, first)
    assert get_tokens(pool, first)[1] == {"__type": "NotAuthorizedException",
                                          "message": "Refresh Token has been revoked"}
    third = get_tokens(pool, second["RefreshToken"])[1]["AuthenticationResult"]["RefreshToken"]
    pool.admin("config", {"reuse_detection": True})
    assert get_tokens(pool, second["RefreshToken"])[1] == {"__type": "RefreshTokenReuseException",
                                                           "message": "Refresh token has already been used"}
    assert get_tokens(pool, third)[0] == 200
    # REFRESH_TOKEN_AUTH shares the bookkeeping.
    assert pool.refresh(first)[1]["__type"] == "RefreshTokenReuseException"


def test_a_rotated_out_token_works_for_the_grace_period(pool):
    pool.confirmed_user()
    pool.admin("config", {"rotate_refresh_tokens": True, "rotation_grace_seconds": 1})
    first = pool.tokens()["RefreshToken"]
    second = get_tokens(pool, first)[1]["AuthenticationResult"]["RefreshToken"]
    retry = get_tokens(pool, first)  # e.g. the client lost the first answer
    assert retry[0] == 200 and retry[1]["AuthenticationResult"]["RefreshToken"] not in (first, second)
    time.sleep(1.05)  # the grace runs from the first rotation, not from the retry
    assert get_tokens(pool, first)[1]["message"] == "Refresh Token has been revoked"
    assert get_tokens(pool, second)[0] == 200


def test_answered_like_moto_when_switched_off(pool):
    pool.confirmed_user()
    token = pool.tokens()["RefreshToken"]
    pool.admin("config", {"get_tokens_from_refresh_token": False, "revoke_token": False})
    for action, body in (("GetTokensFromRefreshToken", {"RefreshToken": token}), ("RevokeToken", {"Token": token})):
        status, headers, raw = pool.raw(action, ClientId=CLIENT, **body)
        assert (status, raw) == (500, MOTO_500_BODY)
        assert headers["Content-Type"] == "text/html; charset=utf-8"
    # What a client falls back to still works, and the token was not revoked.
    assert pool.refresh(token)[0] == 200
    calls = pool.admin("stats")["calls"]
    assert (calls["GetTokensFromRefreshToken"], calls["RevokeToken"], calls["InitiateAuth:REFRESH_TOKEN_AUTH"]) == \
        (1, 1, 1)


def test_revoke_token_ends_one_sign_in(pool):
    pool.confirmed_user()
    pool.admin("config", {"rotate_refresh_tokens": True, "rotation_grace_seconds": 60})
    doomed, kept = pool.tokens(), pool.tokens()
    rotated = get_tokens(pool, doomed["RefreshToken"])[1]["AuthenticationResult"]
    assert pool.ok("RevokeToken", ClientId=CLIENT, Token=rotated["RefreshToken"]) == {}
    # The whole sign-in: its refresh tokens (the rotated-out one too) and its access tokens.
    for token in (doomed["RefreshToken"], rotated["RefreshToken"]):
        assert get_tokens(pool, token)[1]["message"] == "Refresh Token has been revoked"
    assert not access_ok(pool, doomed["AccessToken"]) and not access_ok(pool, rotated["AccessToken"])
    assert access_ok(pool, kept["AccessToken"]) and get_tokens(pool, kept["RefreshToken"])[0] == 200
    assert pool.ok("RevokeToken", ClientId=CLIENT, Token=rotated["RefreshToken"]) == {}  # again: still fine


def test_revoke_token_refusals(pool):
    pool.confirmed_user()
    tokens = pool.tokens()
    assert pool.ok("RevokeToken", ClientId=CLIENT, Token="never-issued") == {}
    assert pool.fails("RevokeToken", "UnsupportedTokenTypeException", ClientId=CLIENT, Token=tokens["AccessToken"])
    pool.fails("RevokeToken", "ResourceNotFoundException", ClientId="other", Token=tokens["RefreshToken"])
    pool.fails("RevokeToken", "InvalidParameterException", ClientId=CLIENT)
    pool.admin("config", {"client_secret": SECRET})
    pool.fails("RevokeToken", "UnauthorizedException", ClientId=CLIENT, Token=tokens["RefreshToken"])
    pool.fails("RevokeToken", "UnauthorizedException", ClientId=CLIENT, Token=tokens["RefreshToken"],
               ClientSecret="wrong")
    pool.admin("config", {"client_secret": None, "client_id": "newclient"})
    assert pool.fails("RevokeToken", "UnsupportedTokenTypeException", ClientId="newclient",
                      Token=tokens["RefreshToken"]) == "The token was issued to another client"
    pool.admin("config", {"client_id": CLIENT})
    assert access_ok(pool, tokens["AccessToken"])  # none of that revoked anything


def test_global_sign_out_ends_every_sign_in_of_the_user(pool):
    pool.confirmed_user()
    pool.confirmed_user("other@example.com")
    first, second, other = pool.tokens(), pool.tokens(), pool.tokens("other@example.com")
    refreshed = get_tokens(pool, first["RefreshToken"])[1]["AuthenticationResult"]["AccessToken"]
    assert pool.ok("GlobalSignOut", AccessToken=second["AccessToken"]) == {}
    for tokens in (first, second):
        assert get_tokens(pool, tokens["RefreshToken"])[1]["message"] == "Refresh Token has been revoked"
        assert pool.refresh(tokens["RefreshToken"])[1]["message"] == "Refresh Token has been revoked"
    for access in (first["AccessToken"], second["AccessToken"], refreshed):
        assert not access_ok(pool, access)
    assert pool.fails("GlobalSignOut", "NotAuthorizedException", AccessToken=first["AccessToken"]) == \
        "Access Token has been revoked"
    assert access_ok(pool, other["AccessToken"]) and get_tokens(pool, other["RefreshToken"])[0] == 200
    assert access_ok(pool, pool.tokens()["AccessToken"])  # signing in again starts afresh


def test_global_sign_out_checks_the_access_token(pool):
    pool.confirmed_user()
    assert pool.fails("GlobalSignOut", "NotAuthorizedException", AccessToken="garbage") == "Invalid Access Token"
    assert pool.fails("GlobalSignOut", "NotAuthorizedException", AccessToken=pool.tokens()["IdToken"]) == \
        "Invalid Access Token"
    pool.admin("config", {"issued_at_offset": -7200})
    expired = pool.tokens()
    pool.admin("config", {"issued_at_offset": 0})
    assert pool.fails("GlobalSignOut", "NotAuthorizedException", AccessToken=expired["AccessToken"]) == \
        "Access Token has expired"
    assert get_tokens(pool, expired["RefreshToken"])[0] == 200  # the refused sign-out did nothing
    pool.fails("GlobalSignOut", "InvalidParameterException")


# --- choice-based sign-in (USER_AUTH) -----------------------------------------------------

def user_auth(pool, username=USER, **params):
    return pool.call("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_AUTH", AuthParameters={"USERNAME": username, **params})


def passwordless_user(pool, **extra):
    pool.admin("config", {"allowed_first_auth_factors": ["PASSWORD", "EMAIL_OTP", "SMS_OTP", "WEB_AUTHN"]})
    pool.admin("users", {"username": USER, "password": PASSWORD,
                         "attributes": {"email": "mia@example.com", "phone_number": "+15555550123"}, **extra})


def test_user_auth_offers_what_the_pool_allows_and_the_user_has(pool):
    pool.admin("users", {"username": USER, "password": PASSWORD, "attributes": {"email": "mia@example.com"}})
    status, answer = user_auth(pool)
    # Cognito's default pool: passwords only.
    assert status == 200 and answer["ChallengeName"] == "SELECT_CHALLENGE", answer
    assert answer["AvailableChallenges"] == ["PASSWORD", "PASSWORD_SRP"] and answer["ChallengeParameters"] == {}
    passwordless_user(pool)
    assert user_auth(pool)[1]["AvailableChallenges"] == ["PASSWORD", "PASSWORD_SRP", "EMAIL_OTP", "SMS_OTP"]
    passwordless_user(pool, passkey=True)
    assert user_auth(pool)[1]["AvailableChallenges"][-1] == "WEB_AUTHN"
    # A preferred factor the user lacks: the choice instead.
    pool.admin("users", {"username": USER, "password": PASSWORD, "attributes": {}})
    assert user_auth(pool, PREFERRED_CHALLENGE="EMAIL_OTP")[1]["AvailableChallenges"] == ["PASSWORD", "PASSWORD_SRP"]
    assert user_auth(pool, PREFERRED_CHALLENGE="FACE_ID")[1]["__type"] == "InvalidParameterException"


@pytest.mark.parametrize("factor,medium", [("EMAIL_OTP", "EMAIL"), ("SMS_OTP", "SMS")])
def test_a_one_time_code_signs_in_once(pool, factor, medium):
    passwordless_user(pool)
    kind = "email" if factor == "EMAIL_OTP" else "sms"
    status, challenge = user_auth(pool, PREFERRED_CHALLENGE=factor)
    assert status == 200 and challenge["ChallengeName"] == factor, challenge
    assert challenge["ChallengeParameters"]["CODE_DELIVERY_DELIVERY_MEDIUM"] == medium
    assert challenge["ChallengeParameters"]["CODE_DELIVERY_DESTINATION"] in ("m***@e***", "+*******0123")
    sent = pool.code(USER, kind)
    # A wrong code leaves the Session to another: the right one signs in, once.
    assert respond(pool, challenge, **{factor + "_CODE": other_code(sent)})[1]["__type"] == "CodeMismatchException"
    assert respond(pool, challenge, **{factor + "_CODE": sent})[0] == 200
    assert respond(pool, challenge, **{factor + "_CODE": sent})[1]["__type"] == "NotAuthorizedException"
    # A code of another Session is no good; the right one works once.
    first = user_auth(pool, PREFERRED_CHALLENGE=factor)[1]
    first_code = pool.code(USER, kind)
    second = user_auth(pool, PREFERRED_CHALLENGE=factor)[1]
    assert respond(pool, second, **{factor + "_CODE": first_code})[1]["__type"] == "CodeMismatchException"
    third = user_auth(pool, PREFERRED_CHALLENGE=factor)[1]
    status, answer = respond(pool, third, **{factor + "_CODE": pool.code(USER, kind)})
    assert status == 200 and "AuthenticationResult" in answer
    assert respond(pool, third, **{factor + "_CODE": pool.code(USER, kind)})[1]["__type"] == "NotAuthorizedException"
    assert respond(pool, first, **{factor + "_CODE": first_code})[0] == 200  # its own Session, still live


def test_an_expired_code_session_is_refused(pool):
    passwordless_user(pool)
    pool.admin("config", {"session_lifetime": 0})
    challenge = user_auth(pool, PREFERRED_CHALLENGE="EMAIL_OTP")[1]
    answer = respond(pool, challenge, EMAIL_OTP_CODE=pool.code(USER, "email"))[1]
    assert answer["__type"] == "NotAuthorizedException" and "expired" in answer["message"]


def test_selecting_a_first_factor(pool):
    passwordless_user(pool)
    select = user_auth(pool)[1]
    assert respond(pool, select, ANSWER="WEB_AUTHN")[1]["__type"] == "InvalidParameterException"
    select = user_auth(pool)[1]
    password = pool.ok("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="SELECT_CHALLENGE",
                       Session=select["Session"], ChallengeResponses={"USERNAME": USER, "ANSWER": "PASSWORD",
                                                                      "PASSWORD": PASSWORD})
    assert "AuthenticationResult" in password
    select = user_auth(pool)[1]
    wrong = respond(pool, select, ANSWER="PASSWORD", PASSWORD="not-" + PASSWORD)[1]
    assert wrong["__type"] == "NotAuthorizedException" and wrong["message"] == "Incorrect username or password."
    select = user_auth(pool)[1]
    email = respond(pool, select, ANSWER="EMAIL_OTP")[1]
    assert email["ChallengeName"] == "EMAIL_OTP"
    assert respond(pool, email, EMAIL_OTP_CODE=pool.code(USER, "email"))[0] == 200


def test_password_srp_in_user_auth_is_pycognitos_srp(pool):
    # The proof pycognito's client makes for USER_SRP_AUTH is what USER_AUTH's PASSWORD_SRP checks.
    passwordless_user(pool)
    srp = srp_client(USER, PASSWORD)
    params = srp.get_auth_params()
    status, challenge = user_auth(pool, PREFERRED_CHALLENGE="PASSWORD_SRP", SRP_A=params["SRP_A"])
    assert status == 200 and challenge["ChallengeName"] == "PASSWORD_VERIFIER" and challenge["Session"], challenge
    status, answer = verify_password(pool, srp.process_challenge(challenge["ChallengeParameters"], params),
                                     Session=challenge["Session"])
    assert status == 200 and "AuthenticationResult" in answer, answer
    wrong = srp_client(USER, "not-" + PASSWORD)
    params = wrong.get_auth_params()
    challenge = user_auth(pool, PREFERRED_CHALLENGE="PASSWORD_SRP", SRP_A=params["SRP_A"])[1]
    assert verify_password(pool, wrong.process_challenge(challenge["ChallengeParameters"], params),
                           Session=challenge["Session"])[1]["__type"] == "NotAuthorizedException"


def test_user_auth_checks_the_secret_hash(pool):
    passwordless_user(pool)
    pool.admin("config", {"client_secret": "s3cr3t"})
    assert user_auth(pool, PREFERRED_CHALLENGE="EMAIL_OTP")[1]["__type"] == "NotAuthorizedException"
    status, challenge = user_auth(pool, PREFERRED_CHALLENGE="EMAIL_OTP", SECRET_HASH=secret_hash("s3cr3t", USER, CLIENT))
    assert status == 200, challenge
    assert respond(pool, challenge, EMAIL_OTP_CODE=pool.code(USER, "email"))[1]["__type"] == "NotAuthorizedException"
    challenge = user_auth(pool, PREFERRED_CHALLENGE="EMAIL_OTP", SECRET_HASH=secret_hash("s3cr3t", USER, CLIENT))[1]
    assert respond(pool, challenge, EMAIL_OTP_CODE=pool.code(USER, "email"),
                   SECRET_HASH=secret_hash("s3cr3t", USER, CLIENT))[0] == 200


# --- custom challenges (CUSTOM_AUTH) ------------------------------------------------------

def custom_auth(pool, username=USER, **params):
    return pool.call("InitiateAuth", ClientId=CLIENT, AuthFlow="CUSTOM_AUTH", AuthParameters={"USERNAME": username, **params})


def test_custom_challenges_take_their_answers_round_by_round(pool):
    pool.admin("users", {"username": USER, "password": PASSWORD})
    pool.admin("config", {"custom_challenges": [{"parameters": {"q": "one"}, "answer": "1"},
                                                {"parameters": {"q": "two"}, "answer": "2"}]})
    status, first = custom_auth(pool)
    assert status == 200 and first["ChallengeName"] == "CUSTOM_CHALLENGE", first
    assert first["ChallengeParameters"] == {"q": "one", "USERNAME": USER, "USER_ID_FOR_SRP": USER}
    second = pool.ok("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="CUSTOM_CHALLENGE", Session=first["Session"],
                     ChallengeResponses={"USERNAME": USER, "ANSWER": "1"})
    assert second["ChallengeParameters"]["q"] == "two"
    # The first round's Session is spent; a wrong answer ends the sign-in.
    assert respond(pool, first, ANSWER="1")[1]["__type"] == "NotAuthorizedException"
    assert respond(pool, second, ANSWER="3")[1] == {"__type": "NotAuthorizedException", "message": "Incorrect username or password."}
    first = custom_auth(pool)[1]
    second = respond(pool, first, ANSWER="1")[1]
    status, answer = respond(pool, second, ANSWER="2")
    assert status == 200 and "AuthenticationResult" in answer


def test_custom_challenges_after_pycognitos_srp(pool):
    pool.admin("users", {"username": USER, "password": PASSWORD})
    pool.admin("config", {"custom_challenges": [{"parameters": {"q": "one"}, "answer": "1"}]})
    srp = srp_client(USER, PASSWORD)
    params = srp.get_auth_params()
    status, challenge = custom_auth(pool, CHALLENGE_NAME="SRP_A", SRP_A=params["SRP_A"])
    assert status == 200 and challenge["ChallengeName"] == "PASSWORD_VERIFIER", challenge
    custom = verify_password(pool, srp.process_challenge(challenge["ChallengeParameters"], params),
                             Session=challenge["Session"])[1]
    assert custom["ChallengeName"] == "CUSTOM_CHALLENGE" and custom["ChallengeParameters"]["q"] == "one"
    assert respond(pool, custom, ANSWER="1")[0] == 200
    wrong = srp_client(USER, "not-" + PASSWORD)
    params = wrong.get_auth_params()
    challenge = custom_auth(pool, CHALLENGE_NAME="SRP_A", SRP_A=params["SRP_A"])[1]
    assert verify_password(pool, wrong.process_challenge(challenge["ChallengeParameters"], params),
                           Session=challenge["Session"])[1]["__type"] == "NotAuthorizedException"
    assert custom_auth(pool, CHALLENGE_NAME="PASSWORD")[1]["__type"] == "InvalidParameterException"


# --- a user's own MFA settings ------------------------------------------------------------

def mfa_of(pool, access):
    answer = pool.ok("GetUser", AccessToken=access)
    return answer.get("UserMFASettingList"), answer.get("PreferredMfaSetting")


def test_mfa_settings_by_the_users_access_token(pool):
    pool.admin("users", {"username": USER, "password": PASSWORD, "attributes": {"email": "mia@example.com"}})
    access = pool.tokens(USER)["AccessToken"]
    assert mfa_of(pool, access) == (None, None)  # left out, as Cognito does
    # An authenticator: associated, verified, then enabled and preferred.
    pool.fails("SetUserMFAPreference", "InvalidParameterException", AccessToken=access,
               SoftwareTokenMfaSettings={"Enabled": True, "PreferredMfa": True})
    secret = pool.ok("AssociateSoftwareToken", AccessToken=access)["SecretCode"]
    assert pool.fails("VerifySoftwareToken", "EnableSoftwareTokenMFAException", AccessToken=access,
                      UserCode=not_a_current_code(secret)) == "Code mismatch"
    assert pool.ok("VerifySoftwareToken", AccessToken=access, UserCode=pyotp.TOTP(secret).now())["Status"] == "SUCCESS"
    assert mfa_of(pool, access) == (None, None)  # verified is not enabled
    pool.ok("SetUserMFAPreference", AccessToken=access, SoftwareTokenMfaSettings={"Enabled": True, "PreferredMfa": True},
            EmailMfaSettings={"Enabled": True, "PreferredMfa": False})
    assert mfa_of(pool, access) == (["SOFTWARE_TOKEN_MFA", "EMAIL_OTP"], "SOFTWARE_TOKEN_MFA")
    # The preferred one is asked at sign-in; without a preference, a choice.
    assert after_password(pool, "USER_PASSWORD_AUTH")["ChallengeName"] == "SOFTWARE_TOKEN_MFA"
    pool.ok("SetUserMFAPreference", AccessToken=access, SoftwareTokenMfaSettings={"Enabled": True, "PreferredMfa": False})
    assert mfa_of(pool, access) == (["SOFTWARE_TOKEN_MFA", "EMAIL_OTP"], None)
    assert after_password(pool, "USER_PASSWORD_AUTH")["ChallengeName"] == "SELECT_MFA_TYPE"
    pool.ok("SetUserMFAPreference", AccessToken=access, SoftwareTokenMfaSettings={"Enabled": False, "PreferredMfa": False},
            EmailMfaSettings={"Enabled": False, "PreferredMfa": False})
    assert mfa_of(pool, access) == (None, None)
    assert "AuthenticationResult" in after_password(pool, "USER_PASSWORD_AUTH")


def test_mfa_settings_refused_as_cognito_refuses_them(pool):
    pool.admin("users", {"username": USER, "password": PASSWORD, "attributes": {"email": "mia@example.com"}})
    access = pool.tokens(USER)["AccessToken"]
    assert pool.fails("SetUserMFAPreference", "InvalidParameterException", AccessToken=access,
                      SMSMfaSettings={"Enabled": True}) == "User does not have delivery config set to turn on SMS_MFA"
    assert pool.fails("SetUserMFAPreference", "InvalidParameterException", AccessToken=access,
                      EmailMfaSettings={"Enabled": False, "PreferredMfa": True}) == "EMAIL_OTP cannot be preferred and disabled"
    pool.admin("config", {"email_mfa": False})
    assert pool.fails("SetUserMFAPreference", "InvalidParameterException", AccessToken=access,
                      EmailMfaSettings={"Enabled": True}) == "Email MFA is not enabled for this user pool"
    assert pool.fails("GetUser", "NotAuthorizedException", AccessToken="x") == "Invalid Access Token"
    assert mfa_of(pool, access) == (None, None)  # nothing changed by a refusal


# --- remembered devices (config device_tracking), the device SRP checked against pycognito ---

DEVICE_KEY_PATTERN = r"us-east-1_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
DEVICE_NOT_FOUND = {"__type": "ResourceNotFoundException", "message": "Device does not exist."}
INVALID_REFRESH = {"__type": "NotAuthorizedException", "message": "Invalid Refresh Token"}
# Salts whose padHex differs: top bit set (a leading 00), an odd number of digits, a plain one.
DEVICE_SALTS = [0x80 << 120 | 0xABCDEF, 0x0ABC << 112 | 1, 0x1234 << 112 | 0x5678]


def tracked_user(pool, mode="always", mfa="totp", username=USER):
    """A pool tracking devices and a user (with TOTP MFA unless told): the user's TOTP secret."""
    pool.admin("config", {"device_tracking": mode})
    pool.admin("users", {"username": username, "password": PASSWORD, "mfa": mfa})
    return pool.admin(f"users?username={urllib.parse.quote(username)}")["totp_secret"]


def finish_mfa(pool, answer, secret, username=USER):
    """The tokens after the TOTP challenge `answer` must be (or at once, for a user without MFA)."""
    if secret is None:
        assert "AuthenticationResult" in answer, answer
        return answer["AuthenticationResult"]
    assert answer.get("ChallengeName") == "SOFTWARE_TOKEN_MFA", answer
    status, done = respond(pool, answer, username=username, SOFTWARE_TOKEN_MFA_CODE=pyotp.TOTP(secret).now())
    assert status == 200, done
    return done["AuthenticationResult"]


def new_device(pool, secret, username=USER):
    """A password sign-in without a device: its tokens, which name a new one."""
    status, answer = pool.sign_in(username, PASSWORD)
    assert status == 200, answer
    result = finish_mfa(pool, answer, secret, username)
    assert set(result["NewDeviceMetadata"]) == {"DeviceKey", "DeviceGroupKey"}
    return result


def confirm(pool, result, name=None):
    """ConfirmDevice of the device `result` names, with pycognito's verifier: (device password, answer)."""
    meta = result["NewDeviceMetadata"]
    password, config = aws_srp.generate_hash_device(meta["DeviceGroupKey"], meta["DeviceKey"])
    extra = {} if name is None else {"DeviceName": name}
    answer = pool.ok("ConfirmDevice", AccessToken=result["AccessToken"], DeviceKey=meta["DeviceKey"],
                     DeviceSecretVerifierConfig=config, **extra)
    return password, answer


def device_client(meta, device_password, username=USER, password=PASSWORD):
    return AWSSRP(username, password, POOL_ID, CLIENT, client=object(), device_key=meta["DeviceKey"],
                  device_group_key=meta["DeviceGroupKey"], device_password=device_password)


def device_srp(pool, srp, answer):
    """The DEVICE_SRP_AUTH step after `answer`, sent as amazon-cognito-identity-js sends it
    (with the Session): the DEVICE_PASSWORD_VERIFIER challenge."""
    assert answer.get("ChallengeName") == "DEVICE_SRP_AUTH", answer
    assert answer["ChallengeParameters"] == {"USERNAME": USER, "USER_ID_FOR_SRP": USER} and answer["Session"]
    status, challenge = pool.call("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="DEVICE_SRP_AUTH",
                                  Session=answer["Session"], ChallengeResponses={
                                      "USERNAME": USER, "DEVICE_KEY": srp.device_key,
                                      "SRP_A": aws_srp.long_to_hex(srp.large_a_value)})
    assert status == 200 and challenge["ChallengeName"] == "DEVICE_PASSWORD_VERIFIER", challenge
    return challenge


def verify_device(pool, srp, challenge):
    """pycognito's answer to DEVICE_PASSWORD_VERIFIER, with the Session if the challenge had one."""
    extra = {"Session": challenge["Session"]} if "Session" in challenge else {}
    return pool.call("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="DEVICE_PASSWORD_VERIFIER",
                     ChallengeResponses=srp.process_device_challenge(challenge["ChallengeParameters"]), **extra)


def device_sign_in(pool, srp):
    """pycognito's USER_SRP_AUTH with its device: (status, answer) of the device's proof."""
    params = srp.get_auth_params()
    assert params["DEVICE_KEY"] == srp.device_key
    status, challenge = pool.call("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_SRP_AUTH", AuthParameters=params)
    assert status == 200, challenge
    status, answer = verify_password(pool, srp.process_challenge(challenge["ChallengeParameters"], params))
    assert status == 200, answer
    return verify_device(pool, srp, device_srp(pool, srp, answer))


def list_devices(pool, access, **extra):
    return pool.ok("ListDevices", AccessToken=access, **extra)


def attributes_of(device):
    return {a["Name"]: a["Value"] for a in device["DeviceAttributes"]}


def fixed_device_salt(monkeypatch, salt):
    # generate_hash_device draws its salt with get_random(16); 16 bytes suffice for these.
    monkeypatch.setattr(aws_srp, "get_random", lambda nbytes: salt)


def test_java_doubles_with_milliseconds():
    assert java_double(1547146396.734) == "1.547146396734E9"
    assert java_double(1547146396.7) == "1.5471463967E9"
    assert java_double(1547146390.0) == "1.54714639E9" == java_double(1547146390)
    assert java_double(1000000000) == "1.0E9" and java_double(5) == "5.0" and java_double(5.25) == "5.25"
    assert json.loads(java_double(1547146396.734)) == 1547146396.734


@pytest.mark.parametrize("salt", DEVICE_SALTS)
def test_the_device_verifier_is_pycognitos(monkeypatch, salt):
    """generate_hash_device's verifier is the double's srp_verifier with the
    group key as pool name and the device key as user name."""
    fixed_device_salt(monkeypatch, salt)
    password, config = aws_srp.generate_hash_device("-GroupKey1", "us-east-1_device")
    salt_bytes = base64.b64decode(config["Salt"])
    assert salt_bytes.hex() == aws_srp.pad_hex(salt)
    verifier = int.from_bytes(base64.b64decode(config["PasswordVerifier"]), "big")
    assert verifier == srp_verifier("-GroupKey1", "us-east-1_device", password, salt_bytes.hex())
    assert verifier != srp_verifier("-GroupKey1", "us-east-1_device", password + "x", salt_bytes.hex())
    assert verifier != srp_verifier("-GroupKey2", "us-east-1_device", password, salt_bytes.hex())
    # padHex: the bytes read as a signed number (as Java's BigInteger would) are still the verifier.
    assert int.from_bytes(base64.b64decode(config["PasswordVerifier"]), "big", signed=True) == verifier


@pytest.mark.parametrize("salt", DEVICE_SALTS)
def test_a_remembered_device_signs_in_with_pycognitos_device_srp_and_no_mfa(pool, monkeypatch, salt):
    secret = tracked_user(pool, "always")
    # The first sign-in (pycognito's password SRP, then TOTP) brings a new device.
    status, answer = srp_sign_in(pool, USER)
    assert status == 200, answer
    first = finish_mfa(pool, answer, secret)
    meta = first["NewDeviceMetadata"]
    assert re.fullmatch(DEVICE_KEY_PATTERN, meta["DeviceKey"]), meta
    assert re.fullmatch(r"-[A-Za-z0-9]{8}", meta["DeviceGroupKey"]), meta
    assert claims(first["AccessToken"])["device_key"] == meta["DeviceKey"]
    fixed_device_salt(monkeypatch, salt)
    device_password, confirmed = confirm(pool, first, name="laptop")
    assert confirmed == {"UserConfirmationNecessary": False}  # "always": remembered at once
    [info] = pool.admin(f"devices?username={USER}")["devices"]
    assert (info["device_key"], info["confirmed"], info["remembered"], info["name"]) == \
        (meta["DeviceKey"], True, True, "laptop")

    # Signing in with it: the device's own SRP instead of the TOTP code.
    srp = device_client(meta, device_password)
    params = srp.get_auth_params()
    challenge = srp_challenge(pool, srp)[1]
    answer = verify_password(pool, srp.process_challenge(challenge["ChallengeParameters"], params))[1]
    device_challenge = device_srp(pool, srp, answer)
    cp = device_challenge["ChallengeParameters"]
    assert set(cp) == {"SRP_B", "SALT", "SECRET_BLOCK", "USERNAME", "DEVICE_KEY", "USER_ID_FOR_SRP"}
    assert (cp["DEVICE_KEY"], cp["USERNAME"], cp["USER_ID_FOR_SRP"]) == (meta["DeviceKey"], USER, USER)
    # The salt ConfirmDevice gave, written as a number (no leading zeros) like the user's SALT.
    assert cp["SALT"] == format(salt, "x") and aws_srp.pad_hex(cp["SALT"]) == aws_srp.pad_hex(salt)
    assert "Session" not in device_challenge  # like PASSWORD_VERIFIER: the SECRET_BLOCK is the state
    status, done = verify_device(pool, srp, device_challenge)
    assert status == 200, done
    result = done["AuthenticationResult"]
    assert "NewDeviceMetadata" not in result and result["RefreshToken"]
    assert claims(result["AccessToken"])["device_key"] == meta["DeviceKey"]
    calls = pool.admin("stats")["calls"]
    assert calls["RespondToAuthChallenge:SOFTWARE_TOKEN_MFA"] == 1  # only the first sign-in's
    assert calls["RespondToAuthChallenge:DEVICE_PASSWORD_VERIFIER"] == 1
    [info] = pool.admin(f"devices?username={USER}")["devices"]
    assert info["last_authenticated"] > info["created"]

    # The wrong device password: refused, and why is in stats only.
    status, answer = device_sign_in(pool, device_client(meta, device_password[::-1]))
    assert (status, answer) == (400, {"__type": "NotAuthorizedException", "message": "Incorrect username or password."})
    assert "wrong device password" in last_detail(pool)
    # Nor may another device's key (or group key) stand in.
    other = dict(meta, DeviceGroupKey="-" + meta["DeviceGroupKey"][1:][::-1])
    assert device_sign_in(pool, device_client(other, device_password))[1]["__type"] == "NotAuthorizedException"
    # USER_PASSWORD_AUTH with a remembered device leads to the device SRP too.
    answer = pool.ok("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_PASSWORD_AUTH",
                     AuthParameters={"USERNAME": USER, "PASSWORD": PASSWORD, "DEVICE_KEY": meta["DeviceKey"]})
    assert verify_device(pool, srp, device_srp(pool, srp, answer))[0] == 200


def test_the_device_proof_checks_like_the_password_proof(pool):
    secret = tracked_user(pool, "always", mfa=None)
    meta = new_device(pool, secret)
    device_password, _ = confirm(pool, meta)
    meta = meta["NewDeviceMetadata"]
    srp = device_client(meta, device_password)

    def remembered_sign_in():
        return pool.ok("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_PASSWORD_AUTH",
                       AuthParameters={"USERNAME": USER, "PASSWORD": PASSWORD, "DEVICE_KEY": meta["DeviceKey"]})

    # A user without MFA is asked for the device's proof all the same.
    answer = remembered_sign_in()
    assert answer["ChallengeName"] == "DEVICE_SRP_AUTH"
    # DEVICE_SRP_AUTH needs its Session, and the sign-in's own device.
    status, refused = pool.call("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="DEVICE_SRP_AUTH",
                                ChallengeResponses={"USERNAME": USER, "DEVICE_KEY": meta["DeviceKey"], "SRP_A": "abc"})
    assert refused == {"__type": "InvalidParameterException", "message": "Missing required parameter Session"}
    assert respond(pool, answer, DEVICE_KEY="us-east-1_other", SRP_A="abc")[1]["__type"] == "NotAuthorizedException"
    assert respond(pool, answer, DEVICE_KEY=meta["DeviceKey"], SRP_A="abc")[1]["message"] == \
        "Invalid session for the user, session can only be used once."
    assert respond(pool, remembered_sign_in(), DEVICE_KEY=meta["DeviceKey"])[1]["message"] == \
        "Missing required parameter SRP_A"

    challenge = device_srp(pool, srp, remembered_sign_in())
    proof = srp.process_device_challenge(challenge["ChallengeParameters"])
    stale = dict(proof, TIMESTAMP=cognito_time(time.time() - 400))
    status, answer = pool.call("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="DEVICE_PASSWORD_VERIFIER",
                               ChallengeResponses=stale)
    assert answer["message"] == "Incorrect username or password." and "more than 300 s" in last_detail(pool)
    # A PASSWORD_VERIFIER's SECRET_BLOCK is not a device challenge's.
    srp_params, user_challenge = srp_challenge(pool, srp_client(USER, PASSWORD))
    challenge = device_srp(pool, srp, remembered_sign_in())
    proof = dict(srp.process_device_challenge(challenge["ChallengeParameters"]),
                 PASSWORD_CLAIM_SECRET_BLOCK=user_challenge["ChallengeParameters"]["SECRET_BLOCK"])
    assert pool.call("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="DEVICE_PASSWORD_VERIFIER",
                     ChallengeResponses=proof)[1]["message"] == "Invalid session for the user."
    # With config srp_challenge_session the challenge carries a Session, which the answer may send.
    pool.admin("config", {"srp_challenge_session": True})
    challenge = device_srp(pool, srp, remembered_sign_in())
    assert challenge["Session"]
    assert verify_device(pool, srp, challenge)[0] == 200


def test_new_device_metadata_only_with_tracking_and_only_at_sign_in(pool):
    assert pool.admin("config")["device_tracking"] is None
    pool.admin("users", {"username": USER, "password": PASSWORD})
    # Off: no device, and a DEVICE_KEY (even a made-up one) is ignored.
    result = pool.tokens(USER, DEVICE_KEY="us-east-1_made-up")
    assert "NewDeviceMetadata" not in result and "device_key" not in claims(result["AccessToken"])
    assert pool.admin(f"devices?username={USER}")["devices"] == []
    refreshed = pool.ok("GetTokensFromRefreshToken", ClientId=CLIENT, RefreshToken=result["RefreshToken"],
                        DeviceKey="us-east-1_made-up")["AuthenticationResult"]
    assert "device_key" not in claims(refreshed["AccessToken"])

    tracked_user(pool, "opt_in", mfa=None)
    first, second = new_device(pool, None), new_device(pool, None)
    assert first["NewDeviceMetadata"]["DeviceKey"] != second["NewDeviceMetadata"]["DeviceKey"]
    key = first["NewDeviceMetadata"]["DeviceKey"]
    confirm(pool, first)
    # Refreshes never name a device, and keep the sign-in's.
    for status, answer in (pool.refresh(first["RefreshToken"], DEVICE_KEY=key),
                           get_tokens(pool, first["RefreshToken"], DeviceKey=key)):
        assert status == 200, answer
        assert "NewDeviceMetadata" not in answer["AuthenticationResult"]
        assert claims(answer["AuthenticationResult"]["AccessToken"])["device_key"] == key
    # Nor does a sign-in with a device of the user's.
    signed_in = pool.tokens(USER, DEVICE_KEY=key)
    assert "NewDeviceMetadata" not in signed_in and claims(signed_in["AccessToken"])["device_key"] == key
    devices = pool.admin(f"devices?username={USER}")["devices"]
    assert [(d["device_key"], d["confirmed"]) for d in devices] == [
        (key, True), (second["NewDeviceMetadata"]["DeviceKey"], False)]
    assert all(set(d) == {"device_key", "device_group_key", "name", "confirmed", "remembered", "created",
                          "last_modified", "last_authenticated"} for d in devices)


@pytest.mark.parametrize("patch", [{"device_tracking": "yes"}, {"device_tracking": True},
                                   {"device_tracking": "Always"}])
def test_bad_device_tracking_is_refused(pool, patch):
    assert "error" in pool.admin("config", patch, status=400)
    assert pool.admin("config")["device_tracking"] is None


def test_opt_in_asks_mfa_until_the_device_is_remembered(pool):
    secret = tracked_user(pool, "opt_in")
    first = new_device(pool, secret)
    meta = first["NewDeviceMetadata"]
    device_password, answer = confirm(pool, first)
    assert answer == {"UserConfirmationNecessary": True}
    [listed] = list_devices(pool, first["AccessToken"])["Devices"]
    assert attributes_of(listed)["dev:device_remembered_status"] == "not_remembered"

    # Confirmed but not remembered: MFA as usual, then tokens of that device and no new one.
    status, answer = pool.sign_in(USER, PASSWORD, DEVICE_KEY=meta["DeviceKey"])
    result = finish_mfa(pool, answer, secret)
    assert "NewDeviceMetadata" not in result and claims(result["AccessToken"])["device_key"] == meta["DeviceKey"]
    # The same through pycognito's SRP: its PASSWORD_VERIFIER answer carries DEVICE_KEY too.
    srp = device_client(meta, device_password)
    params, challenge = srp_challenge(pool, srp)
    answer = verify_password(pool, srp.process_challenge(challenge["ChallengeParameters"], params))[1]
    assert "NewDeviceMetadata" not in finish_mfa(pool, answer, secret)

    assert pool.ok("UpdateDeviceStatus", AccessToken=result["AccessToken"], DeviceKey=meta["DeviceKey"],
                   DeviceRememberedStatus="remembered") == {}
    [listed] = list_devices(pool, result["AccessToken"])["Devices"]
    assert attributes_of(listed)["dev:device_remembered_status"] == "remembered"
    assert listed["DeviceLastModifiedDate"] > listed["DeviceCreateDate"]
    status, answer = device_sign_in(pool, srp)
    assert status == 200 and "AuthenticationResult" in answer, answer

    pool.ok("UpdateDeviceStatus", AccessToken=result["AccessToken"], DeviceKey=meta["DeviceKey"],
            DeviceRememberedStatus="not_remembered")
    assert pool.sign_in(USER, PASSWORD, DEVICE_KEY=meta["DeviceKey"])[1]["ChallengeName"] == "SOFTWARE_TOKEN_MFA"


def test_devices_the_user_does_not_have_are_refused(pool):
    secret = tracked_user(pool, "always", mfa=None)
    tracked_user(pool, "always", mfa=None, username="other")
    mine, unconfirmed, theirs = new_device(pool, secret), new_device(pool, secret), new_device(pool, None, "other")
    confirm(pool, mine)
    confirm(pool, theirs)
    key = mine["NewDeviceMetadata"]["DeviceKey"]

    def password_sign_in(device_key, password=PASSWORD):
        return pool.sign_in(USER, password, DEVICE_KEY=device_key)

    for device_key in ("us-east-1_never-issued", unconfirmed["NewDeviceMetadata"]["DeviceKey"],
                       theirs["NewDeviceMetadata"]["DeviceKey"]):
        assert password_sign_in(device_key)[1] == DEVICE_NOT_FOUND, device_key
        # The password comes first: a wrong one tells nothing about the device.
        assert password_sign_in(device_key, "Wrong-Pass-9")[1]["message"] == "Incorrect username or password."
        # SRP: refused at the proof of the password, the first step that knows it.
        srp = srp_client(USER, PASSWORD)
        params = dict(srp.get_auth_params(), DEVICE_KEY=device_key)
        status, challenge = pool.call("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_SRP_AUTH", AuthParameters=params)
        assert status == 200, challenge
        assert verify_password(pool, srp.process_challenge(challenge["ChallengeParameters"], params))[1] == \
            DEVICE_NOT_FOUND
    # Two different keys in one SRP sign-in are refused.
    srp = srp_client(USER, PASSWORD)
    params = dict(srp.get_auth_params(), DEVICE_KEY=key)
    challenge = pool.call("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_SRP_AUTH", AuthParameters=params)[1]
    proof = dict(srp.process_challenge(challenge["ChallengeParameters"], params), DEVICE_KEY=key + "x")
    assert verify_password(pool, proof)[1]["__type"] == "InvalidParameterException"

    # Forgotten from elsewhere, then by the user: the key no longer works, nor its refresh tokens.
    assert password_sign_in(key)[1]["ChallengeName"] == "DEVICE_SRP_AUTH"
    pool.admin("forget_device", {"username": USER, "device_key": key})
    assert password_sign_in(key)[1] == DEVICE_NOT_FOUND
    assert pool.refresh(mine["RefreshToken"], DEVICE_KEY=key)[1] == INVALID_REFRESH
    assert "forgotten" in last_detail(pool)
    assert pool.admin("forget_device", {"username": USER, "device_key": key}, status=404)
    fresh = new_device(pool, secret)
    confirm(pool, fresh)
    fresh_key = fresh["NewDeviceMetadata"]["DeviceKey"]
    assert pool.ok("ForgetDevice", AccessToken=fresh["AccessToken"], DeviceKey=fresh_key) == {}
    assert password_sign_in(fresh_key)[1] == DEVICE_NOT_FOUND
    assert get_tokens(pool, fresh["RefreshToken"], DeviceKey=fresh_key)[1] == INVALID_REFRESH
    # With tracking off again, a DEVICE_KEY is ignored.
    pool.admin("config", {"device_tracking": None})
    assert "AuthenticationResult" in password_sign_in(fresh_key)[1]


def test_a_device_bound_refresh_token_needs_its_device(pool):
    secret = tracked_user(pool, "always")
    signed_in = new_device(pool, secret)
    confirm(pool, signed_in)
    key, token = signed_in["NewDeviceMetadata"]["DeviceKey"], signed_in["RefreshToken"]
    for sent in ({}, {"DEVICE_KEY": "us-east-1_another"}):
        assert pool.refresh(token, **sent)[1] == INVALID_REFRESH
    assert get_tokens(pool, token)[1] == INVALID_REFRESH
    assert "no DEVICE_KEY was sent" in last_detail(pool)
    assert get_tokens(pool, token, DeviceKey="us-east-1_another")[1] == INVALID_REFRESH
    assert pool.refresh(token, DEVICE_KEY=key)[0] == 200
    assert get_tokens(pool, token, DeviceKey=key)[0] == 200
    records = [r for r in pool.admin("stats")["requests"] if r["action"] == "GetTokensFromRefreshToken"]
    assert [(r["device_key_sent"], r["status"]) for r in records] == [(False, 400), (True, 400), (True, 200)]
    assert "DEVICE_KEY" in [r for r in pool.admin("stats")["requests"]
                            if r["auth_flow"] == "REFRESH_TOKEN_AUTH"][-1]["parameter_names"]
    # The token endpoint too (form field device_key).
    def token_endpoint(**form):
        req = urllib.request.Request(pool.url + "oauth2/token", method="POST", data=urllib.parse.urlencode(
            {"grant_type": "refresh_token", "client_id": CLIENT, "refresh_token": token, **form}).encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())
    assert token_endpoint() == (400, {"error": "invalid_grant", "error_description": "Invalid Refresh Token"})
    status, answer = token_endpoint(device_key=key)
    assert status == 200 and claims(answer["access_token"])["device_key"] == key, answer

    # A device never confirmed: its tokens do not refresh, with its key or without.
    unconfirmed = new_device(pool, secret)
    assert pool.refresh(unconfirmed["RefreshToken"], DEVICE_KEY=unconfirmed["NewDeviceMetadata"]["DeviceKey"])[1] \
        == INVALID_REFRESH
    assert "never confirmed" in last_detail(pool)
    # Still bound after tracking is switched off.
    pool.admin("config", {"device_tracking": None})
    assert get_tokens(pool, token)[1] == INVALID_REFRESH and get_tokens(pool, token, DeviceKey=key)[0] == 200


def test_confirm_device_refusals(pool):
    secret = tracked_user(pool, "always", mfa=None)
    tracked_user(pool, "always", mfa=None, username="other")
    signed_in, theirs = new_device(pool, secret), new_device(pool, None, "other")
    meta = signed_in["NewDeviceMetadata"]
    _, good = aws_srp.generate_hash_device(meta["DeviceGroupKey"], meta["DeviceKey"])

    def refused(error, config=good, **body):
        fields = {"AccessToken": signed_in["AccessToken"], "DeviceKey": meta["DeviceKey"],
                  "DeviceSecretVerifierConfig": config, **body}
        return pool.fails("ConfirmDevice", error, **{k: v for k, v in fields.items() if v is not None})

    assert refused("NotAuthorizedException", AccessToken="garbage") == "Invalid Access Token"
    assert refused("NotAuthorizedException", AccessToken=signed_in["IdToken"]) == "Invalid Access Token"
    assert refused("ResourceNotFoundException", DeviceKey=theirs["NewDeviceMetadata"]["DeviceKey"]) == \
        "Device does not exist."
    assert refused("ResourceNotFoundException", DeviceKey="us-east-1_never-issued") == "Device does not exist."
    refused("InvalidParameterException", DeviceKey=None)

    def b64(raw):
        return base64.b64encode(raw).decode()
    for config in (None, {}, {"PasswordVerifier": good["PasswordVerifier"]}, {"Salt": good["Salt"]},
                   dict(good, PasswordVerifier="not base64!"), dict(good, Salt="%%"), dict(good, Salt=""),
                   dict(good, PasswordVerifier=b64(b"\0")),                         # 0
                   dict(good, PasswordVerifier=b64(bytes.fromhex(pad_hex(SRP_N)))),  # N
                   # g^x without padHex's 00: a negative number as Java reads it.
                   dict(good, PasswordVerifier=b64(b"\x80" + b"\x01" * 383))):
        refused("InvalidParameterException", config=config)
    refused("InvalidParameterException", DeviceName="")
    assert pool.admin(f"devices?username={USER}")["devices"][0]["confirmed"] is False  # nothing stuck

    assert pool.ok("ConfirmDevice", AccessToken=signed_in["AccessToken"], DeviceKey=meta["DeviceKey"],
                   DeviceSecretVerifierConfig=good) == {"UserConfirmationNecessary": False}
    assert refused("InvalidParameterException") == "Device has already been confirmed."
    [listed] = list_devices(pool, signed_in["AccessToken"])["Devices"]
    assert attributes_of(listed)["device_name"] == meta["DeviceKey"]  # no DeviceName given


def test_list_devices_shape_and_pagination(pool):
    secret = tracked_user(pool, "always", mfa=None)
    tracked_user(pool, "always", mfa=None, username="other")
    before = time.time()
    keys = []
    for name in ("one", "two", "three"):
        signed_in = new_device(pool, secret)
        confirm(pool, signed_in, name=name)
        keys.append(signed_in["NewDeviceMetadata"]["DeviceKey"])
    new_device(pool, secret)  # unconfirmed: not listed
    access = signed_in["AccessToken"]

    status, headers, raw = pool.raw("ListDevices", AccessToken=access)
    assert status == 200
    # Dates are JSON numbers written as Cognito writes them (1.547146396734E9).
    assert re.search(r'"DeviceCreateDate": [0-9]\.[0-9]+E9', raw.decode()), raw
    answer = json.loads(raw)
    assert list(answer) == ["Devices"]  # all of them: no PaginationToken
    assert [d["DeviceKey"] for d in answer["Devices"]] == keys  # oldest first
    first = answer["Devices"][0]
    assert set(first) == {"DeviceKey", "DeviceAttributes", "DeviceCreateDate", "DeviceLastModifiedDate",
                          "DeviceLastAuthenticatedDate"}
    assert first["DeviceAttributes"] == [
        {"Name": "device_status", "Value": "valid"}, {"Name": "device_name", "Value": "one"},
        {"Name": "dev:device_remembered_status", "Value": "remembered"},
        {"Name": "last_ip_used", "Value": "127.0.0.1"}]
    for field in ("DeviceCreateDate", "DeviceLastModifiedDate", "DeviceLastAuthenticatedDate"):
        assert isinstance(first[field], float) and before - 1 <= first[field] <= time.time() + 1, field

    page = list_devices(pool, access, Limit=2)
    assert [d["DeviceKey"] for d in page["Devices"]] == keys[:2] and page["PaginationToken"]
    rest = list_devices(pool, access, Limit=2, PaginationToken=page["PaginationToken"])
    assert [d["DeviceKey"] for d in rest["Devices"]] == keys[2:] and "PaginationToken" not in rest
    assert [d["DeviceKey"] for d in list_devices(pool, access, Limit=1,
                                                 PaginationToken=page["PaginationToken"])["Devices"]] == keys[2:]
    other_access = pool.tokens("other")["AccessToken"]
    assert list_devices(pool, other_access) == {"Devices": []}
    pool.fails("ListDevices", "InvalidParameterException", AccessToken=other_access,
               PaginationToken=page["PaginationToken"])  # another user's
    pool.fails("ListDevices", "InvalidParameterException", AccessToken=access, PaginationToken="bm9wZQ==")
    for limit in (0, 61, "5", True, -1):
        pool.fails("ListDevices", "InvalidParameterException", AccessToken=access, Limit=limit)
    assert pool.fails("ListDevices", "NotAuthorizedException", AccessToken="garbage") == "Invalid Access Token"
    pool.fails("ListDevices", "InvalidParameterException")
    assert len(list_devices(pool, access, Limit=60)["Devices"]) == 3


def test_update_device_status_and_forget_device(pool):
    secret = tracked_user(pool, "always", mfa=None)
    tracked_user(pool, "always", mfa=None, username="other")
    signed_in, theirs = new_device(pool, secret), new_device(pool, None, "other")
    confirm(pool, signed_in)
    confirm(pool, theirs)
    access, key = signed_in["AccessToken"], signed_in["NewDeviceMetadata"]["DeviceKey"]
    their_key = theirs["NewDeviceMetadata"]["DeviceKey"]
    unconfirmed = new_device(pool, secret)["NewDeviceMetadata"]["DeviceKey"]

    for status in ("Remembered", "forgotten", None):
        pool.fails("UpdateDeviceStatus", "InvalidParameterException", AccessToken=access, DeviceKey=key,
                   **({} if status is None else {"DeviceRememberedStatus": status}))
    for action, extra in (("UpdateDeviceStatus", {"DeviceRememberedStatus": "not_remembered"}), ("ForgetDevice", {})):
        for other_key in (their_key, unconfirmed, "us-east-1_never-issued"):
            assert pool.call(action, AccessToken=access, DeviceKey=other_key, **extra)[1] == DEVICE_NOT_FOUND
        assert pool.fails(action, "NotAuthorizedException", AccessToken="garbage", DeviceKey=key, **extra) == \
            "Invalid Access Token"
        pool.fails(action, "InvalidParameterException", AccessToken=access, **extra)
    pool.ok("UpdateDeviceStatus", AccessToken=access, DeviceKey=key, DeviceRememberedStatus="not_remembered")
    assert [d["remembered"] for d in pool.admin(f"devices?username={USER}")["devices"]] == [False, False]
    assert pool.ok("ForgetDevice", AccessToken=access, DeviceKey=key) == {}
    assert list_devices(pool, access) == {"Devices": []}
    assert pool.call("ForgetDevice", AccessToken=access, DeviceKey=key)[1] == DEVICE_NOT_FOUND
    assert pool.call("UpdateDeviceStatus", AccessToken=access, DeviceKey=key,
                     DeviceRememberedStatus="remembered")[1] == DEVICE_NOT_FOUND
    # The other user's device is untouched; the admin routes' refusals.
    assert [d["device_key"] for d in pool.admin("devices?username=other")["devices"]] == [their_key]
    pool.admin("devices?username=nobody", status=404)
    pool.admin("forget_device", {"username": USER, "device_key": their_key}, status=404)
    pool.admin("forget_device", {"username": "nobody", "device_key": their_key}, status=404)
    pool.admin("reset", {})
    pool.admin("users", {"username": USER, "password": PASSWORD})
    assert pool.admin(f"devices?username={USER}")["devices"] == []


def test_device_secrets_are_never_recorded(pool):
    secret = tracked_user(pool, "always")
    signed_in = new_device(pool, secret)
    meta = signed_in["NewDeviceMetadata"]
    device_password, config = aws_srp.generate_hash_device(meta["DeviceGroupKey"], meta["DeviceKey"])
    pool.ok("ConfirmDevice", AccessToken=signed_in["AccessToken"], DeviceKey=meta["DeviceKey"],
            DeviceSecretVerifierConfig=config)
    srp = device_client(meta, device_password)
    params = srp.get_auth_params()
    challenge = srp_challenge(pool, srp)[1]
    answer = verify_password(pool, srp.process_challenge(challenge["ChallengeParameters"], params))[1]
    device_challenge = device_srp(pool, srp, answer)
    proof = srp.process_device_challenge(device_challenge["ChallengeParameters"])
    status, done = pool.call("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="DEVICE_PASSWORD_VERIFIER",
                             ChallengeResponses=proof)
    assert status == 200, done
    stats = pool.admin("stats")
    recorded = json.dumps(stats)
    for value in (device_password, config["PasswordVerifier"], config["Salt"], proof["PASSWORD_CLAIM_SIGNATURE"],
                  proof["PASSWORD_CLAIM_SECRET_BLOCK"], aws_srp.long_to_hex(srp.large_a_value), PASSWORD):
        assert value not in recorded
    verifier = [r for r in stats["requests"] if r.get("challenge") == "DEVICE_PASSWORD_VERIFIER"][-1]
    assert verifier["parameter_names"] == sorted(proof)
    assert [r for r in stats["requests"] if r.get("challenge") == "DEVICE_SRP_AUTH"][-1]["parameter_names"] == \
        ["DEVICE_KEY", "SRP_A", "USERNAME"]
    assert stats["calls"]["ConfirmDevice"] == 1
    # Nor does the admin view show the verifier or the salt.
    [info] = pool.admin(f"devices?username={USER}")["devices"]
    assert config["PasswordVerifier"] not in json.dumps(info) and "verifier" not in info and "salt" not in info


def test_passwordless_and_custom_sign_ins_bind_the_device_without_its_srp(pool):
    tracked_user(pool, "always", mfa=None)
    pool.admin("config", {"allowed_first_auth_factors": ["PASSWORD", "EMAIL_OTP"],
                          "custom_challenges": [{"parameters": {"q": "one"}, "answer": "1"}]})
    pool.admin("users", {"username": USER, "password": PASSWORD, "attributes": {"email": "mia@example.com"}})
    signed_in = new_device(pool, None)
    confirm(pool, signed_in)
    key = signed_in["NewDeviceMetadata"]["DeviceKey"]

    def one_time_code(device_key):
        params = {} if device_key is None else {"DEVICE_KEY": device_key}
        challenge = user_auth(pool, PREFERRED_CHALLENGE="EMAIL_OTP", **params)[1]
        return respond(pool, challenge, EMAIL_OTP_CODE=pool.code(USER, "email"))

    def custom(device_key):
        params = {} if device_key is None else {"DEVICE_KEY": device_key}
        return respond(pool, custom_auth(pool, **params)[1], ANSWER="1")

    for sign_in in (one_time_code, custom):
        # A remembered device stands in for MFA only: no DEVICE_SRP_AUTH here, but the tokens are its.
        status, answer = sign_in(key)
        assert status == 200, answer
        assert "NewDeviceMetadata" not in answer["AuthenticationResult"]
        assert claims(answer["AuthenticationResult"]["AccessToken"])["device_key"] == key
        assert "NewDeviceMetadata" in sign_in(None)[1]["AuthenticationResult"]
        # An unknown key is refused when the sign-in would end.
        assert sign_in("us-east-1_never-issued")[1] == DEVICE_NOT_FOUND
