"""Checks of the Cognito test double's identity pool (cognito-identity) and
its STS AssumeRoleWithWebIdentity, so the end-to-end tests of
`cog-cred aws-credentials` can trust it where moto checks nothing (moto's
identity pool ignores Logins and always hands out the same credentials).

The double runs in-process (start_double) and is spoken to over HTTP as
cog-cred would: AWS JSON 1.1 requests with X-Amz-Target
AWSCognitoIdentityService.<Action>, and STS's form POST, unsigned. Expiry is
tested with configured lifetimes and issued_at_offset, never by sleeping.
"""
import calendar
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from cognito_double import DEFAULT_CONFIG, IDENTITY_TARGET_PREFIX, TARGET_PREFIX, java_double
from support import b64url, b64url_decode, claims, double_admin

CLIENT = DEFAULT_CONFIG["client_id"]
POOL_ID = DEFAULT_CONFIG["pool_id"]
IDENTITY_POOL = DEFAULT_CONFIG["identity_pool_id"]
PROVIDER = f"cognito-idp.us-east-1.amazonaws.com/{POOL_ID}"
DEFAULT_ROLE, ADMIN_ROLE = DEFAULT_CONFIG["identity_role_arns"]
OTHER_ROLE = "arn:aws:iam::123456789012:role/Somebody_Else"
ALICE, BOB, PASSWORD = "alice@example.com", "bob@example.com", "Identity-Pass-1"
STS_NS = "{https://sts.amazonaws.com/doc/2011-06-15/}"
MISCONFIGURED = "Invalid identity pool configuration. Check assigned IAM roles for this pool."
DENIED = "Not authorized to perform sts:AssumeRoleWithWebIdentity"
FORM = "application/x-www-form-urlencoded"


def sign_with(key, header, body) -> str:
    """A JWT signed with a key that is not the double's."""
    signing_input = ".".join(b64url(json.dumps(part).encode()) for part in (header, body))
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{b64url(signature)}"


class Client:
    """cog-cred's side of the wire: identity pool and user pool calls, STS, admin."""

    def __init__(self, url):
        self.url = url

    def _post(self, headers, data):
        req = urllib.request.Request(self.url, data=data, method="POST", headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), err.read()

    def raw(self, action, body, prefix=IDENTITY_TARGET_PREFIX, **headers):
        return self._post({"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": prefix + action,
                           **headers}, json.dumps(body).encode())

    def call(self, action, **body):
        status, _, answer = self.raw(action, body)
        return status, json.loads(answer)

    def ok(self, action, **body):
        status, answer = self.call(action, **body)
        assert status == 200, answer
        return answer

    def fails(self, action, error, **body):
        """The message of the 400 `error` that `action` must answer."""
        status, headers, raw = self.raw(action, body)
        answer = json.loads(raw)
        assert (status, answer.get("__type"), headers.get("x-amzn-ErrorType")) == (400, error, error), answer
        return answer["message"]

    def sts(self, accept=None, headers=None, **form):
        """(status, content type, body text) of an STS form POST."""
        params = {"Action": "AssumeRoleWithWebIdentity", "Version": "2011-06-15", "RoleSessionName": "cog-cred",
                  **form}
        params = {k: v for k, v in params.items() if v is not None}
        extra = {"Content-Type": FORM + "; charset=utf-8", **({"Accept": accept} if accept else {}), **(headers or {})}
        status, got, body = self._post(extra, urllib.parse.urlencode(params).encode())
        return status, got.get("Content-Type"), body.decode()

    def admin(self, path, body=None, status=200):
        return double_admin(self.url, path, body, status)

    def configure(self, **config):
        return self.admin("config", config)

    def calls(self):
        return self.admin("stats")["calls"]

    # The user pool: where the ID tokens come from.
    def tokens(self, username=ALICE):
        status, _, raw = self.raw("InitiateAuth", {"ClientId": CLIENT, "AuthFlow": "USER_PASSWORD_AUTH",
                                                   "AuthParameters": {"USERNAME": username, "PASSWORD": PASSWORD}},
                                  prefix=TARGET_PREFIX)
        assert status == 200, raw
        return json.loads(raw)["AuthenticationResult"]

    def id_token(self, username=ALICE):
        return self.tokens(username)["IdToken"]

    def identity(self, username=ALICE):
        """(IdentityId, Logins) of a freshly signed-in user."""
        logins = {PROVIDER: self.id_token(username)}
        return self.ok("GetId", IdentityPoolId=IDENTITY_POOL, Logins=logins)["IdentityId"], logins

    def open_id_token(self, username=ALICE):
        identity_id, logins = self.identity(username)
        return self.ok("GetOpenIdToken", IdentityId=identity_id, Logins=logins)["Token"]


