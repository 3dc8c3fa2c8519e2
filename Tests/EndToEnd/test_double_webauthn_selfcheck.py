"""Checks of the Cognito test double's passkeys (WebAuthn), so the end-to-end
tests of a passkey client can trust it: registration
(StartWebAuthnRegistration, CompleteWebAuthnRegistration), a user's passkeys
(ListWebAuthnCredentials, DeleteWebAuthnCredential) and sign-in with one
(USER_AUTH's WEB_AUTHN challenge).

The double verifies both ceremonies with python-fido2's Fido2Server. The
authenticator here is made apart from that code: python-fido2's data classes
lay out the authenticator data, the attested credential data and the
attestation object, `cryptography` signs, and each refusal test spoils one
thing (origin, type, challenge, RP id hash, a flag, the signature, the
counter) and expects the name Cognito gives that refusal. The double runs
in-process and is spoken to over HTTP, as the other self-checks do. Expiry is
tested with lifetimes of 0, never by sleeping.
"""
import hashlib
import json
import os
import re
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from fido2.cose import ES256, EdDSA
from fido2.webauthn import AttestationObject, AttestedCredentialData, AuthenticatorData, CollectedClientData

from cognito_double import DEFAULT_CONFIG, TARGET_PREFIX, secret_hash
from support import DoubleClient, NoRedirects, b64url, b64url_decode, claims, double_admin

CLIENT = DEFAULT_CONFIG["client_id"]
USER, OTHER = "mia", "noah"
PASSWORD = "Passkey-Pool-1"
RP_ID = "auth.cog-cred.test"
ORIGIN = "https://" + RP_ID
SECRET = "s3cr3t-of-the-app-client"
CALLBACK = "http://127.0.0.1:9/callback"  # only ever read from a Location header
UP, UV, AT = AuthenticatorData.FLAG.UP, AuthenticatorData.FLAG.UV, AuthenticatorData.FLAG.AT
BASE64URL = re.compile(r"[A-Za-z0-9_-]+")
INCORRECT = "Incorrect username or password."
GOOGLE_PASSWORD_MANAGER = bytes.fromhex("ea9b8d664d011d213ce4b6b48cb575d4")


class Authenticator:
    """A software authenticator holding one passkey: an ES256 key (or EdDSA,
    which Cognito does not offer). `counter_step` is how far its signature
    counter moves per assertion: 0 is an authenticator that keeps none."""

    def __init__(self, aaguid=bytes(16), algorithm="ES256", counter_step=1):
        if algorithm == "EdDSA":
            self.private = ed25519.Ed25519PrivateKey.generate()
            self.public = EdDSA.from_cryptography_key(self.private.public_key())
        else:
            self.private = ec.generate_private_key(ec.SECP256R1())
            self.public = ES256.from_cryptography_key(self.private.public_key())
        self.credential_id = os.urandom(32)
        self.aaguid, self.counter, self.counter_step = aaguid, 0, counter_step
        self.user_handle = None  # user.id of the options it registered with

    @property
    def id(self):
        return b64url(self.credential_id)

    def sign(self, data):
        if isinstance(self.private, ed25519.Ed25519PrivateKey):
            return self.private.sign(data)
        return self.private.sign(data, ec.ECDSA(hashes.SHA256()))

    def create(self, options, *, origin=None, type="webauthn.create", rp_id=None, challenge=None, flags=UP | UV,
               fmt="none", bad_attestation=False, transports=("usb",), attachment="cross-platform"):
        """A RegistrationResponseJSON (a dict) answering CredentialCreationOptions `options`."""
        rp_id = options["rp"]["id"] if rp_id is None else rp_id
        client_data = CollectedClientData.create(type=type, challenge=options["challenge"] if challenge is None
                                                 else challenge, origin=origin or "https://" + options["rp"]["id"])
        auth_data = AuthenticatorData.create(
            hashlib.sha256(rp_id.encode()).digest(), flags | AT, self.counter,
            AttestedCredentialData.create(self.aaguid, self.credential_id, self.public))
        statement = {}
        if fmt != "none":  # "packed" self-attestation: the new key signs authData || hash(clientData)
            signed = b"not the authenticator data" if bad_attestation else auth_data + client_data.hash
            statement = {"alg": self.public.ALGORITHM, "sig": self.sign(signed)}
        self.user_handle = b64url_decode(options["user"]["id"])
        credential = {"id": self.id, "rawId": self.id, "type": "public-key",
                      "response": {"clientDataJSON": b64url(client_data),
                                   "attestationObject": b64url(AttestationObject.create(fmt, auth_data, statement))},
                      "clientExtensionResults": {}}
        if transports is not None:
            credential["response"]["transports"] = list(transports)
        if attachment is not None:
            credential["authenticatorAttachment"] = attachment
        return credential

    def get(self, challenge_answer, *, origin=None, type="webauthn.get", rp_id=None, challenge=None, flags=UP | UV,
            bad_signature=False, user_handle=None):
        """An AuthenticationResponseJSON, as the JSON string CREDENTIAL is,
        answering the WEB_AUTHN challenge `challenge_answer`."""
        options = json.loads(challenge_answer["ChallengeParameters"]["CREDENTIAL_REQUEST_OPTIONS"])
        rp_id = options["rpId"] if rp_id is None else rp_id
        self.counter += self.counter_step
        client_data = CollectedClientData.create(type=type, challenge=options["challenge"] if challenge is None
                                                 else challenge, origin=origin or "https://" + options["rpId"])
        auth_data = AuthenticatorData.create(hashlib.sha256(rp_id.encode()).digest(), flags, self.counter)
        signature = self.sign(b"something else" if bad_signature else auth_data + client_data.hash)
        return json.dumps({"id": self.id, "rawId": self.id, "type": "public-key", "response": {
            "clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
            "signature": b64url(signature), "userHandle": b64url(user_handle or self.user_handle)},
            "clientExtensionResults": {}, "authenticatorAttachment": "cross-platform"})


