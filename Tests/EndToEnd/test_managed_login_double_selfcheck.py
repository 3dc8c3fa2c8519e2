"""Checks of the Cognito test double's managed login (hosted UI) and OAuth 2.0
endpoints, so the end-to-end tests of browser sign-in, OAuth refresh and
revocation and the client-credentials grant can trust it.

The double runs in-process (start_double) and is spoken to over HTTP as a
browser and cog-cred would: the pages with urllib, reading each 302's
Location instead of following it, and twice with a real headless browser
(Debian's chromium through chromedriver, driven by selenium) that fills in
the form and lands on a small listener standing in for the app's redirect
URI. Expiry is tested by configuring lifetimes of 0, never by sleeping.
"""
import base64
import hashlib
import json
import re
import secrets
import urllib.error
import urllib.parse
import urllib.request

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from cognito_double import DEFAULT_CONFIG, TARGET_PREFIX
from serving import QuietHandler, QuietServer, serve_in_background
from support import NoRedirects, b64url, b64url_decode, claims

CLIENT = DEFAULT_CONFIG["client_id"]
POOL_ID = DEFAULT_CONFIG["pool_id"]
USER = "alice@example.com"
PASSWORD = "Correct-Horse-9"
# Characters RFC 6749's form-encoding of Basic credentials changes: a client
# that skips it sends "+" (a space once decoded) and a bare ":".
SECRET = "s3cr3t+/:=x"
# Port 9 (discard) is never listened on: these redirect targets are only read from Location.
CALLBACK = "http://127.0.0.1:9/callback"
LOGOUT = "http://127.0.0.1:9/signed-out"
# A state with everything that must survive the round trip byte for byte.
STATE = "st/a te&x=1+%41é"


def pkce():
    """(code_verifier, its S256 code_challenge), as RFC 7636 4.1-4.2."""
    verifier = secrets.token_urlsafe(48)  # 64 characters of the allowed alphabet
    return verifier, b64url(hashlib.sha256(verifier.encode()).digest())


def query_of(location):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query, keep_blank_values=True))


def basic(client_id, secret, encode=True):
    """An Authorization header; RFC 6749 2.3.1 form-encodes both parts first."""
    if encode:
        client_id, secret = urllib.parse.quote_plus(client_id), urllib.parse.quote_plus(secret)
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


# No proxy from the environment for loopback, and no following of redirects.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirects)


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    @property
    def text(self):
        return self.body.decode()

    @property
    def json(self):
        return json.loads(self.body)

    @property
    def location(self):
        return self.headers.get("Location")


class Domain:
    """A client of the double's managed login domain, plus its admin API."""

    def __init__(self, url):
        self.url = url

    def request(self, path, data=None, headers=None, method=None):
        req = urllib.request.Request(self.url + path.lstrip("/"), data=data, headers=headers or {}, method=method)
        try:
            with OPENER.open(req, timeout=10) as r:
                return Answer(r.status, r.headers, r.read())
        except urllib.error.HTTPError as err:
            return Answer(err.code, err.headers, err.read())

    def admin(self, path, body=None):
        answer = self.request("_double/" + path, None if body is None else json.dumps(body).encode())
        return answer.status, answer.json

    def configure(self, **config):
        status, answer = self.admin("config", config)
        assert status == 200, answer
        return answer

    def add_user(self, username=USER, password=PASSWORD, **extra):
        assert self.admin("users", {"username": username, "password": password, **extra})[0] == 200

    def stats(self):
        return self.admin("stats")[1]

    def calls(self, key):
        return self.stats()["calls"].get(key, 0)

    def authorize_query(self, **params):
        """An authorize request as cog-cred makes it; None leaves a parameter out."""
        base = {"response_type": "code", "client_id": CLIENT, "redirect_uri": CALLBACK,
                "scope": "openid email", "state": STATE, "nonce": "n-0S6_WzA2Mj",
                "code_challenge": pkce()[1], "code_challenge_method": "S256"}
        base.update(params)
        return urllib.parse.urlencode({k: v for k, v in base.items() if v is not None},
                                      quote_via=urllib.parse.quote)

    def authorize(self, **params):
        return self.request("oauth2/authorize?" + self.authorize_query(**params))

    def login(self, session, **fields):
        return self.request("login", urllib.parse.urlencode({"login_session": session, **fields}).encode(),
                            {"Content-Type": "application/x-www-form-urlencoded"})

    def login_page(self, **params):
        """The login_session of a fresh sign-in page."""
        page = self.authorize(**params)
        assert page.status == 200, page.text
        return session_of(page.text)

    def code(self, challenge, username=USER, password=PASSWORD, **params):
        """Signs in through the form; the code the redirect carries."""
        answer = self.login(self.login_page(code_challenge=challenge, **params), username=username,
                            password=password)
        assert answer.status == 302, answer.text
        return query_of(answer.location)["code"]

    def token(self, auth=None, content_type="application/x-www-form-urlencoded", body=None, **form):
        headers = {"Content-Type": content_type}
        if auth is not None:
            headers["Authorization"] = auth
        data = body if body is not None else urllib.parse.urlencode(form).encode()
        return self.request("oauth2/token", data, headers)

    def redeem(self, code, verifier, redirect_uri=CALLBACK, auth=None, **extra):
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                "code_verifier": verifier, **extra}
        if auth is None:
            form.setdefault("client_id", CLIENT)
        return self.token(auth=auth, **form)

    def tokens(self, scope="openid email", **params):
        """A whole sign-in: authorize, the form, the code exchanged."""
        verifier, challenge = pkce()
        answer = self.redeem(self.code(challenge, scope=scope, **params), verifier)
        assert answer.status == 200, answer.text
        return answer.json

    def refresh(self, token, auth=None, **extra):
        form = {"grant_type": "refresh_token", "refresh_token": token, **extra}
        if auth is None:
            form.setdefault("client_id", CLIENT)
        return self.token(auth=auth, **form)

    def revoke(self, token, auth=None, **extra):
        form = {"token": token, **extra}
        if auth is None:
            form.setdefault("client_id", CLIENT)
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if auth is not None:
            headers["Authorization"] = auth
        return self.request("oauth2/revoke", urllib.parse.urlencode(form).encode(), headers)

    def api(self, action, **body):
        """A call to the Cognito JSON API of the same double."""
        answer = self.request("", json.dumps(body).encode(), {
            "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": TARGET_PREFIX + action})
        return answer.status, answer.json

    def verify(self, jwt):
        """The claims of a token whose RS256 signature the pool's JWKS verifies."""
        header = json.loads(b64url_decode(jwt.split(".")[0]))
        jwks = self.request(f"{POOL_ID}/.well-known/jwks.json").json
        key = next(k for k in jwks["keys"] if k["kid"] == header["kid"])
        number = lambda v: int.from_bytes(b64url_decode(v), "big")  # noqa: E731
        public = rsa.RSAPublicNumbers(number(key["e"]), number(key["n"])).public_key()
        signing_input, _, signature = jwt.rpartition(".")
        public.verify(b64url_decode(signature), signing_input.encode(),
                      padding.PKCS1v15(), hashes.SHA256())
        found = claims(jwt)
        assert found["iss"] == self.url + POOL_ID  # the issuer status --verify expects
        return found