@pytest.fixture
def idp(server):
    client = Client(server)
    client.admin("reset", {})
    for name in (ALICE, BOB):
        client.admin("users", {"username": name, "password": PASSWORD})
    return client


# --- config ------------------------------------------------------------------------------

def test_defaults_are_documented_and_reset_restores_them(idp):
    config = idp.admin("config")
    # ("identity_providers", the managed login's federated providers, is another matter.)
    assert {k: v for k, v in config.items() if k.startswith("identity_") and k != "identity_providers"} == {
        "identity_pool_id": "us-east-1:0a1b2c3d-0000-4000-8000-000000000001",
        "identity_provider": None, "identity_client_ids": None,
        "identity_role_arns": ["arn:aws:iam::123456789012:role/Cognito_Authenticated",
                               "arn:aws:iam::123456789012:role/Cognito_Admin"],
        "identity_credentials_lifetime": 3600, "identity_open_id_token_lifetime": 600,
        "identity_pool_misconfigured": False, "identity_allow_classic_flow": True}
    idp.configure(identity_pool_id="eu-west-1:11111111-2222-3333-4444-555555555555", identity_pool_misconfigured=True)
    idp.admin("reset", {})
    assert idp.admin("config") == config


@pytest.mark.parametrize("patch", [
    {"identity_pool_id": "us-east-1_notanidentitypool"}, {"identity_pool_id": ""}, {"identity_pool_id": 1},
    {"identity_provider": ""}, {"identity_client_ids": []}, {"identity_client_ids": "doubleclient"},
    {"identity_role_arns": []}, {"identity_role_arns": ["Cognito_Admin"]},
    {"identity_credentials_lifetime": -1}, {"identity_open_id_token_lifetime": True},
    {"identity_pool_misconfigured": "yes"}, {"identity_allow_classic_flow": None},
])
def test_bad_identity_config_is_refused_and_changes_nothing(idp, patch):
    before = idp.admin("config")
    assert "error" in idp.admin("config", patch, status=400)
    assert idp.admin("config") == before


# --- GetId -------------------------------------------------------------------------------

def test_each_user_has_one_identity_for_good(idp):
    alice, logins = idp.identity(ALICE)
    assert re.fullmatch(r"us-east-1:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", alice)
    # Again, and after a new sign-in (another ID token): the same identity.
    assert idp.ok("GetId", IdentityPoolId=IDENTITY_POOL, Logins=logins) == {"IdentityId": alice}
    assert idp.identity(ALICE)[0] == alice
    bob = idp.identity(BOB)[0]
    assert bob != alice and bob.startswith("us-east-1:")
    # The region is the identity pool's.
    idp.configure(identity_pool_id="eu-west-1:11111111-2222-4333-8444-555555555555")
    other = idp.ok("GetId", IdentityPoolId="eu-west-1:11111111-2222-4333-8444-555555555555",
                   Logins={PROVIDER: idp.id_token()})["IdentityId"]
    assert other.startswith("eu-west-1:") and other != alice


def test_get_id_needs_this_pool_and_a_login(idp):
    logins = {PROVIDER: idp.id_token()}
    other = "us-east-1:0a1b2c3d-0000-4000-8000-0000000000ff"
    assert idp.fails("GetId", "ResourceNotFoundException", IdentityPoolId=other, Logins=logins) == \
        f"IdentityPool '{other}' not found."
    assert "identityPoolId" in idp.fails("GetId", "InvalidParameterException", Logins=logins)
    for empty in ({}, None):
        assert idp.fails("GetId", "NotAuthorizedException", IdentityPoolId=IDENTITY_POOL, Logins=empty) == \
            "Unauthenticated access is not supported for this identity pool."
    assert idp.fails("GetId", "SerializationException", IdentityPoolId=IDENTITY_POOL, Logins=["x"])