class Pool(DoubleClient):
    """The double's pool, as its tests call it."""

    def detail(self):
        """Why the double refused the last request (recorded, never answered)."""
        return self.admin("stats")["requests"][-1].get("detail", "")

    def user(self, username=USER, **params):
        """A new user, signed in with its password: its access token."""
        self.admin("users", {"username": username, "password": PASSWORD, "attributes": {}})
        return self.access_token(username, **params)

    def access_token(self, username=USER, **params):
        return self.ok("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_PASSWORD_AUTH", AuthParameters={
            "USERNAME": username, "PASSWORD": PASSWORD, **params})["AuthenticationResult"]["AccessToken"]

    def start(self, token):
        return self.ok("StartWebAuthnRegistration", AccessToken=token)["CredentialCreationOptions"]

    def complete(self, token, credential):
        return self.call("CompleteWebAuthnRegistration", AccessToken=token, Credential=credential)

    def register(self, token, authenticator=None, **create):
        """A passkey registered for the token's user: its authenticator."""
        authenticator = authenticator or Authenticator()
        assert self.complete(token, authenticator.create(self.start(token), **create)) == (200, {})
        return authenticator

    def listed(self, token, **params):
        return self.ok("ListWebAuthnCredentials", AccessToken=token, **params)

    def user_auth(self, username=USER, **params):
        return self.ok("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_AUTH",
                       AuthParameters={"USERNAME": username, **params})

    def passkey_challenge(self, username=USER, **params):
        challenge = self.user_auth(username, PREFERRED_CHALLENGE="WEB_AUTHN", **params)
        assert challenge["ChallengeName"] == "WEB_AUTHN", challenge
        return challenge

    def answer(self, challenge, credential, username=USER, **responses):
        return self.call("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="WEB_AUTHN",
                         Session=challenge["Session"],
                         ChallengeResponses={"USERNAME": username, "CREDENTIAL": credential, **responses})

    def signs_in(self, authenticator, username=USER, **get):
        challenge = self.passkey_challenge(username)
        status, answer = self.answer(challenge, authenticator.get(challenge, **get), username)
        assert status == 200, answer
        return answer["AuthenticationResult"]

    def refused(self, challenge, credential, username=USER):
        """The detail of an answer refused as a wrong password would be."""
        status, answer = self.answer(challenge, credential, username)
        assert (status, answer.get("__type"), answer.get("message")) == (400, "NotAuthorizedException", INCORRECT), \
            answer
        return self.detail()

    def passkeys(self, username=USER):
        return self.admin(f"passkeys?username={username}")["passkeys"]


@pytest.fixture
def pool(server):
    p = Pool(server)
    p.admin("reset", {})
    p.admin("config", {"allowed_first_auth_factors": ["PASSWORD", "WEB_AUTHN"], "webauthn_rp_id": RP_ID})
    return p


def managed_login_access_token(pool, scope):
    """An access token from the managed login: it has only the scopes asked for."""
    pool.admin("config", {"callback_urls": [CALLBACK]})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirects)
    verifier = secrets.token_urlsafe(48)
    query = urllib.parse.urlencode({
        "response_type": "code", "client_id": CLIENT, "redirect_uri": CALLBACK, "scope": scope, "state": "s",
        "code_challenge": b64url(hashlib.sha256(verifier.encode()).digest()), "code_challenge_method": "S256"})
    page = opener.open(pool.url + "oauth2/authorize?" + query, timeout=10).read().decode()
    session = re.search(r'name="login_session" value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode({"login_session": session, "username": USER, "password": PASSWORD}).encode()
    try:
        opener.open(urllib.request.Request(pool.url + "login", data=form), timeout=10)
        raise AssertionError("the sign-in form did not redirect")
    except urllib.error.HTTPError as err:
        assert err.code == 302
        code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(err.headers["Location"]).query))["code"]
    form = urllib.parse.urlencode({"grant_type": "authorization_code", "client_id": CLIENT, "code": code,
                                   "redirect_uri": CALLBACK, "code_verifier": verifier}).encode()
    with opener.open(urllib.request.Request(pool.url + "oauth2/token", data=form), timeout=10) as r:
        return json.loads(r.read())["access_token"]