def session_of(page):
    match = re.search(r'name="login_session" value="([^"]+)"', page)
    assert match, page
    return match.group(1)


def error_of(answer):
    assert answer.headers["Content-Type"] == "application/json"
    body = answer.json
    assert set(body) == {"error", "error_description"} and body["error_description"], body
    return answer.status, body["error"]


@pytest.fixture
def domain(server):
    d = Domain(server)
    assert d.admin("reset", {})[0] == 200
    d.configure(callback_urls=[CALLBACK], logout_urls=[LOGOUT])
    d.add_user()
    return d


# --- config ----------------------------------------------------------------------------

def test_the_new_config_keys_and_their_defaults(server):
    d = Domain(server)
    d.admin("reset", {})
    config = d.admin("config")[1]
    assert {k: config[k] for k in ("callback_urls", "logout_urls", "oauth_flows", "allowed_scopes", "custom_scopes",
                                   "identity_providers", "authorization_code_lifetime",
                                   "refresh_token_lifetime")} == {
        "callback_urls": [], "logout_urls": [], "oauth_flows": ["code"],
        "allowed_scopes": ["openid", "email", "profile", "phone", "aws.cognito.signin.user.admin"],
        "custom_scopes": [], "identity_providers": ["CorporateIdP"], "authorization_code_lifetime": 300,
        "refresh_token_lifetime": 30 * 86400}


@pytest.mark.parametrize("patch", [
    {"callback_urls": "http://127.0.0.1/cb"}, {"callback_urls": ["no-scheme"]}, {"callback_urls": [""]},
    {"callback_urls": ["http://127.0.0.1/cb#frag"]}, {"logout_urls": [1]}, {"oauth_flows": ["implicit"]},
    {"oauth_flows": "code"}, {"allowed_scopes": ["two words"]}, {"custom_scopes": ["noslash"]},
    {"identity_providers": ["COGNITO"]}, {"identity_providers": ["bad name"]},
    {"authorization_code_lifetime": -1}, {"authorization_code_lifetime": True}, {"refresh_token_lifetime": 1.5},
])
def test_bad_config_is_refused_and_changes_nothing(domain, patch):
    before = domain.admin("config")[1]
    status, answer = domain.admin("config", patch)
    assert status == 400 and "error" in answer
    assert domain.admin("config")[1] == before


# --- GET /oauth2/authorize -------------------------------------------------------------

def test_authorize_shows_the_sign_in_page(domain):
    verifier, challenge = pkce()
    query = domain.authorize_query(code_challenge=challenge, scope="openid email profile")
    page = domain.request("oauth2/authorize?" + query)
    assert page.status == 200 and page.headers["Content-Type"] == "text/html; charset=utf-8"
    text = page.text
    assert re.search(r'<form id="login" method="post" action="/login">', text)
    for pattern in (r'<input id="username" name="username" type="text"',
                    r'<input id="password" name="password" type="password"',
                    r'<button type="submit" id="signin"',
                    r'<button type="submit" id="federated" name="provider" value="CorporateIdP">'
                    r"Sign in with CorporateIdP</button>",
                    r'<button type="submit" id="cancel" name="cancel" value="1">Cancel</button>'):
        assert re.search(pattern, text), pattern
    assert 'id="error"' not in text
    session_of(text)
    # What the app sent, for tests of cog-cred's request.
    status, last = domain.admin("last_authorize")
    assert status == 200 and last["query"] == query
    assert last["params"] == {"response_type": "code", "client_id": CLIENT, "redirect_uri": CALLBACK,
                              "scope": "openid email profile", "state": STATE, "nonce": "n-0S6_WzA2Mj",
                              "code_challenge": challenge, "code_challenge_method": "S256"}
    assert domain.calls("oauth2/authorize") == 1
    record = domain.stats()["requests"][-1]
    assert (record["action"], record["outcome"], record["status"]) == ("oauth2/authorize", "login_page", 200)