def _expired(idp):
    idp.configure(issued_at_offset=-7200)  # an hour-long token issued two hours ago
    token = idp.id_token()
    idp.configure(issued_at_offset=0)
    return {PROVIDER: token}, r"Invalid login token\. Token expired: [0-9]+ >= [0-9]+"


def _foreign_signature(idp):
    real = idp.id_token()
    forged = sign_with(rsa.generate_private_key(public_exponent=65537, key_size=2048),
                       json.loads(b64url_decode(real.split(".")[0])), claims(real))
    return {PROVIDER: forged}, r"Invalid login token\. Couldn't verify signed token\."


def _tampered(idp):
    header, body, signature = idp.id_token().split(".")
    changed = b64url(json.dumps({**json.loads(b64url_decode(body)), "sub": "someone-else"}).encode())
    return {PROVIDER: f"{header}.{changed}.{signature}"}, r"Invalid login token\. Couldn't verify signed token\."


def _other_issuer(idp):
    # Signed by the double's key, but issued while it was another pool.
    idp.configure(pool_id="us-east-1_elsewhere")
    token = idp.id_token()
    idp.configure(pool_id=POOL_ID)
    return {PROVIDER: token}, r"Invalid login token\. Issuer doesn't match providerName"


def _wrong_audience(idp):
    idp.configure(identity_client_ids=["someotherclient"])
    return {PROVIDER: idp.id_token()}, r"Invalid login token\. Incorrect token audience\."


def _access_token(idp):
    return {PROVIDER: idp.tokens()["AccessToken"]}, r"Invalid login token\. Missing a required claim: aud"


def _not_a_jwt(idp):
    return {PROVIDER: "not-a.jwt"}, r"Invalid login token\. Not a valid OpenId Connect identity token\."


def _unknown_provider(idp):
    return {"cognito-idp.us-east-1.amazonaws.com/us-east-1_other": idp.id_token()}, \
        r"Invalid login token\. Issuer doesn't match providerName"


def _extra_provider(idp):
    token = idp.id_token()
    return {PROVIDER: token, "accounts.google.com": token}, r"Invalid login token\. Issuer doesn't match providerName"


def _provider_of_another_region(idp):
    return {f"cognito-idp.eu-west-1.amazonaws.com/{POOL_ID}": idp.id_token()}, \
        r"Invalid login token\. Issuer doesn't match providerName"


BAD_LOGINS = [_expired, _foreign_signature, _tampered, _other_issuer, _wrong_audience, _access_token, _not_a_jwt,
              _unknown_provider, _extra_provider, _provider_of_another_region]


@pytest.mark.parametrize("bad", BAD_LOGINS, ids=lambda f: f.__name__.strip("_"))
def test_bad_logins_are_refused_by_every_action(idp, bad):
    identity_id, _ = idp.identity()
    logins, message = bad(idp)
    assert re.fullmatch(message, idp.fails("GetId", "NotAuthorizedException", IdentityPoolId=IDENTITY_POOL,
                                           Logins=logins))
    for action in ("GetCredentialsForIdentity", "GetOpenIdToken"):
        assert re.fullmatch(message, idp.fails(action, "NotAuthorizedException", IdentityId=identity_id,
                                               Logins=logins))
    assert idp.admin("stats")["calls"].get("GetId") == 2  # the good one and the refused one


def test_the_provider_and_clients_follow_config(idp):
    idp.configure(identity_provider="accounts.example.com", identity_client_ids=["someotherclient", CLIENT])
    token = idp.id_token()
    assert idp.fails("GetId", "NotAuthorizedException", IdentityPoolId=IDENTITY_POOL, Logins={PROVIDER: token})
    assert idp.ok("GetId", IdentityPoolId=IDENTITY_POOL, Logins={"accounts.example.com": token})["IdentityId"]


# --- GetCredentialsForIdentity -------------------------------------------------------------