# --- config -------------------------------------------------------------------------------

def test_webauthn_config_defaults(server):
    pool = Pool(server)
    pool.admin("reset", {})
    config = pool.admin("config")
    assert {k: config[k] for k in ("webauthn_rp_id", "webauthn_user_verification", "webauthn_configured",
                                   "webauthn_registration_lifetime")} == {
        "webauthn_rp_id": None, "webauthn_user_verification": "preferred", "webauthn_configured": True,
        "webauthn_registration_lifetime": 300}
    # Without an RP id the pool's domain is it: the double's own host.
    pool.admin("config", {"allowed_first_auth_factors": ["PASSWORD", "WEB_AUTHN"]})
    options = pool.start(pool.user())
    assert options["rp"]["id"] == urllib.parse.urlsplit(server).hostname == "127.0.0.1"
    assert pool.admin(f"passkeys?username={USER}")["rp_id"] == "127.0.0.1"


@pytest.mark.parametrize("patch", [
    {"webauthn_rp_id": "https://auth.cog-cred.test"}, {"webauthn_rp_id": "auth.cog-cred.test:443"},
    {"webauthn_rp_id": "auth.cog-cred.test/"}, {"webauthn_rp_id": ""}, {"webauthn_rp_id": ".cog-cred.test"},
    {"webauthn_user_verification": "discouraged"}, {"webauthn_user_verification": None},
    {"webauthn_configured": "yes"}, {"webauthn_registration_lifetime": -1},
    # PASSWORD stays required, as before; WEB_AUTHN may join it.
    {"allowed_first_auth_factors": ["WEB_AUTHN"]}, {"allowed_first_auth_factors": ["PASSWORD", "PASSKEY"]},
])
def test_bad_webauthn_config_is_refused(pool, patch):
    before = pool.admin("config")
    assert "error" in pool.admin("config", patch, status=400)
    assert pool.admin("config") == before


def test_passkeys_control_knows_only_users(pool):
    assert "error" in pool.admin("passkeys?username=nobody", status=404)


# --- registration ---------------------------------------------------------------------------

def test_start_offers_what_cognito_offers(pool):
    token, other = pool.user(), pool.user(OTHER)
    options = pool.start(token)
    assert isinstance(options, dict)  # a JSON object, not a string
    assert set(options) == {"rp", "user", "challenge", "pubKeyCredParams", "timeout", "excludeCredentials",
                            "authenticatorSelection"}  # no attestation member, as Cognito's
    assert options["rp"] == {"id": RP_ID, "name": RP_ID}
    assert options["user"]["name"] == options["user"]["displayName"] == USER
    assert options["pubKeyCredParams"] == [{"type": "public-key", "alg": -7}, {"type": "public-key", "alg": -257}]
    assert options["timeout"] == 60000 and options["excludeCredentials"] == []
    assert options["authenticatorSelection"] == {"requireResidentKey": True, "residentKey": "required",
                                                 "userVerification": "preferred"}
    # Binary values: base64url without padding; the challenge random and long enough.
    assert BASE64URL.fullmatch(options["challenge"]) and BASE64URL.fullmatch(options["user"]["id"])
    assert len(b64url_decode(options["challenge"])) >= 16
    again = pool.start(token)
    assert again["challenge"] != options["challenge"]
    assert again["user"]["id"] == options["user"]["id"] != pool.start(other)["user"]["id"]  # stable, per user
    pool.admin("config", {"webauthn_user_verification": "required"})
    assert pool.start(token)["authenticatorSelection"]["userVerification"] == "required"


def test_a_registered_passkey_is_listed(pool):
    token = pool.user()
    before = time.time()
    key = pool.register(token)
    assert pool.listed(token) == {"Credentials": [{
        "CredentialId": key.id, "FriendlyCredentialName": "Security key", "RelyingPartyId": RP_ID,
        "AuthenticatorAttachment": "cross-platform", "AuthenticatorTransports": ["usb"],
        "CreatedAt": pytest.approx(before, abs=5)}]}
    [kept] = pool.passkeys()
    assert (kept["credential_id"], kept["algorithm"], kept["sign_count"], kept["last_used"]) == (key.id, -7, 0, None)