def test_last_authorize_is_404_before_any(domain):
    assert domain.admin("last_authorize")[0] == 404


@pytest.mark.parametrize("params, error", [
    ({"client_id": "other"}, "invalid_client"),
    ({"client_id": None}, "invalid_client"),
    ({"redirect_uri": "http://127.0.0.1:10/callback"}, "redirect_mismatch"),  # another port
    ({"redirect_uri": CALLBACK + "/"}, "redirect_mismatch"),                  # a trailing slash
    ({"redirect_uri": "http://localhost:9/callback"}, "redirect_mismatch"),   # another host name
    ({"redirect_uri": None}, "redirect_mismatch"),
])
def test_an_unknown_client_or_redirect_uri_gets_an_error_page_never_a_redirect(domain, params, error):
    page = domain.authorize(**params)
    assert page.status == 400 and page.location is None
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    assert f'id="error" data-error="{error}"' in page.text


def test_a_parameter_given_twice_is_an_error_page(domain):
    page = domain.request("oauth2/authorize?" + domain.authorize_query() + "&scope=openid")
    assert page.status == 400 and page.location is None and 'data-error="invalid_request"' in page.text


@pytest.mark.parametrize("params, error", [
    ({"response_type": "token"}, "unauthorized_client"),
    ({"response_type": "id_token"}, "unsupported_response_type"),
    ({"response_type": None}, "unsupported_response_type"),
    ({"scope": "openid orders/read"}, "invalid_scope"),
    ({"scope": "openid admin"}, "invalid_scope"),
    ({"code_challenge": None}, "invalid_request"),
    ({"code_challenge_method": None}, "invalid_request"),
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"code_challenge": "tooshort"}, "invalid_request"),
    ({"code_challenge": "+" * 43}, "invalid_request"),   # not base64url
    ({"code_challenge": "A" * 44}, "invalid_request"),   # not a SHA-256
    ({"identity_provider": "Google"}, "invalid_request"),
])
def test_other_authorize_errors_go_back_to_the_app_with_the_state(domain, params, error):
    answer = domain.authorize(**params)
    assert answer.status == 302 and answer.location.startswith(CALLBACK + "?")
    back = query_of(answer.location)
    assert set(back) == {"error", "error_description", "state"}
    assert (back["error"], back["state"]) == (error, STATE) and back["error_description"]
    assert domain.stats()["requests"][-1]["outcome"] == f"redirect:{error}"


def test_the_code_grant_must_be_enabled(domain):
    domain.configure(oauth_flows=["client_credentials"])
    back = query_of(domain.authorize().location)
    assert back["error"] == "unauthorized_client"


def test_without_a_state_none_comes_back(domain):
    back = query_of(domain.authorize(state=None, scope="bogus").location)
    assert back["error"] == "invalid_scope" and "state" not in back


# --- POST /login -----------------------------------------------------------------------

def test_the_right_password_redirects_with_a_code_and_the_state(domain):
    session = domain.login_page()
    answer = domain.login(session, username=USER, password=PASSWORD)
    assert answer.status == 302 and answer.location.startswith(CALLBACK + "?")
    back = query_of(answer.location)
    assert set(back) == {"code", "state"} and back["state"] == STATE
    assert re.fullmatch(r"[0-9a-f-]{36}", back["code"])
    # The password is in no record.
    record = domain.stats()["requests"][-1]
    assert (record["action"], record["outcome"]) == ("login", "code") and "password" not in record["params"]
    assert domain.calls("login") == 1
    # The sign-in page is spent.
    again = domain.login(session, username=USER, password=PASSWORD)
    assert again.status == 400 and 'id="error"' in again.text


def test_a_redirect_uri_with_its_own_query_keeps_it(domain):
    target = "http://127.0.0.1:9/cb?app=cog-cred"
    domain.configure(callback_urls=[CALLBACK, target])
    answer = domain.login(domain.login_page(redirect_uri=target), username=USER, password=PASSWORD)
    assert answer.location.startswith(target + "&")
    assert query_of(answer.location)["app"] == "cog-cred"


@pytest.mark.parametrize("username, password, message", [
    (USER, "Wrong-Horse-9", "Incorrect username or password."),
    ("nobody@example.com", PASSWORD, "Incorrect username or password."),
    (USER, "", "Enter your username and password."),
    ("", PASSWORD, "Enter your username and password."),
])
def test_a_failed_sign_in_shows_the_form_again(domain, username, password, message):
    session = domain.login_page()
    answer = domain.login(session, username=username, password=password)
    assert answer.status == 200 and answer.location is None
    assert f'<p id="error" role="alert">{message}</p>' in answer.text
    assert session_of(answer.text) == session and 'id="password"' in answer.text
    assert domain.stats()["requests"][-1]["outcome"] == "wrong"
    # The same page still works with the right password.
    assert domain.login(session, username=USER, password=PASSWORD).status == 302