def test_credentials_are_fresh_each_time_and_the_double_remembers_them(idp):
    identity_id, logins = idp.identity()
    before = int(time.time())
    status, _, raw = idp.raw("GetCredentialsForIdentity", {"IdentityId": identity_id, "Logins": logins})
    assert status == 200
    answer = json.loads(raw)
    assert set(answer) == {"IdentityId", "Credentials"} and answer["IdentityId"] == identity_id
    credentials = answer["Credentials"]
    assert set(credentials) == {"AccessKeyId", "SecretKey", "SessionToken", "Expiration"}
    assert re.fullmatch(r"ASIA[A-Z0-9]{16}", credentials["AccessKeyId"])
    assert re.fullmatch(r"[A-Za-z0-9+/]{40}", credentials["SecretKey"])
    assert len(credentials["SessionToken"]) > 500
    # Expiration is a JSON number written as Cognito writes it (1.515115602E9).
    expiration = credentials["Expiration"]
    assert isinstance(expiration, float) and before + 3600 <= expiration <= int(time.time()) + 3600
    assert f'"Expiration": {java_double(int(expiration))}' in raw.decode()
    assert re.search(r'"Expiration": [1-9]\.[0-9]+E9[,}]', raw.decode())
    assert idp.admin(f"aws_credentials?access_key_id={credentials['AccessKeyId']}") == {
        "identity_id": identity_id, "role_arn": DEFAULT_ROLE, "expiration": int(expiration),
        "action": "GetCredentialsForIdentity", "secret_access_key": credentials["SecretKey"],
        "session_token": credentials["SessionToken"]}
    again = idp.ok("GetCredentialsForIdentity", IdentityId=identity_id, Logins=logins)["Credentials"]
    assert all(again[k] != credentials[k] for k in ("AccessKeyId", "SecretKey", "SessionToken"))
    idp.admin("aws_credentials?access_key_id=ASIAAAAAAAAAAAAAAAAA", status=404)
    idp.admin("aws_credentials", status=400)


def test_credentials_live_as_configured(idp):
    identity_id, logins = idp.identity()
    idp.configure(identity_credentials_lifetime=0)
    expired = idp.ok("GetCredentialsForIdentity", IdentityId=identity_id, Logins=logins)["Credentials"]
    assert expired["Expiration"] <= time.time()
    idp.configure(identity_credentials_lifetime=30)
    short = idp.ok("GetCredentialsForIdentity", IdentityId=identity_id, Logins=logins)["Credentials"]
    assert time.time() < short["Expiration"] <= time.time() + 30


def test_an_identity_answers_only_its_own_user(idp):
    alice, alice_logins = idp.identity(ALICE)
    bob, bob_logins = idp.identity(BOB)
    mismatch = "Logins don't match. Please include at least one valid login for this identity or identity pool."
    for action in ("GetCredentialsForIdentity", "GetOpenIdToken"):
        assert idp.fails(action, "NotAuthorizedException", IdentityId=alice, Logins=bob_logins) == mismatch
        assert idp.fails(action, "NotAuthorizedException", IdentityId=bob, Logins={}) == \
            f"Access to Identity '{bob}' is forbidden."
        unknown = "us-east-1:00000000-0000-4000-8000-000000000000"
        assert idp.fails(action, "ResourceNotFoundException", IdentityId=unknown, Logins=alice_logins) == \
            f"Identity '{unknown}' not found."
        assert "identityId" in idp.fails(action, "InvalidParameterException", IdentityId="alice", Logins=alice_logins)
        assert "identityId" in idp.fails(action, "InvalidParameterException", Logins=alice_logins)
    # The identities belong to their pool: once it is another, they are gone.
    idp.configure(identity_pool_id="us-east-1:0a1b2c3d-0000-4000-8000-0000000000ff")
    assert idp.fails("GetCredentialsForIdentity", "ResourceNotFoundException", IdentityId=alice,
                     Logins=alice_logins) == f"Identity '{alice}' not found."


def test_custom_roles_must_be_the_pools(idp):
    identity_id, logins = idp.identity()
    key = idp.ok("GetCredentialsForIdentity", IdentityId=identity_id, Logins=logins,
                 CustomRoleArn=ADMIN_ROLE)["Credentials"]["AccessKeyId"]
    assert idp.admin(f"aws_credentials?access_key_id={key}")["role_arn"] == ADMIN_ROLE
    assert idp.fails("GetCredentialsForIdentity", "InvalidIdentityPoolConfigurationException", IdentityId=identity_id,
                     Logins=logins, CustomRoleArn=OTHER_ROLE) == MISCONFIGURED
    idp.configure(identity_role_arns=[OTHER_ROLE])
    key = idp.ok("GetCredentialsForIdentity", IdentityId=identity_id, Logins=logins)["Credentials"]["AccessKeyId"]
    assert idp.admin(f"aws_credentials?access_key_id={key}")["role_arn"] == OTHER_ROLE