def test_packed_self_attestation_and_the_authenticators_name(pool):
    token = pool.user()
    phone = pool.register(token, Authenticator(aaguid=GOOGLE_PASSWORD_MANAGER), fmt="packed",
                          transports=("internal", "hybrid"), attachment="platform")
    # A client that says neither attachment nor transports: listed without them.
    bare = pool.register(token, transports=None, attachment=None)
    first, second = pool.listed(token)["Credentials"]
    assert (first["CredentialId"], first["FriendlyCredentialName"], first["AuthenticatorAttachment"],
            first["AuthenticatorTransports"]) == (phone.id, "Google Password Manager", "platform",
                                                  ["internal", "hybrid"])
    assert second["CredentialId"] == bare.id and "AuthenticatorAttachment" not in second
    assert second["AuthenticatorTransports"] == []
    assert pool.passkeys()[0]["aaguid"] == "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4"


def test_exclude_credentials_lists_the_users_passkeys(pool):
    token = pool.user()
    first, second = pool.register(token), pool.register(token)
    pool.register(pool.user(OTHER))  # another user's is not excluded
    assert pool.start(token)["excludeCredentials"] == [{"type": "public-key", "id": first.id},
                                                       {"type": "public-key", "id": second.id}]


# Each spoils one thing the double (Fido2Server) must check; the error Cognito names; a word of the detail.
REGISTRATION_SPOILS = {
    "http origin": ({"origin": "http://" + RP_ID}, "WebAuthnOriginNotAllowedException", "origin"),
    "other host": ({"origin": "https://evil.test"}, "WebAuthnOriginNotAllowedException", "origin"),
    "subdomain": ({"origin": "https://login." + RP_ID}, "WebAuthnOriginNotAllowedException", "origin"),
    "port": ({"origin": ORIGIN + ":8443"}, "WebAuthnOriginNotAllowedException", "origin"),
    "type": ({"type": "webauthn.get"}, "InvalidParameterException", "type"),
    "rp id hash": ({"rp_id": "evil.test"}, "WebAuthnRelyingPartyMismatchException", "RP ID hash"),
    "user not present": ({"flags": UV}, "InvalidParameterException", "User Present"),
    "bad attestation": ({"fmt": "packed", "bad_attestation": True}, "InvalidParameterException", "attestation"),
    "u2f attestation": ({"fmt": "fido-u2f"}, "WebAuthnCredentialNotSupportedException", "fido-u2f"),
}


@pytest.mark.parametrize("spoil", REGISTRATION_SPOILS)
def test_registration_refusals(pool, spoil):
    create, error, why = REGISTRATION_SPOILS[spoil]
    token = pool.user()
    options = pool.start(token)
    key = Authenticator()
    pool.fails("CompleteWebAuthnRegistration", error, AccessToken=token,
               Credential=key.create(options, **create))
    assert why in pool.detail()
    assert pool.listed(token)["Credentials"] == []
    # One answer per challenge, right or wrong: the right credential comes too late.
    pool.fails("CompleteWebAuthnRegistration", "WebAuthnChallengeNotFoundException", AccessToken=token,
               Credential=key.create(options))
    pool.register(token, key)  # with a challenge of its own it registers


def test_an_algorithm_cognito_does_not_offer_is_not_supported(pool):
    token = pool.user()
    pool.fails("CompleteWebAuthnRegistration", "WebAuthnCredentialNotSupportedException", AccessToken=token,
               Credential=Authenticator(algorithm="EdDSA").create(pool.start(token)))
    assert "-8" in pool.detail()


def test_the_registration_challenge_is_single_use_and_the_users_own(pool):
    token, other = pool.user(), pool.user(OTHER)
    options = pool.start(token)
    assert pool.complete(token, Authenticator().create(options)) == (200, {})
    # Used: not again, not even for another key.
    pool.fails("CompleteWebAuthnRegistration", "WebAuthnChallengeNotFoundException", AccessToken=token,
               Credential=Authenticator().create(options))
    assert "used" in pool.detail()
    # Another user's challenge is not found for this one, and stays that user's.
    theirs = pool.start(other)
    pool.fails("CompleteWebAuthnRegistration", "WebAuthnChallengeNotFoundException", AccessToken=token,
               Credential=Authenticator().create(theirs))
    assert "another user" in pool.detail()
    assert pool.complete(other, Authenticator().create(theirs)) == (200, {})
    # One never issued, or re-encoded (padded): not found either.
    pool.fails("CompleteWebAuthnRegistration", "WebAuthnChallengeNotFoundException", AccessToken=token,
               Credential=Authenticator().create(options, challenge=b64url(os.urandom(32))))
    fresh = pool.start(token)
    pool.fails("CompleteWebAuthnRegistration", "WebAuthnChallengeNotFoundException", AccessToken=token,
               Credential=Authenticator().create(fresh, challenge=fresh["challenge"] + "="))
    assert pool.complete(token, Authenticator().create(fresh)) == (200, {})
    assert len(pool.listed(token)["Credentials"]) == 2