def test_users_the_form_cannot_sign_in(domain):
    domain.add_user("eve@example.com", PASSWORD, confirmed=False)
    domain.add_user("mfa@example.com", PASSWORD, mfa="totp")
    domain.add_user("new@example.com", PASSWORD, force_change_password=True)
    session = domain.login_page()
    for username, message in (("eve@example.com", "User is not confirmed."),
                              ("mfa@example.com", "does not do"), ("new@example.com", "does not do")):
        answer = domain.login(session, username=username, password=PASSWORD)
        assert answer.status == 200 and message in re.search(r'id="error"[^>]*>([^<]*)', answer.text).group(1)


def test_an_email_alias_signs_in_as_the_canonical_user(domain):
    domain.configure(username_attributes=["email"])
    domain.add_user("a1b2-canonical", PASSWORD, attributes={"email": "al@example.com"})
    verifier, challenge = pkce()
    tokens = domain.redeem(domain.code(challenge, username="al@example.com"), verifier).json
    assert claims(tokens["access_token"])["username"] == "a1b2-canonical"


def test_cancel_redirects_with_access_denied(domain):
    session = domain.login_page()
    answer = domain.login(session, cancel="1")
    back = query_of(answer.location)
    assert answer.status == 302 and (back["error"], back["state"]) == ("access_denied", STATE)
    assert back["error_description"] and "code" not in back
    assert domain.login(session, username=USER, password=PASSWORD).status == 400  # spent


def test_the_sign_in_page_expires_with_the_session_lifetime(domain):
    domain.configure(session_lifetime=0)
    session = domain.login_page()
    answer = domain.login(session, username=USER, password=PASSWORD)
    assert answer.status == 400 and answer.location is None and "expired" in answer.text
    assert domain.login("made-up", username=USER, password=PASSWORD).status == 400


# --- federated sign-in -----------------------------------------------------------------

def federated_claims(domain, answer, verifier):
    assert answer.status == 302, answer.text
    back = query_of(answer.location)
    assert back["state"] == STATE
    tokens = domain.redeem(back["code"], verifier).json
    return domain.verify(tokens["id_token"]), domain.verify(tokens["access_token"])


def test_the_federated_button_signs_in_the_providers_user(domain):
    verifier, challenge = pkce()
    answer = domain.login(domain.login_page(code_challenge=challenge), provider="CorporateIdP",
                          username="", password="")
    id_token, access = federated_claims(domain, answer, verifier)
    assert id_token["cognito:username"] == access["username"] == "corporateidp_jdoe"
    assert id_token["identities"] == [{
        "userId": "jdoe", "providerName": "CorporateIdP", "providerType": "SAML",
        "issuer": "urn:example:saml:corporateidp", "primary": "true",
        "dateCreated": id_token["identities"][0]["dateCreated"]}]
    assert id_token["identities"][0]["dateCreated"].isdigit()
    assert id_token["cognito:groups"] == access["cognito:groups"] == [f"{POOL_ID}_CorporateIdP"]
    assert id_token["email"] == "jdoe@corporate.example"
    # identity_provider on the authorize request skips the page; the user is the same one.
    verifier, challenge = pkce()
    again, _ = federated_claims(domain, domain.authorize(identity_provider="CorporateIdP", code_challenge=challenge),
                                verifier)
    assert again["sub"] == id_token["sub"] and again["identities"] == id_token["identities"]
    outcomes = [r.get("outcome") for r in domain.stats()["requests"] if r["action"] in ("login", "oauth2/authorize")]
    assert outcomes == ["login_page", "federated", "federated"]


def test_the_federated_user_has_no_password_anywhere(domain):
    domain.authorize(identity_provider="CorporateIdP")  # brings the user in
    status, info = domain.admin("users?username=corporateidp_jdoe")
    assert status == 200 and info["password_set"] is False
    for password in ("None", "", "x"):
        status, answer = domain.api("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_PASSWORD_AUTH",
                                    AuthParameters={"USERNAME": "corporateidp_jdoe", "PASSWORD": password or "y"})
        assert (status, answer["__type"]) == (400, "NotAuthorizedException")
    status, answer = domain.api("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_SRP_AUTH",
                                AuthParameters={"USERNAME": "corporateidp_jdoe", "SRP_A": "ab" * 64})
    assert (status, answer["__type"]) == (400, "NotAuthorizedException")
    answer = domain.login(domain.login_page(), username="corporateidp_jdoe", password="None")
    assert answer.status == 200 and "Incorrect username or password." in answer.text


def test_identity_provider_cognito_shows_the_form_without_federation(domain):
    page = domain.authorize(identity_provider="COGNITO")
    assert page.status == 200 and 'id="username"' in page.text and 'name="provider"' not in page.text


def test_every_configured_provider_gets_a_button(domain):
    domain.configure(identity_providers=["CorporateIdP", "Partner"])
    page = domain.authorize().text
    assert 'id="federated" name="provider" value="CorporateIdP"' in page
    assert 'id="federated-Partner" name="provider" value="Partner"' in page
    verifier, challenge = pkce()
    answer = domain.login(domain.login_page(code_challenge=challenge), provider="Partner")
    id_token, _ = federated_claims(domain, answer, verifier)
    assert id_token["cognito:username"] == "partner_jdoe"
    assert id_token["identities"][0]["providerName"] == "Partner"
    # A provider the client does not have goes back to the app as an error.
    back = query_of(domain.login(domain.login_page(), provider="Nope").location)
    assert back["error"] == "invalid_request"


