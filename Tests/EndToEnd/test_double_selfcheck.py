"""Checks of the Cognito test double itself, so the end-to-end tests can trust it.

The double runs in-process (start_double) and is spoken to over HTTP exactly as
cog-cred would, so these run in milliseconds and need no built binary. They
pin the account-lifecycle behaviour that moto does not model: codes that must
match and can expire, resend limits, password policy, SECRET_HASH, access-token
checks and sign-in by email alias.
"""
import base64
import hashlib
import hmac
import json
import urllib.error
import urllib.parse
import urllib.request

import pytest

from cognito_double import DEFAULT_CONFIG, TARGET_PREFIX, secret_hash, start_double

CLIENT = DEFAULT_CONFIG["client_id"]
PASSWORD = "Sign-Up-Pass-1"
EMAIL = "dora@example.com"
SECRET = "s3cr3t-of-the-app-client"


def claims(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class Pool:
    """A client of the double: Cognito calls on `POST /`, admin calls under /_double/."""

    def __init__(self, url):
        self.url = url

    def call(self, action, **body):
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(), method="POST", headers={
            "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": TARGET_PREFIX + action})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def ok(self, action, **body):
        status, answer = self.call(action, **body)
        assert status == 200, answer
        return answer

    def fails(self, action, error, **body):
        """The message of the error `error` that `action` must answer."""
        status, answer = self.call(action, **body)
        assert (status, answer.get("__type")) == (400, error), answer
        return answer["message"]

    def admin(self, path, body=None, status=200):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + "_double/" + path, data=data,
                                     method="GET" if data is None else "POST")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                got, answer = r.status, json.loads(r.read())
        except urllib.error.HTTPError as err:
            got, answer = err.code, json.loads(err.read())
        assert got == status, answer
        return answer

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


@pytest.fixture(scope="module")
def server():
    srv, url = start_double()
    yield url
    srv.shutdown()
    srv.server_close()


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
    changed = pool.admin("config", {"client_secret": SECRET, "password_policy": {"min_length": 12},
                                    "max_resends": 1, "auto_confirm": True, "username_attributes": ["email"]})
    # A partial policy keeps the defaults for the keys it leaves out.
    assert changed["password_policy"] == {**config["password_policy"], "min_length": 12}
    pool.admin("reset", {})
    assert pool.admin("config") == config


@pytest.mark.parametrize("patch", [
    {"client_secret": ""}, {"password_policy": {"min_len": 8}}, {"password_policy": {"require_digit": 1}},
    {"code_lifetime": -1}, {"max_resends": True}, {"auto_confirm": "yes"},
    {"username_attributes": ["phone_number"]}, {"username_attributes": "email"},
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
                    "email_verified": False, "password_set": True}
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
        "forged claims": f"{head}.{base64.urlsafe_b64encode(forged).rstrip(b'=').decode()}.{signature}",
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