def test_an_expired_registration_challenge_is_not_found(pool):
    token = pool.user()
    pool.admin("config", {"webauthn_registration_lifetime": 0})
    pool.fails("CompleteWebAuthnRegistration", "WebAuthnChallengeNotFoundException", AccessToken=token,
               Credential=Authenticator().create(pool.start(token)))
    assert "expired" in pool.detail()


def test_complete_needs_the_app_client_of_start(pool):
    token = pool.user()
    options = pool.start(token)
    pool.admin("config", {"client_id": "anotherclient"})
    other_client = pool.ok("InitiateAuth", ClientId="anotherclient", AuthFlow="USER_PASSWORD_AUTH", AuthParameters={
        "USERNAME": USER, "PASSWORD": PASSWORD})["AuthenticationResult"]["AccessToken"]
    pool.fails("CompleteWebAuthnRegistration", "WebAuthnClientMismatchException", AccessToken=other_client,
               Credential=Authenticator().create(options))
    assert pool.listed(token)["Credentials"] == []


def test_a_credential_is_registered_once(pool):
    token = pool.user()
    key = pool.register(token)
    pool.fails("CompleteWebAuthnRegistration", "InvalidParameterException", AccessToken=token,
               Credential=key.create(pool.start(token)))
    assert len(pool.listed(token)["Credentials"]) == 1


def test_base64url_without_padding_and_the_json_shapes(pool):
    token = pool.user()
    key = Authenticator()

    def spoiled(change):
        credential = key.create(pool.start(token))
        change(credential)
        return credential

    def padded(credential):
        credential["id"] = credential["rawId"] = credential["rawId"] + "="

    def standard_base64(credential):
        credential["response"]["clientDataJSON"] = credential["response"]["clientDataJSON"].replace("_", "/") + "+"

    def other_raw_id(credential):
        credential["rawId"] = b64url(os.urandom(32))

    def other_ids(credential):  # id and rawId agree, but name another credential than authData's
        credential["id"] = credential["rawId"] = b64url(os.urandom(32))

    def wrong_type(credential):
        credential["type"] = "password"

    for change in (padded, standard_base64, other_raw_id, other_ids, wrong_type):
        pool.fails("CompleteWebAuthnRegistration", "InvalidParameterException", AccessToken=token,
                   Credential=spoiled(change))
    # The Credential is a JSON object, not one stringified.
    assert "not str" in pool.fails("CompleteWebAuthnRegistration", "InvalidParameterException",
                                   AccessToken=token, Credential=json.dumps(key.create(pool.start(token))))
    pool.fails("CompleteWebAuthnRegistration", "InvalidParameterException", AccessToken=token)
    assert pool.listed(token)["Credentials"] == []
    pool.register(token, key)


def test_passkeys_not_enabled_or_not_configured(pool):
    token = pool.user()
    key = pool.register(token)
    options = pool.start(token)
    pool.admin("config", {"allowed_first_auth_factors": ["PASSWORD"]})
    pool.fails("StartWebAuthnRegistration", "WebAuthnNotEnabledException", AccessToken=token)
    pool.fails("CompleteWebAuthnRegistration", "WebAuthnNotEnabledException", AccessToken=token,
               Credential=Authenticator().create(options))
    # A user's passkeys can still be listed and deleted.
    assert [c["CredentialId"] for c in pool.listed(token)["Credentials"]] == [key.id]
    pool.admin("config", {"allowed_first_auth_factors": ["PASSWORD", "WEB_AUTHN"], "webauthn_configured": False})
    pool.fails("StartWebAuthnRegistration", "WebAuthnConfigurationMissingException", AccessToken=token)
    assert pool.ok("DeleteWebAuthnCredential", AccessToken=token, CredentialId=key.id) == {}


def test_the_actions_need_the_admin_scope(pool):
    signed_in = pool.user()
    key = pool.register(signed_in)
    options = pool.start(signed_in)
    token = managed_login_access_token(pool, "openid email")
    assert claims(token)["scope"] == "openid email"
    for action, body in [("StartWebAuthnRegistration", {}),
                         ("CompleteWebAuthnRegistration", {"Credential": Authenticator().create(options)}),
                         ("ListWebAuthnCredentials", {}), ("DeleteWebAuthnCredential", {"CredentialId": key.id})]:
        assert pool.fails(action, "NotAuthorizedException", AccessToken=token, **body) == \
            "Access Token does not have required scopes", action
    # Asked for, the scope is there, and so is the passkey.
    with_admin = managed_login_access_token(pool, "openid aws.cognito.signin.user.admin")
    assert [c["CredentialId"] for c in pool.listed(with_admin)["Credentials"]] == [key.id]
    pool.fails("ListWebAuthnCredentials", "NotAuthorizedException", AccessToken="not.a.token")