# --- POST /oauth2/token: authorization_code --------------------------------------------

def test_the_code_gives_verifiable_tokens_for_the_granted_scopes(domain):
    verifier, challenge = pkce()
    code = domain.code(challenge, scope="openid email profile", nonce="nonce-123")
    answer = domain.redeem(code, verifier)
    assert answer.status == 200 and answer.headers["Content-Type"] == "application/json"
    assert answer.headers["Cache-Control"] == "no-store"
    tokens = answer.json
    assert set(tokens) == {"access_token", "id_token", "refresh_token", "token_type", "expires_in"}
    assert (tokens["token_type"], tokens["expires_in"]) == ("Bearer", 3600)
    id_token, access = domain.verify(tokens["id_token"]), domain.verify(tokens["access_token"])
    sub = domain.admin(f"users?username={USER}")[1]["sub"]
    assert {k: id_token[k] for k in ("aud", "token_use", "nonce", "cognito:username", "sub", "email")} == {
        "aud": CLIENT, "token_use": "id", "nonce": "nonce-123", "cognito:username": USER, "sub": sub,
        "email": USER}
    assert id_token["at_hash"] == b64url(hashlib.sha256(tokens["access_token"].encode()).digest()[:16])
    assert "identities" not in id_token
    assert {k: access[k] for k in ("token_use", "client_id", "scope", "username", "sub")} == {
        "token_use": "access", "client_id": CLIENT, "scope": "openid email profile", "username": USER, "sub": sub}
    assert access["exp"] - access["iat"] == 3600 and access["auth_time"] <= access["iat"]
    assert domain.calls("oauth2/token:authorization_code") == 1
    record = domain.stats()["requests"][-1]
    assert (record["action"], record["grant_type"], record["status"]) == ("oauth2/token", "authorization_code", 200)
    assert record["params"]["code_verifier"] == verifier
    # The access token works where the API checks one.
    assert domain.api("GlobalSignOut", AccessToken=tokens["access_token"])[0] == 200


def test_no_scope_grants_every_allowed_one_and_no_openid_no_id_token(domain):
    everything = domain.tokens(scope=None)
    assert claims(everything["access_token"])["scope"] == " ".join(DEFAULT_CONFIG["allowed_scopes"])
    assert "id_token" in everything
    # As Cognito: without openid there is no ID token, now or on refresh.
    plain = domain.tokens(scope="aws.cognito.signin.user.admin")
    assert set(plain) == {"access_token", "refresh_token", "token_type", "expires_in"}
    assert claims(plain["access_token"])["scope"] == "aws.cognito.signin.user.admin"
    assert "id_token" not in domain.refresh(plain["refresh_token"]).json


def test_tokens_honour_lifetime_and_issue_time(domain):
    domain.configure(token_lifetime=60, issued_at_offset=-3600)
    tokens = domain.tokens()
    access = claims(tokens["access_token"])
    assert tokens["expires_in"] == 60 and access["exp"] - access["iat"] == 60
    assert claims(tokens["id_token"])["exp"] == access["exp"]  # both already expired, as the API's would be


def test_a_code_is_single_use(domain):
    verifier, challenge = pkce()
    code = domain.code(challenge)
    assert domain.redeem(code, verifier).status == 200
    assert error_of(domain.redeem(code, verifier)) == (400, "invalid_grant")
    assert error_of(domain.redeem("00000000-0000-0000-0000-000000000000", verifier)) == (400, "invalid_grant")


def test_a_code_expires(domain):
    domain.configure(authorization_code_lifetime=0)
    verifier, challenge = pkce()
    answer = domain.redeem(domain.code(challenge), verifier)
    assert error_of(answer) == (400, "invalid_grant") and "expired" in answer.json["error_description"]


@pytest.mark.parametrize("change", ["verifier", "short_verifier", "redirect_uri"])
def test_pkce_and_redirect_uri_must_match_and_a_failure_spends_the_code(domain, change):
    verifier, challenge = pkce()
    code = domain.code(challenge)
    other_verifier = pkce()[0]
    wrong = {"verifier": {"verifier": other_verifier},
             "short_verifier": {"verifier": verifier[:42]},
             "redirect_uri": {"verifier": verifier, "redirect_uri": CALLBACK + "/"}}[change]
    assert error_of(domain.redeem(code, **wrong)) == (400, "invalid_grant")
    # Spent by that first try, right or wrong.
    assert error_of(domain.redeem(code, verifier)) == (400, "invalid_grant")


def test_a_code_needs_the_code_grant_still_enabled(domain):
    verifier, challenge = pkce()
    code = domain.code(challenge)
    domain.configure(oauth_flows=["client_credentials"])
    assert error_of(domain.redeem(code, verifier)) == (400, "unauthorized_client")


@pytest.mark.parametrize("missing", ["code", "redirect_uri", "code_verifier", "grant_type"])
def test_a_missing_parameter_is_invalid_request_and_spends_nothing(domain, missing):
    verifier, challenge = pkce()
    code = domain.code(challenge)
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK, "code_verifier": verifier,
            "client_id": CLIENT}
    del form[missing]
    assert error_of(domain.token(**form)) == (400, "invalid_request")
    assert domain.redeem(code, verifier).status == 200