def test_a_misconfigured_pool_gives_no_credentials(idp):
    identity_id, logins = idp.identity()
    idp.configure(identity_pool_misconfigured=True)
    for role in (None, DEFAULT_ROLE):
        extra = {} if role is None else {"CustomRoleArn": role}
        assert idp.fails("GetCredentialsForIdentity", "InvalidIdentityPoolConfigurationException",
                         IdentityId=identity_id, Logins=logins, **extra) == MISCONFIGURED
    # The login is still checked first.
    assert idp.fails("GetCredentialsForIdentity", "NotAuthorizedException", IdentityId=identity_id,
                     Logins={PROVIDER: "x"})
    # GetId still works: the roles are the problem, not the pool.
    assert idp.ok("GetId", IdentityPoolId=IDENTITY_POOL, Logins=logins)["IdentityId"] == identity_id


def test_identity_requests_are_unsigned_json(idp):
    identity_id, logins = idp.identity()
    status, _, raw = idp.raw("GetCredentialsForIdentity", {"IdentityId": identity_id, "Logins": logins},
                             Authorization="AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/"
                                           "cognito-identity/aws4_request, SignedHeaders=host, Signature=00")
    assert (status, json.loads(raw)["__type"]) == (400, "UnrecognizedClientException")
    status, _, raw = idp._post({"Content-Type": "application/json",
                                "X-Amz-Target": IDENTITY_TARGET_PREFIX + "GetId"}, b"{}")
    assert (status, json.loads(raw)["__type"]) == (400, "SerializationException")


# --- the basic (classic) flow: GetOpenIdToken, then STS ----------------------------------------