# --- ListWebAuthnCredentials and DeleteWebAuthnCredential --------------------------------------

def test_pages_of_passkeys(pool):
    token, other = pool.user(), pool.user(OTHER)
    ids = [pool.register(token).id for _ in range(25)]
    pool.register(other)
    pages, answer = [], pool.listed(token, MaxResults=10)
    pages.append(answer["Credentials"])
    while "NextToken" in answer:
        assert BASE64URL.fullmatch(answer["NextToken"])
        answer = pool.listed(token, MaxResults=10, NextToken=answer["NextToken"])
        pages.append(answer["Credentials"])
    assert [len(page) for page in pages] == [10, 10, 5]
    assert [c["CredentialId"] for page in pages for c in page] == ids  # oldest first, each once
    # Without MaxResults: 10 as well.
    first = pool.listed(token)
    assert len(first["Credentials"]) == 10 and "NextToken" in first
    assert len(pool.listed(token, MaxResults=20)["Credentials"]) == 20
    for limit in (0, 21, -1, "10", True):
        pool.fails("ListWebAuthnCredentials", "InvalidParameterException", AccessToken=token, MaxResults=limit)
    pool.fails("ListWebAuthnCredentials", "InvalidParameterException", AccessToken=token, NextToken="made-up")
    # A page token is its user's.
    pool.fails("ListWebAuthnCredentials", "InvalidParameterException", AccessToken=other,
               NextToken=first["NextToken"])
    assert len(pool.listed(other)["Credentials"]) == 1


def test_delete_a_passkey(pool):
    token, other = pool.user(), pool.user(OTHER)
    key, theirs = pool.register(token), pool.register(other)
    pool.fails("DeleteWebAuthnCredential", "ResourceNotFoundException", AccessToken=token,
               CredentialId=b64url(os.urandom(32)))
    # Another user's passkey is not found either, and stays.
    pool.fails("DeleteWebAuthnCredential", "ResourceNotFoundException", AccessToken=token, CredentialId=theirs.id)
    assert [c["CredentialId"] for c in pool.listed(other)["Credentials"]] == [theirs.id]
    challenge = pool.passkey_challenge()  # issued while the passkey was there
    assert pool.ok("DeleteWebAuthnCredential", AccessToken=token, CredentialId=key.id) == {}
    assert pool.listed(token)["Credentials"] == []
    pool.fails("DeleteWebAuthnCredential", "ResourceNotFoundException", AccessToken=token, CredentialId=key.id)
    # A deleted passkey signs in no more, and no longer makes WEB_AUTHN an offer.
    assert "not a passkey of this user" in pool.refused(challenge, key.get(challenge))
    select = pool.user_auth(PREFERRED_CHALLENGE="WEB_AUTHN")
    assert select["ChallengeName"] == "SELECT_CHALLENGE" and "WEB_AUTHN" not in select["AvailableChallenges"]


def test_a_replaced_user_has_no_passkeys(pool):
    pool.register(pool.user())
    assert pool.listed(pool.user())["Credentials"] == []  # replaced: a new sub


# --- sign-in (USER_AUTH, WEB_AUTHN) ---------------------------------------------------------------

def test_sign_in_with_a_passkey(pool):
    token = pool.user()
    key = pool.register(token)
    challenge = pool.passkey_challenge()
    assert challenge["Session"] and challenge["ChallengeParameters"]["USER_ID_FOR_SRP"] == USER
    text = challenge["ChallengeParameters"]["CREDENTIAL_REQUEST_OPTIONS"]
    assert isinstance(text, str)  # a JSON string, unlike registration's object
    options = json.loads(text)
    assert set(options) == {"challenge", "rpId", "timeout", "allowCredentials", "userVerification"}
    assert (options["rpId"], options["userVerification"], options["timeout"]) == (RP_ID, "preferred", 180000)
    assert options["allowCredentials"] == [{"type": "public-key", "id": key.id, "transports": ["usb"]}]
    assert BASE64URL.fullmatch(options["challenge"]) and len(b64url_decode(options["challenge"])) >= 16
    assert json.loads(pool.passkey_challenge()["ChallengeParameters"]["CREDENTIAL_REQUEST_OPTIONS"])[
        "challenge"] != options["challenge"]
    credential = key.get(challenge)
    status, answer = pool.answer(challenge, credential)
    assert status == 200, answer
    tokens = answer["AuthenticationResult"]
    assert claims(tokens["AccessToken"])["username"] == USER and tokens["RefreshToken"]
    [kept] = pool.passkeys()
    assert kept["sign_count"] == 1 and kept["last_used"] is not None
    # The Session is spent: the same answer, or a new one, is no good with it.
    again = pool.answer(challenge, key.get(challenge))[1]
    assert (again["__type"], again["message"]) == ("NotAuthorizedException",
                                                   "Invalid session for the user, session can only be used once.")
    # Counted and recorded like every sign-in step: the names sent, never the credential.
    stats = pool.admin("stats")
    assert stats["calls"]["RespondToAuthChallenge:WEB_AUTHN"] == 2
    assert stats["calls"]["InitiateAuth:USER_AUTH"] == 2
    step = [r for r in stats["requests"] if r.get("challenge") == "WEB_AUTHN"][0]
    assert step["parameter_names"] == ["CREDENTIAL", "USERNAME"] and credential not in json.dumps(stats)