def test_the_body_must_be_a_form_with_each_parameter_once(domain):
    verifier, challenge = pkce()
    code = domain.code(challenge)
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK, "code_verifier": verifier,
            "client_id": CLIENT}
    as_json = domain.token(content_type="application/json", body=json.dumps(form).encode())
    assert error_of(as_json) == (400, "invalid_request")
    twice = domain.token(body=(urllib.parse.urlencode(form) + "&client_id=" + CLIENT).encode())
    assert error_of(twice) == (400, "invalid_request")
    assert domain.redeem(code, verifier).status == 200


def test_an_unknown_grant_type(domain):
    assert error_of(domain.token(grant_type="password", client_id=CLIENT, username=USER, password=PASSWORD)) == \
        (400, "unsupported_grant_type")
    assert domain.calls("oauth2/token:password") == 1


# --- client authentication -------------------------------------------------------------

def test_a_client_with_a_secret_must_use_http_basic(domain):
    domain.configure(client_secret=SECRET)
    verifier, challenge = pkce()
    code = domain.code(challenge)
    for auth, form in (
            (None, {"client_id": CLIENT}),                                   # no authentication
            (None, {"client_id": CLIENT, "client_secret": SECRET}),          # client_secret_post
            (basic(CLIENT, "wrong"), {}),
            (basic(CLIENT, SECRET, encode=False), {}),                       # not form-encoded first
            (basic("other", SECRET), {}),
            (basic(CLIENT, SECRET), {"client_id": "other"}),                 # the body names another client
            (basic(CLIENT, SECRET), {"client_secret": SECRET}),
            ("Basic not-base64!", {}),
            ("Basic " + base64.b64encode(CLIENT.encode()).decode(), {}),     # no colon
            ("Bearer " + SECRET, {}),
    ):
        answer = domain.redeem(code, verifier, auth=auth, **form)
        assert error_of(answer) == (401, "invalid_client"), (auth, form)
    # None of those spent the code: client authentication comes first.
    answer = domain.redeem(code, verifier, auth=basic(CLIENT, SECRET), client_id=CLIENT)
    assert answer.status == 200, answer.text


def test_a_client_without_a_secret_names_itself_in_the_body(domain):
    verifier, challenge = pkce()
    code = domain.code(challenge)
    for auth, form in ((None, {"client_id": "other"}), (None, {"client_id": ""}),
                       (basic(CLIENT, "invented"), {})):
        assert error_of(domain.redeem(code, verifier, auth=auth, **form)) == (401, "invalid_client"), (auth, form)
    # Basic with an empty secret also names it.
    assert domain.redeem(code, verifier, auth=basic(CLIENT, "")).status == 200


# --- POST /oauth2/token: refresh_token -------------------------------------------------

def test_refresh_without_rotation(domain):
    first = domain.tokens(scope="openid profile", nonce="once")
    answer = domain.refresh(first["refresh_token"])
    assert answer.status == 200 and answer.headers["Cache-Control"] == "no-store"
    tokens = answer.json
    assert set(tokens) == {"access_token", "id_token", "token_type", "expires_in"}  # no new refresh token
    access, id_token = domain.verify(tokens["access_token"]), domain.verify(tokens["id_token"])
    assert access["scope"] == "openid profile" and access["auth_time"] == claims(first["access_token"])["auth_time"]
    assert "nonce" not in id_token and id_token["aud"] == CLIENT
    assert id_token["at_hash"] == b64url(hashlib.sha256(tokens["access_token"].encode()).digest()[:16])
    assert domain.refresh(first["refresh_token"]).status == 200  # still good
    assert domain.calls("oauth2/token:refresh_token") == 2


def test_refresh_with_rotation(domain):
    domain.configure(rotate_refresh_tokens=True)
    first = domain.tokens()["refresh_token"]
    rotated = domain.refresh(first).json
    assert set(rotated) == {"access_token", "id_token", "refresh_token", "token_type", "expires_in"}
    assert rotated["refresh_token"] != first
    assert error_of(domain.refresh(first)) == (400, "invalid_grant")
    assert domain.refresh(rotated["refresh_token"]).status == 200


def test_refresh_refusals(domain):
    assert error_of(domain.refresh("never-issued")) == (400, "invalid_grant")
    revoked = domain.tokens()["refresh_token"]
    domain.admin("revoke", {"username": USER})
    assert error_of(domain.refresh(revoked)) == (400, "invalid_grant")
    domain.configure(refresh_token_lifetime=0)
    expired = domain.refresh(domain.tokens()["refresh_token"])
    assert error_of(expired) == (400, "invalid_grant") and "expired" in expired.json["error_description"]
    assert error_of(domain.token(grant_type="refresh_token", client_id=CLIENT)) == (400, "invalid_request")


def test_refresh_needs_the_client_authentication_too(domain):
    token = domain.tokens()["refresh_token"]
    domain.configure(client_secret=SECRET)
    assert error_of(domain.refresh(token)) == (401, "invalid_client")
    assert error_of(domain.refresh(token, auth=basic(CLIENT, "wrong"))) == (401, "invalid_client")
    assert domain.refresh(token, auth=basic(CLIENT, SECRET)).status == 200