def test_open_id_tokens_are_cognito_identitys(idp):
    identity_id, logins = idp.identity()
    user_sub = claims(logins[PROVIDER])["sub"]
    answer = idp.ok("GetOpenIdToken", IdentityId=identity_id, Logins=logins)
    assert set(answer) == {"IdentityId", "Token"} and answer["IdentityId"] == identity_id
    token = answer["Token"]
    header, body = json.loads(b64url_decode(token.split(".")[0])), claims(token)
    assert header["alg"] == "RS256"
    assert (body["iss"], body["aud"], body["sub"]) == ("https://cognito-identity.amazonaws.com", IDENTITY_POOL,
                                                        identity_id)
    assert body["amr"] == ["authenticated", PROVIDER, f"{PROVIDER}:CognitoSignIn:{user_sub}"]
    assert body["exp"] - body["iat"] == 600 and abs(body["iat"] - time.time()) < 5
    # Signed with the key the double publishes.
    with urllib.request.urlopen(f"{idp.url}{POOL_ID}/.well-known/jwks.json", timeout=10) as r:
        jwk = next(k for k in json.loads(r.read())["keys"] if k["kid"] == header["kid"])
    public = rsa.RSAPublicNumbers(int.from_bytes(b64url_decode(jwk["e"]), "big"),
                                  int.from_bytes(b64url_decode(jwk["n"]), "big")).public_key()
    signing_input, signature = token.rsplit(".", 1)
    public.verify(b64url_decode(signature), signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    # Its lifetime and issue time follow config.
    idp.configure(identity_open_id_token_lifetime=60, issued_at_offset=-30)
    body = claims(idp.ok("GetOpenIdToken", IdentityId=identity_id, Logins=logins)["Token"])
    assert body["exp"] - body["iat"] == 60 and abs(body["iat"] + 30 - time.time()) < 5


def test_the_classic_flow_can_be_turned_off(idp):
    identity_id, logins = idp.identity()
    token = idp.ok("GetOpenIdToken", IdentityId=identity_id, Logins=logins)["Token"]
    idp.configure(identity_allow_classic_flow=False)
    assert idp.fails("GetOpenIdToken", "InvalidParameterException", IdentityId=identity_id, Logins=logins) == \
        "Basic (classic) flow is not enabled, please use enhanced flow."
    # The enhanced flow is untouched.
    assert idp.ok("GetCredentialsForIdentity", IdentityId=identity_id, Logins=logins)
    # And STS, which knows nothing of the pool's setting, still takes a token issued before.
    assert idp.sts(RoleArn=DEFAULT_ROLE, WebIdentityToken=token)[0] == 200


def test_sts_answers_xml_by_default(idp):
    token = idp.open_id_token()
    identity_id = claims(token)["sub"]
    before = int(time.time())
    status, content_type, text = idp.sts(RoleArn=ADMIN_ROLE, WebIdentityToken=token, RoleSessionName="alice-s3")
    assert (status, content_type) == (200, "text/xml"), text
    root = ET.fromstring(text)
    assert root.tag == f"{STS_NS}AssumeRoleWithWebIdentityResponse"
    result = root.find(f"{STS_NS}AssumeRoleWithWebIdentityResult")
    value = lambda path: result.find("/".join(STS_NS + p for p in path.split("/"))).text  # noqa: E731
    assert value("SubjectFromWebIdentityToken") == identity_id
    assert value("Audience") == IDENTITY_POOL
    assert value("AssumedRoleUser/Arn") == "arn:aws:sts::123456789012:assumed-role/Cognito_Admin/alice-s3"
    assert re.fullmatch(r"AROA[A-Z0-9]{17}:alice-s3", value("AssumedRoleUser/AssumedRoleId"))
    key = value("Credentials/AccessKeyId")
    assert re.fullmatch(r"ASIA[A-Z0-9]{16}", key) and len(value("Credentials/SecretAccessKey")) == 40
    expiration = value("Credentials/Expiration")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", expiration)
    seconds = calendar.timegm(time.strptime(expiration, "%Y-%m-%dT%H:%M:%SZ"))
    assert before + 3600 <= seconds <= int(time.time()) + 3600
    assert root.find(f"{STS_NS}ResponseMetadata/{STS_NS}RequestId").text
    assert idp.admin(f"aws_credentials?access_key_id={key}") == {
        "identity_id": identity_id, "role_arn": ADMIN_ROLE, "expiration": seconds,
        "action": "sts:AssumeRoleWithWebIdentity", "secret_access_key": value("Credentials/SecretAccessKey"),
        "session_token": value("Credentials/SessionToken")}


def test_sts_answers_json_when_asked(idp):
    token = idp.open_id_token()
    before = int(time.time())
    status, content_type, text = idp.sts(accept="application/json", RoleArn=DEFAULT_ROLE, WebIdentityToken=token)
    assert (status, content_type) == (200, "application/json"), text
    answer = json.loads(text)
    assert list(answer) == ["AssumeRoleWithWebIdentityResponse"]
    response = answer["AssumeRoleWithWebIdentityResponse"]
    assert set(response) == {"AssumeRoleWithWebIdentityResult", "ResponseMetadata"}
    assert response["ResponseMetadata"]["RequestId"]
    result = response["AssumeRoleWithWebIdentityResult"]
    assert set(result) == {"Audience", "AssumedRoleUser", "Credentials", "PackedPolicySize", "Provider",
                           "SourceIdentity", "SubjectFromWebIdentityToken"}
    assert result["SubjectFromWebIdentityToken"] == claims(token)["sub"]
    assert result["Provider"] == "https://cognito-identity.amazonaws.com"
    assert set(result["AssumedRoleUser"]) == {"Arn", "AssumedRoleId"}
    credentials = result["Credentials"]
    assert set(credentials) == {"AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"}
    # Epoch seconds as a JSON number in Java's notation, as real STS writes them.
    assert isinstance(credentials["Expiration"], float)
    assert before + 3600 <= credentials["Expiration"] <= time.time() + 3600
    assert re.search(r'"Expiration": [1-9]\.[0-9]+E9[,}]', text)
    assert idp.admin(f"aws_credentials?access_key_id={credentials['AccessKeyId']}")["role_arn"] == DEFAULT_ROLE
    # Accept with several types and parameters still counts.
    status, content_type, _ = idp.sts(accept="text/html, application/json;q=0.9", RoleArn=DEFAULT_ROLE,
                                      WebIdentityToken=token)
    assert (status, content_type) == (200, "application/json")


def test_sts_credentials_lifetime(idp):
    token = idp.open_id_token()
    expiring = lambda **form: json.loads(idp.sts(accept="application/json", WebIdentityToken=token,  # noqa: E731
                                                 RoleArn=DEFAULT_ROLE, **form)[2])[
        "AssumeRoleWithWebIdentityResponse"]["AssumeRoleWithWebIdentityResult"]["Credentials"]["Expiration"]
    assert time.time() + 890 < expiring(DurationSeconds="900") <= time.time() + 900
    idp.configure(identity_credentials_lifetime=30)
    assert time.time() < expiring() <= time.time() + 30
    idp.configure(identity_credentials_lifetime=0)
    assert expiring() <= time.time()


def _sts_case(name, expected_status, code, message=None, **change):
    return pytest.param(change, expected_status, code, message, id=name)


def user_pool_id_token(idp):
    return idp.id_token()


STS_REFUSALS = [
    _sts_case("not-a-jwt", 400, "InvalidIdentityToken",
              r"The ID Token provided is not a valid JWT\. \(You may see this error if you sent an Access Token\)",
              WebIdentityToken="nonsense"),
    _sts_case("user-pool-id-token", 400, "InvalidIdentityToken",
              r"No OpenIDConnect provider found in your account for http://127\.0\.0\.1:[0-9]+/us-east-1_double",
              WebIdentityToken=user_pool_id_token),
    _sts_case("forged", 400, "InvalidIdentityToken", None, WebIdentityToken="forged"),
    _sts_case("expired", 400, "ExpiredTokenException",
              r"Token expired: current date/time [0-9]+ must be before the expiration date/time[0-9]+",
              config={"identity_open_id_token_lifetime": 0}),
    _sts_case("role-not-the-pools", 403, "AccessDenied", DENIED, RoleArn=OTHER_ROLE),
    _sts_case("misconfigured", 403, "AccessDenied", DENIED, after={"identity_pool_misconfigured": True}),
    _sts_case("another-pools-token", 403, "AccessDenied", DENIED,
              after={"identity_pool_id": "us-east-1:0a1b2c3d-0000-4000-8000-0000000000ff"}),
    _sts_case("signed", 403, "InvalidClientTokenId", r"The security token included in the request is invalid\.",
              headers={"Authorization": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/x, Signature=00"}),
    _sts_case("no-role", 400, "ValidationError", r".*'roleArn'.*must not be null", RoleArn=None),
    _sts_case("no-token", 400, "ValidationError", r".*'webIdentityToken'.*must not be null", WebIdentityToken=None),
    _sts_case("bad-session-name", 400, "ValidationError", r".*'roleSessionName'.*", RoleSessionName="a b"),
    _sts_case("too-short", 400, "ValidationError", r".*'durationSeconds'.*", DurationSeconds="899"),
    _sts_case("over-the-roles-max", 400, "ValidationError",
              r"The requested DurationSeconds exceeds the MaxSessionDuration set for this role\.",
              DurationSeconds="3601"),
    _sts_case("another-action", 400, "InvalidAction", r"Could not find operation AssumeRole for version 2011-06-15",
              Action="AssumeRole"),
    _sts_case("another-version", 400, "InvalidAction", r".*", Version="2010-01-01"),
]


@pytest.mark.parametrize("accept", [None, "application/json"], ids=["xml", "json"])
@pytest.mark.parametrize("change, expected_status, code, message", STS_REFUSALS)
def test_sts_refusals(idp, accept, change, expected_status, code, message):
    change = dict(change)
    idp.configure(**change.pop("config", {}))
    token = idp.open_id_token()
    idp.configure(**change.pop("after", {}))
    if change.get("WebIdentityToken") == "forged":
        header, body, _ = token.split(".")
        change["WebIdentityToken"] = sign_with(rsa.generate_private_key(public_exponent=65537, key_size=2048),
                                               json.loads(b64url_decode(header)), claims(token))
    elif callable(change.get("WebIdentityToken")):
        change["WebIdentityToken"] = change["WebIdentityToken"](idp)
    headers = change.pop("headers", None)
    form = {"RoleArn": DEFAULT_ROLE, "WebIdentityToken": token, **change}
    status, content_type, text = idp.sts(accept=accept, headers=headers, **form)
    assert status == expected_status, text
    if accept:
        assert content_type == "application/json"
        answer = json.loads(text)
        assert set(answer) == {"Error", "RequestId"} and answer["RequestId"]
        error = answer["Error"]
    else:
        assert content_type == "text/xml"
        root = ET.fromstring(text)
        assert root.tag == f"{STS_NS}ErrorResponse" and root.find(f"{STS_NS}RequestId").text
        error = {child.tag[len(STS_NS):]: child.text for child in root.find(f"{STS_NS}Error")}
    assert set(error) == {"Type", "Code", "Message"}
    assert (error["Type"], error["Code"]) == ("Sender", code)
    assert message is None or re.fullmatch(message, error["Message"]), error["Message"]
    assert idp.admin("stats")["requests"][-1]["status"] == expected_status


# --- counting and faults ---------------------------------------------------------------------

def test_every_action_is_counted_under_its_own_name(idp):
    token = idp.open_id_token()  # GetId, GetOpenIdToken
    identity_id = claims(token)["sub"]
    logins = {PROVIDER: idp.id_token()}
    idp.ok("GetCredentialsForIdentity", IdentityId=identity_id, Logins=logins)
    idp.fails("GetCredentialsForIdentity", "NotAuthorizedException", IdentityId=identity_id, Logins={})
    idp.sts(RoleArn=DEFAULT_ROLE, WebIdentityToken=token)
    idp.sts(Action="GetCallerIdentity")
    # An identity action sent to the user pool service, and the other way round: unknown,
    # and not counted under the other service's action name.
    status, _, raw = idp.raw("GetId", {"IdentityPoolId": IDENTITY_POOL}, prefix=TARGET_PREFIX)
    assert (status, json.loads(raw)["__type"]) == (400, "UnknownOperationException")
    status, _, raw = idp.raw("InitiateAuth", {"ClientId": CLIENT})
    assert (status, json.loads(raw)["__type"]) == (400, "UnknownOperationException")
    calls = idp.calls()
    assert {k: v for k, v in calls.items() if not k.startswith("InitiateAuth:")} == {
        "GetId": 1, "GetOpenIdToken": 1, "GetCredentialsForIdentity": 2,
        "sts:AssumeRoleWithWebIdentity": 1, "sts:GetCallerIdentity": 1,
        "AWSCognitoIdentityProviderService.GetId": 1, "AWSCognitoIdentityService.InitiateAuth": 1}
    assert calls["InitiateAuth:USER_PASSWORD_AUTH"] == 2
    records = idp.admin("stats")["requests"]
    sts = [r for r in records if r.get("service") == "sts"]
    assert [r["action"] for r in sts] == ["sts:AssumeRoleWithWebIdentity", "sts:GetCallerIdentity"]
    assert sts[0]["params"]["RoleArn"] == DEFAULT_ROLE and sts[0]["status"] == 200 and sts[1]["status"] == 400
    assert "authorization" not in sts[0]["headers"]
    identity = [r["action"] for r in records if r.get("service") == "cognito-identity"]
    assert identity == ["GetId", "GetOpenIdToken", "GetCredentialsForIdentity", "GetCredentialsForIdentity", None]


def test_fail_next_applies_to_identity_actions_and_sts(idp):
    identity_id, logins = idp.identity()
    throttled = {"__type": "TooManyRequestsException", "message": "Rate exceeded"}
    idp.configure(fail_next={"status": 400, "body": json.dumps(throttled), "count": 2,
                             "content_type": "application/x-amz-json-1.1",
                             "headers": {"x-amzn-ErrorType": "TooManyRequestsException"}})
    for _ in range(2):
        assert idp.fails("GetCredentialsForIdentity", "TooManyRequestsException", IdentityId=identity_id,
                         Logins=logins) == "Rate exceeded"
    assert idp.ok("GetCredentialsForIdentity", IdentityId=identity_id, Logins=logins)
    token = idp.ok("GetOpenIdToken", IdentityId=identity_id, Logins=logins)["Token"]
    idp.configure(fail_next={"status": 503, "body": "<html>Service Unavailable</html>", "content_type": "text/html"})
    assert idp.sts(RoleArn=DEFAULT_ROLE, WebIdentityToken=token)[:2] == (503, "text/html")
    assert idp.sts(RoleArn=DEFAULT_ROLE, WebIdentityToken=token)[0] == 200
    calls = idp.calls()
    assert (calls["GetCredentialsForIdentity"], calls["sts:AssumeRoleWithWebIdentity"]) == (3, 2)