def test_select_challenge_offers_and_starts_web_authn(pool):
    token = pool.user()
    # No passkey: not offered, and preferring it gets the choice instead (as for any factor the user lacks).
    select = pool.user_auth(PREFERRED_CHALLENGE="WEB_AUTHN")
    assert (select["ChallengeName"], select["AvailableChallenges"]) == ("SELECT_CHALLENGE",
                                                                        ["PASSWORD", "PASSWORD_SRP"])
    key = pool.register(token)
    select = pool.user_auth()
    assert select["AvailableChallenges"] == ["PASSWORD", "PASSWORD_SRP", "WEB_AUTHN"]
    status, challenge = pool.call("RespondToAuthChallenge", ClientId=CLIENT, ChallengeName="SELECT_CHALLENGE",
                                  Session=select["Session"], ChallengeResponses={"USERNAME": USER,
                                                                                 "ANSWER": "WEB_AUTHN"})
    assert status == 200 and challenge["ChallengeName"] == "WEB_AUTHN", challenge
    status, answer = pool.answer(challenge, key.get(challenge))
    assert status == 200 and "AccessToken" in answer["AuthenticationResult"], answer
    # A pool that does not allow it, or has no WebAuthn configuration, offers it to nobody.
    for config in ({"allowed_first_auth_factors": ["PASSWORD"]}, {"webauthn_configured": False}):
        pool.admin("config", config)
        assert "WEB_AUTHN" not in pool.user_auth()["AvailableChallenges"]
        assert pool.user_auth(PREFERRED_CHALLENGE="WEB_AUTHN")["ChallengeName"] == "SELECT_CHALLENGE"
        pool.admin("config", {"allowed_first_auth_factors": ["PASSWORD", "WEB_AUTHN"], "webauthn_configured": True})


# Each spoils one thing of an assertion; every one is Cognito's "Incorrect username or password.",
# told apart by a word of the recorded detail.
SIGN_IN_SPOILS = {
    "http origin": ({"origin": "http://" + RP_ID}, "origin"),
    "other host": ({"origin": "https://evil.test"}, "origin"),
    "subdomain": ({"origin": "https://login." + RP_ID}, "origin"),
    "type": ({"type": "webauthn.create"}, "type"),
    "rp id hash": ({"rp_id": "evil.test"}, "RP ID hash"),
    "user not present": ({"flags": UV}, "User Present"),
    "signature": ({"bad_signature": True}, "signature"),
    "challenge": ({"challenge": b64url(os.urandom(32))}, "challenge"),
    "user handle": ({"user_handle": b"someone-else"}, "userHandle"),
}


@pytest.mark.parametrize("spoil", SIGN_IN_SPOILS)
def test_sign_in_refusals(pool, spoil):
    get, why = SIGN_IN_SPOILS[spoil]
    key = pool.register(pool.user())
    challenge = pool.passkey_challenge()
    assert why in pool.refused(challenge, key.get(challenge, **get))
    # The Session is spent by the wrong answer; a new sign-in with the right one works.
    assert "once" in pool.answer(challenge, key.get(challenge))[1]["message"]
    pool.signs_in(key)


def test_a_replayed_or_borrowed_challenge_is_refused(pool):
    key = pool.register(pool.user())
    pool.register(pool.user(OTHER))
    first = pool.passkey_challenge()
    used = key.get(first)
    assert pool.answer(first, used)[0] == 200
    # The same assertion in a new Session: its challenge is the old one.
    assert "challenge" in pool.refused(pool.passkey_challenge(), used)
    # Signed over the challenge of another user's sign-in.
    theirs = pool.passkey_challenge(OTHER)
    mine = pool.passkey_challenge()
    other_challenge = json.loads(theirs["ChallengeParameters"]["CREDENTIAL_REQUEST_OPTIONS"])["challenge"]
    assert "challenge" in pool.refused(mine, key.get(mine, challenge=other_challenge))