def test_oauth_and_api_refresh_tokens_are_the_same_records(domain):
    oauth = domain.tokens(scope="openid email")["refresh_token"]
    status, answer = domain.api("InitiateAuth", ClientId=CLIENT, AuthFlow="REFRESH_TOKEN_AUTH",
                                AuthParameters={"REFRESH_TOKEN": oauth})
    assert status == 200 and claims(answer["AuthenticationResult"]["AccessToken"])["scope"] == "openid email"
    status, answer = domain.api("InitiateAuth", ClientId=CLIENT, AuthFlow="USER_PASSWORD_AUTH",
                                AuthParameters={"USERNAME": USER, "PASSWORD": PASSWORD})
    api = answer["AuthenticationResult"]["RefreshToken"]
    tokens = domain.refresh(api).json
    assert claims(tokens["access_token"])["scope"] == "aws.cognito.signin.user.admin" and "id_token" in tokens


def test_fail_next_answers_a_token_request_like_a_broken_service(domain):
    token = domain.tokens()["refresh_token"]
    domain.configure(fail_next={"status": 503, "body": "<html>unavailable</html>", "content_type": "text/html",
                                "count": 2, "headers": {"Retry-After": "1"}})
    for _ in range(2):
        answer = domain.refresh(token)
        assert (answer.status, answer.body, answer.headers["Content-Type"], answer.headers["Retry-After"]) == \
            (503, b"<html>unavailable</html>", "text/html", "1")
    assert domain.refresh(token).status == 200
    assert domain.calls("oauth2/token:refresh_token") == 3
    assert [r["status"] for r in domain.stats()["requests"] if r["action"] == "oauth2/token"][-3:] == [503, 503, 200]
    domain.configure(fail_next={"status": 500})
    assert domain.revoke(token).status == 500 and domain.refresh(token).status == 200  # revoke was not done


# --- POST /oauth2/revoke ---------------------------------------------------------------

def test_revoke_ends_the_sign_in(domain):
    domain.configure(rotate_refresh_tokens=True, rotation_grace_seconds=60)
    doomed, kept = domain.tokens(), domain.tokens()
    rotated = domain.refresh(doomed["refresh_token"]).json
    answer = domain.revoke(rotated["refresh_token"])
    assert (answer.status, answer.body) == (200, b"")
    for token in (doomed["refresh_token"], rotated["refresh_token"]):
        assert error_of(domain.refresh(token)) == (400, "invalid_grant")
    for access in (doomed["access_token"], rotated["access_token"]):
        assert domain.api("GlobalSignOut", AccessToken=access)[1]["__type"] == "NotAuthorizedException"
    assert domain.refresh(kept["refresh_token"]).status == 200
    assert domain.revoke(rotated["refresh_token"]).status == 200  # again: still fine
    assert domain.revoke("never-issued").status == 200            # RFC 7009: no error for an unknown token
    assert domain.calls("oauth2/revoke") == 3


def test_revoke_refusals(domain):
    tokens = domain.tokens()
    for jwt in (tokens["access_token"], tokens["id_token"]):
        assert error_of(domain.revoke(jwt)) == (400, "unsupported_token_type")
    assert error_of(domain.revoke(tokens["refresh_token"], client_id="other")) == (401, "invalid_client")
    assert error_of(domain.revoke("")) == (400, "invalid_request")
    domain.configure(client_secret=SECRET)
    assert error_of(domain.revoke(tokens["refresh_token"])) == (401, "invalid_client")
    assert error_of(domain.revoke(tokens["refresh_token"], auth=basic(CLIENT, "wrong"))) == (401, "invalid_client")
    assert domain.refresh(tokens["refresh_token"], auth=basic(CLIENT, SECRET)).status == 200  # nothing revoked
    assert domain.revoke(tokens["refresh_token"], auth=basic(CLIENT, SECRET)).status == 200
    assert error_of(domain.refresh(tokens["refresh_token"], auth=basic(CLIENT, SECRET))) == (400, "invalid_grant")


# --- POST /oauth2/token: client_credentials --------------------------------------------

def machine(domain, **config):
    """An app client set up for the client-credentials grant, changed by `config`."""
    domain.configure(**{"client_secret": SECRET, "oauth_flows": ["code", "client_credentials"],
                        "custom_scopes": ["orders/read", "orders/write"], **config})


def test_client_credentials_give_a_machine_access_token(domain):
    machine(domain)
    answer = domain.token(auth=basic(CLIENT, SECRET), grant_type="client_credentials", scope="orders/read")
    assert answer.status == 200 and answer.headers["Cache-Control"] == "no-store"
    tokens = answer.json
    assert set(tokens) == {"access_token", "token_type", "expires_in"}
    access = domain.verify(tokens["access_token"])
    assert {k: access[k] for k in ("sub", "client_id", "token_use", "scope")} == {
        "sub": CLIENT, "client_id": CLIENT, "token_use": "access", "scope": "orders/read"}
    assert "username" not in access and access["exp"] - access["iat"] == tokens["expires_in"] == 3600
    # No scope: all the custom ones.
    every = domain.token(auth=basic(CLIENT, SECRET), grant_type="client_credentials").json
    assert claims(every["access_token"])["scope"] == "orders/read orders/write"
    # A machine token is no user's: the user API refuses it.
    assert domain.api("GlobalSignOut", AccessToken=tokens["access_token"])[1]["__type"] == "NotAuthorizedException"
    assert domain.calls("oauth2/token:client_credentials") == 2