def test_a_passkey_registered_after_the_challenge_is_not_allowed_by_it(pool):
    token = pool.user()
    pool.register(token)
    challenge = pool.passkey_challenge()
    later = pool.register(token)
    assert "allowed" in pool.refused(challenge, later.get(challenge))
    pool.signs_in(later)


def test_another_users_passkey_is_refused(pool):
    pool.register(pool.user())
    theirs = pool.register(pool.user(OTHER))
    challenge = pool.passkey_challenge()
    assert "not a passkey of this user" in pool.refused(challenge, theirs.get(challenge))
    assert pool.passkeys(OTHER)[0]["sign_count"] == 0  # untouched


def test_user_verification(pool):
    token = pool.user()
    # Preferred (the default): a key that does not verify the user registers and signs in.
    pool.signs_in(pool.register(token, flags=UP), flags=UP)
    pool.admin("config", {"webauthn_user_verification": "required"})
    pool.fails("CompleteWebAuthnRegistration", "WebAuthnCredentialNotSupportedException", AccessToken=token,
               Credential=Authenticator().create(pool.start(token), flags=UP))
    assert "User verification" in pool.detail()
    key = pool.register(token)
    challenge = pool.passkey_challenge()
    assert json.loads(challenge["ChallengeParameters"]["CREDENTIAL_REQUEST_OPTIONS"])["userVerification"] == "required"
    assert "User verification" in pool.refused(challenge, key.get(challenge, flags=UP))
    pool.signs_in(key, flags=UP | UV)


def test_the_sign_count_must_move_forward(pool):
    key = pool.register(pool.user())
    pool.signs_in(key)
    pool.signs_in(key)
    assert pool.passkeys()[0]["sign_count"] == 2
    # A copy of the key that lags behind (or one that stands still) is a clone.
    key.counter, key.counter_step = 1, 1
    challenge = pool.passkey_challenge()
    assert "sign count 2 is not above 2" in pool.refused(challenge, key.get(challenge))
    key.counter = 0
    challenge = pool.passkey_challenge()
    assert "sign count 1 is not above 2" in pool.refused(challenge, key.get(challenge))
    key.counter = 5
    pool.signs_in(key)
    assert pool.passkeys()[0]["sign_count"] == 6


def test_an_authenticator_without_a_counter_signs_in_again(pool):
    token = pool.user()
    key = pool.register(token, Authenticator(counter_step=0))
    pool.signs_in(key)
    pool.signs_in(key)
    assert pool.passkeys()[0]["sign_count"] == 0


def test_the_secret_hash_goes_with_the_answer(pool):
    pool.admin("config", {"client_secret": SECRET})
    hashed = secret_hash(SECRET, USER, CLIENT)
    key = pool.register(pool.user(SECRET_HASH=hashed))
    challenge = pool.passkey_challenge(SECRET_HASH=hashed)
    status, answer = pool.answer(challenge, key.get(challenge))
    assert (status, answer["__type"]) == (400, "NotAuthorizedException") and "SECRET_HASH" in answer["message"]
    status, answer = pool.answer(challenge, key.get(challenge), SECRET_HASH=secret_hash(SECRET, OTHER, CLIENT))
    assert (status, answer["__type"]) == (400, "NotAuthorizedException") and "secret hash" in answer["message"]
    status, answer = pool.answer(challenge, key.get(challenge), SECRET_HASH=hashed)
    assert status == 200 and "AccessToken" in answer["AuthenticationResult"], answer


def test_a_passkey_sign_in_brings_a_device(pool):
    pool.admin("config", {"device_tracking": "always"})
    key = pool.register(pool.user())
    metadata = pool.signs_in(key)["NewDeviceMetadata"]
    assert metadata["DeviceKey"].startswith("us-east-1_")
    # A DEVICE_KEY the user does not have: refused once the passkey is proven.
    challenge = pool.passkey_challenge()
    status, answer = pool.answer(challenge, key.get(challenge), DEVICE_KEY="us-east-1_not-a-device")
    assert (status, answer["__type"]) == (400, "ResourceNotFoundException"), answer
    # Two different DEVICE_KEYs (InitiateAuth's and the answer's) are one too many.
    challenge = pool.passkey_challenge(DEVICE_KEY=metadata["DeviceKey"])
    status, answer = pool.answer(challenge, key.get(challenge), DEVICE_KEY="us-east-1_not-a-device")
    assert (status, answer["__type"]) == (400, "InvalidParameterException"), answer


def test_a_credential_that_is_not_json_is_refused(pool):
    pool.register(pool.user())
    for credential in ("not json", "[]", json.dumps({"id": "x"})):
        challenge = pool.passkey_challenge()
        status, answer = pool.answer(challenge, credential)
        assert (status, answer["__type"]) == (400, "InvalidParameterException"), answer