@pytest.mark.parametrize("auth, scope, expected", [
    (basic(CLIENT, SECRET), "orders/read orders/delete", (400, "invalid_scope")),
    (basic(CLIENT, SECRET), "openid", (400, "invalid_scope")),      # user scopes are not for machines
    (basic(CLIENT, "wrong"), "orders/read", (401, "invalid_client")),
    (None, "orders/read", (401, "invalid_client")),
])
def test_client_credentials_refusals(domain, auth, scope, expected):
    machine(domain)
    form = {"grant_type": "client_credentials", "scope": scope}
    if auth is None:
        form["client_id"] = CLIENT
    assert error_of(domain.token(auth=auth, **form)) == expected


def test_client_credentials_must_be_enabled_and_need_a_secret(domain):
    machine(domain, oauth_flows=["code"])
    answer = domain.token(auth=basic(CLIENT, SECRET), grant_type="client_credentials")
    assert error_of(answer) == (400, "unauthorized_client")
    machine(domain, client_secret=None)
    answer = domain.token(grant_type="client_credentials", client_id=CLIENT)
    assert error_of(answer) == (401, "invalid_client")


# --- GET /logout -----------------------------------------------------------------------

def test_logout(domain):
    answer = domain.request("logout?" + urllib.parse.urlencode({"client_id": CLIENT, "logout_uri": LOGOUT}))
    assert answer.status == 302 and answer.location == LOGOUT
    for params, error in (({"client_id": CLIENT, "logout_uri": CALLBACK}, "invalid_request"),
                          ({"client_id": CLIENT}, "invalid_request"),
                          ({"client_id": "other", "logout_uri": LOGOUT}, "invalid_client")):
        page = domain.request("logout?" + urllib.parse.urlencode(params))
        assert page.status == 400 and page.location is None and f'data-error="{error}"' in page.text
    assert domain.calls("logout") == 4
    record = domain.stats()["requests"][0]
    assert (record["action"], record["params"], record["status"]) == (
        "logout", {"client_id": CLIENT, "logout_uri": LOGOUT}, 302)


# --- a real browser --------------------------------------------------------------------

class Callback:
    """The app's redirect target: a small HTTP listener on 127.0.0.1 that
    records what reached it and shows a page the browser can stop on."""

    def __init__(self):
        hits = self.hits = []

        class Handler(QuietHandler):
            def do_GET(self):
                if self.path.startswith("/callback"):  # not the browser's own /favicon.ico
                    hits.append(self.path)
                self.send(200, "text/html; charset=utf-8",
                          b'<!doctype html><title>Signed in</title><p id="done">You can close this window.</p>')

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        serve_in_background(self.server, "callback")
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/callback"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def callback():
    c = Callback()
    yield c
    c.stop()


def browse_to_sign_in(domain, browser, callback, **params):
    """Opens the authorize URL in the browser; the PKCE verifier to redeem with."""
    domain.configure(callback_urls=[callback.url])
    verifier, challenge = pkce()
    browser.get(domain.url + "oauth2/authorize?" + domain.authorize_query(
        redirect_uri=callback.url, code_challenge=challenge, **params))
    return verifier


def landed_code(domain, browser, callback):
    """Waits for the browser to reach the redirect URI; the code it carries."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 20).until(lambda b: b.current_url.startswith(callback.url + "?"))
    assert browser.find_element(By.ID, "done").text == "You can close this window."
    back = query_of(browser.current_url)
    assert back["state"] == STATE and set(back) == {"code", "state"}
    assert len(callback.hits) == 1 and query_of(callback.hits[0]) == back
    return back["code"]


def test_a_real_browser_signs_in_with_the_password(domain, browser, callback):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    verifier = browse_to_sign_in(domain, browser, callback, nonce="browser-nonce")
    assert browser.title == "Sign in"
    browser.find_element(By.ID, "username").send_keys(USER)
    browser.find_element(By.ID, "password").send_keys("Wrong-Horse-9")
    browser.find_element(By.ID, "signin").click()
    WebDriverWait(browser, 20).until(lambda b: b.find_elements(By.ID, "error"))
    assert browser.find_element(By.ID, "error").text == "Incorrect username or password."
    assert browser.find_element(By.ID, "username").get_attribute("value") == USER  # kept for the retry
    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    browser.find_element(By.ID, "signin").click()
    code = landed_code(domain, browser, callback)
    tokens = domain.redeem(code, verifier, redirect_uri=callback.url).json
    id_token = domain.verify(tokens["id_token"])
    assert (id_token["cognito:username"], id_token["nonce"]) == (USER, "browser-nonce")
    # It really was the browser: its requests carry Chromium's User-Agent.
    pages = [r for r in domain.stats()["requests"] if r["action"] in ("oauth2/authorize", "login")]
    assert [r["outcome"] for r in pages] == ["login_page", "wrong", "code"]
    assert all("HeadlessChrome" in r["headers"]["user-agent"] for r in pages)


def test_a_real_browser_takes_the_federated_button(domain, browser, callback):
    from selenium.webdriver.common.by import By

    verifier = browse_to_sign_in(domain, browser, callback)
    button = browser.find_element(By.ID, "federated")
    assert button.text == "Sign in with CorporateIdP"
    button.click()
    code = landed_code(domain, browser, callback)
    id_token = domain.verify(domain.redeem(code, verifier, redirect_uri=callback.url).json["id_token"])
    assert id_token["cognito:username"] == "corporateidp_jdoe"
    assert id_token["identities"][0]["providerName"] == "CorporateIdP"
