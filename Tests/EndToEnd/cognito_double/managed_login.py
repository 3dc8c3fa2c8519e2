"""Managed login (the hosted UI) and OAuth 2.0: /oauth2/authorize, /login,
/oauth2/token, /oauth2/revoke, /logout.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import base64
import binascii
import copy
import hashlib
import hmac
import html
import json
import secrets
import time
import uuid
from urllib.parse import unquote_plus

from .constants import (CHALLENGE_PATTERN, FEDERATED_EMAIL, FEDERATED_USER_ID, FORM, INCORRECT,
                        VERIFIER_PATTERN)
from .errors import CognitoError, OAuthError, invalid_client, invalid_grant
from .wire import b64url, html_page, parse_form, space_separated, with_query


class ManagedLogin:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

    # ------------------------------------------------------ managed login and OAuth 2.0
    # The pool's domain: the browser's pages (authorize, login, logout) and the
    # app's token and revocation endpoints. Each request is counted and
    # recorded first, like the API's (see README.md).
    def _oauth_record(self, key: str, action: str, headers: dict, **fields) -> dict:
        self.calls[key] = self.calls.get(key, 0) + 1
        record = {"action": action, "auth_flow": None, "headers": dict(headers), **fields}
        self.requests.append(record)
        return record

    def last_authorize_request(self) -> dict:
        with self.lock:
            if self.last_authorize is None:
                raise LookupError("no GET /oauth2/authorize since the last reset")
            return copy.deepcopy(self.last_authorize)

    def oauth_authorize(self, headers: dict, raw_query: str):
        """GET /oauth2/authorize. Returns (status, content_type, headers, body)."""
        with self.lock:
            params, repeated = parse_form(raw_query)
            record = self._oauth_record("oauth2/authorize", "oauth2/authorize", headers, params=dict(params))
            self.last_authorize = {"params": dict(params), "query": raw_query}
            answer, record["outcome"] = self._authorize(params, repeated)
            record["status"] = answer[0]
            return answer

    def _authorize(self, params: dict, repeated: list):
        """(answer, outcome) for an authorize request, in the order of RFC 6749
        4.1.2.1: without a known client and a registered redirect_uri an error
        page; after that every error goes back to the app by redirect."""
        cfg = self.config
        if repeated:
            return self._error_page("invalid_request", f"{repeated[0]} is given more than once"), "error_page"
        client_id, redirect_uri = params.get("client_id"), params.get("redirect_uri")
        if client_id != cfg["client_id"]:
            return self._error_page("invalid_client", f"Client {client_id} does not exist"), "error_page"
        if redirect_uri not in cfg["callback_urls"]:
            # Cognito's page says redirect_mismatch for any URI not registered exactly as sent.
            return self._error_page("redirect_mismatch",
                                    f"{redirect_uri} is not a callback URL of client {client_id}"), "error_page"
        state = params.get("state")  # echoed exactly, when given

        def refuse(error, description):
            return (self._redirect(redirect_uri, error=error, error_description=description, state=state),
                    f"redirect:{error}")

        response_type = params.get("response_type")
        if response_type == "token":
            return refuse("unauthorized_client", "The client is not allowed the implicit grant")
        if response_type != "code":
            return refuse("unsupported_response_type", f"response_type {response_type} is not supported")
        if "code" not in cfg["oauth_flows"]:
            return refuse("unauthorized_client", "The client is not allowed the authorization code grant")
        scopes = space_separated(params.get("scope"))
        unknown = [x for x in scopes if x not in cfg["allowed_scopes"]]
        if unknown:
            return refuse("invalid_scope", f"{unknown[0]} is not an allowed scope of the client")
        challenge, method = params.get("code_challenge"), params.get("code_challenge_method")
        if not challenge:
            return refuse("invalid_request", "code_challenge is required (PKCE)")
        if method != "S256":
            return refuse("invalid_request", "code_challenge_method must be S256")
        if not CHALLENGE_PATTERN.fullmatch(challenge):
            return refuse("invalid_request", "code_challenge must be 43 base64url characters (S256)")
        request = {"client_id": client_id, "redirect_uri": redirect_uri, "state": state,
                   "nonce": params.get("nonce"), "code_challenge": challenge,
                   # No scope asks for every scope the client is allowed, as in Cognito.
                   "scopes": scopes or list(cfg["allowed_scopes"])}
        provider = params.get("identity_provider")
        if provider is not None and provider != "COGNITO":
            if provider not in cfg["identity_providers"]:
                return refuse("invalid_request", f"Identity provider {provider} is not enabled for the client")
            # Straight to the provider, which (here) signs its user in at once.
            return self._signed_in(request, self._federated_user(provider)), "federated"
        session = secrets.token_urlsafe(32)
        self.login_sessions[session] = {"request": request, "used": False, "federated": provider is None,
                                        "expires_at": time.time() + cfg["session_lifetime"]}
        return self._login_page(session), "login_page"

    def oauth_login(self, headers: dict, raw_body: bytes):
        """POST /login, the sign-in page's form."""
        with self.lock:
            try:
                form = parse_form(raw_body)[0]
            except ValueError:
                form = {}
            # Everything but the password, which no record keeps.
            record = self._oauth_record("login", "login", headers,
                                        params={k: v for k, v in form.items() if k != "password"})
            answer, record["outcome"] = self._login(form)
            record["status"] = answer[0]
            return answer

    def _login(self, form: dict):
        session_id = form.get("login_session", "")
        session = self.login_sessions.get(session_id)
        if session is None or session["used"]:
            return self._error_page("invalid_request", "This sign-in page is no longer valid: "
                                                       "start again from the application"), "error_page"
        if time.time() >= session["expires_at"]:
            return self._error_page("invalid_request", "The sign-in session has expired: "
                                                       "start again from the application"), "error_page"
        request = session["request"]
        if form.get("cancel"):
            session["used"] = True
            return self._redirect(request["redirect_uri"], error="access_denied",
                                  error_description="The user cancelled the sign-in",
                                  state=request["state"]), "cancel"
        provider = form.get("provider")
        if provider:
            session["used"] = True
            if provider not in self.config["identity_providers"]:
                return self._redirect(request["redirect_uri"], error="invalid_request",
                                      error_description=f"Identity provider {provider} is not enabled for the client",
                                      state=request["state"]), "redirect:invalid_request"
            return self._signed_in(request, self._federated_user(provider)), "federated"
        typed, password = form.get("username", ""), form.get("password", "")
        username = self._find_user(typed) if typed else None
        user = self.users.get(username)
        if not typed or not password:
            problem = "Enter your username and password."
        elif user is None or user["password"] is None or \
                not hmac.compare_digest(user["password"].encode(), password.encode()):
            problem = INCORRECT  # the same for an unknown user, as a pool that hides existence says
        elif not user["confirmed"]:
            problem = "User is not confirmed."
        elif user["force_change_password"] or user["mfa"] is not None:
            # Cognito's pages would go on to a new password or an MFA code; the
            # double's stop here rather than pretend.
            problem = "This user needs a new password or an MFA code, which the double's sign-in page does not do."
        else:
            session["used"] = True
            return self._signed_in(request, username), "code"
        return self._login_page(session_id, error=problem, username=typed), "wrong"

    def _signed_in(self, request: dict, username: str):
        """The redirect that ends a sign-in: a new authorization code and the state."""
        code = str(uuid.uuid4())  # Cognito's codes are UUIDs too
        self.authorization_codes[code] = {
            **request, "username": username, "sub": self.users[username]["sub"], "used": False,
            "auth_time": int(time.time()) + self.config["issued_at_offset"],
            "expires_at": time.time() + self.config["authorization_code_lifetime"]}
        return self._redirect(request["redirect_uri"], code=code, state=request["state"])

    def _federated_user(self, provider: str) -> str:
        """The user a federated sign-in through `provider` brings in, made on
        its first sign-in as Cognito does: named "<provider>_<its user id>"
        (lower case, as in a case-insensitive pool), with no password."""
        username = f"{provider.lower()}_{FEDERATED_USER_ID}"
        user = self.users.get(username)
        if user is None or user["identities"] is None:
            user = self._new_user(password=None, confirmed=True, sub=str(uuid.uuid4()),
                                  attributes={"email": FEDERATED_EMAIL}, email_verified=False)
            user["identities"] = [{
                "userId": FEDERATED_USER_ID, "providerName": provider, "providerType": "SAML",
                "issuer": f"urn:example:saml:{provider.lower()}", "primary": "true",
                "dateCreated": str(int(time.time() * 1000))}]
            self.users[username] = user
        return username

    def oauth_logout(self, headers: dict, raw_query: str):
        """GET /logout: back to a registered sign-out URL. Tokens are not
        revoked (Cognito's /logout only ends its own browser session)."""
        with self.lock:
            params = parse_form(raw_query)[0]
            record = self._oauth_record("logout", "logout", headers, params=dict(params))
            client_id, logout_uri = params.get("client_id"), params.get("logout_uri")
            if client_id != self.config["client_id"]:
                answer = self._error_page("invalid_client", f"Client {client_id} does not exist")
            elif logout_uri not in self.config["logout_urls"]:
                answer = self._error_page("invalid_request",
                                          f"{logout_uri} is not a sign-out URL of client {client_id}")
            else:
                answer = self._redirect(logout_uri)
            record["outcome"] = "redirect" if answer[0] == 302 else "error_page"
            record["status"] = answer[0]
            return answer

    def oauth_token(self, headers: dict, raw_body: bytes):
        """POST /oauth2/token."""
        with self.lock:
            form, problem = self._oauth_form(headers, raw_body)
            grant_type = form.get("grant_type") or None
            record = self._oauth_record("oauth2/token" + (f":{grant_type}" if grant_type else ""), "oauth2/token",
                                        headers, grant_type=grant_type, params=dict(form))
            failed = self._fail_next(record)
            if failed is not None:
                return failed
            grants = {"authorization_code": self._grant_authorization_code,
                      "refresh_token": self._grant_refresh_token,
                      "client_credentials": self._grant_client_credentials}
            try:
                if problem is not None:
                    raise problem
                if grant_type is None:
                    raise OAuthError("invalid_request", "grant_type is required")
                self._oauth_client(headers, form)
                if grant_type not in grants:
                    raise OAuthError("unsupported_grant_type", f"grant_type {grant_type} is not supported")
                status, body = 200, grants[grant_type](form)
            except OAuthError as err:
                status, body = err.status, {"error": err.error, "error_description": err.description}
            record["status"] = status
            # RFC 6749 5.1: answers with tokens must not be cached.
            return status, "application/json", {"Cache-Control": "no-store", "Pragma": "no-cache"}, \
                json.dumps(body).encode()

    def oauth_user_info(self, headers: dict):
        """GET /oauth2/userInfo (OIDC UserInfo, RFC 6750 errors): the user's
        attributes for a live access token that grants `openid`. A refused
        token is 401 with WWW-Authenticate error="invalid_token" (expired,
        revoked, signed out everywhere); one without openid, 400
        invalid_request (Cognito: the API's tokens, with no openid, are not
        accepted there)."""
        with self.lock:
            record = self._oauth_record("oauth2/userInfo", "oauth2/userInfo", headers)
            failed = self._fail_next(record)
            if failed is not None:
                return failed
            kind, _, token = headers.get("authorization", "").partition(" ")

            def refuse(status, error, description):
                record["status"] = status
                challenge = f'Bearer error="{error}", error_description="{description}"'
                return status, "application/json", {"WWW-Authenticate": challenge}, \
                    json.dumps({"error": error, "error_description": description}).encode()

            if kind.lower() != "bearer" or not token:
                return refuse(401, "invalid_request", "Bearer token required")
            try:
                name = self._verify_access_token(token, scope="openid")
            except CognitoError as err:
                if "scope" in err.message:
                    return refuse(400, "invalid_request", "The access token does not grant openid")
                return refuse(401, "invalid_token", "Access token is expired, disabled, or deleted, or the user has globally signed out.")
            user = self.users[name]
            record["status"] = 200
            answer = {"sub": user["sub"], "username": name, **user["attributes"]}
            return 200, "application/json", {}, json.dumps(answer).encode()

    def oauth_revoke(self, headers: dict, raw_body: bytes):
        """POST /oauth2/revoke (RFC 7009): ends a refresh token's whole sign-in."""
        with self.lock:
            form, problem = self._oauth_form(headers, raw_body)
            record = self._oauth_record("oauth2/revoke", "oauth2/revoke", headers, params=dict(form))
            failed = self._fail_next(record)
            if failed is not None:
                return failed
            try:
                if problem is not None:
                    raise problem
                self._oauth_client(headers, form)
                token = self._oauth_required(form, "token")[0]
                known = self.refresh_tokens.get(token)
                if known is None:
                    if self._is_jwt(token):  # an access or ID token: only refresh tokens can be revoked
                        raise OAuthError("unsupported_token_type", "Only refresh tokens can be revoked")
                    # RFC 7009 2.2: an unknown token is no error.
                elif known["client_id"] != self.config["client_id"]:
                    raise OAuthError("unsupported_token_type", "The token was issued to another client")
                else:
                    self._revoke_family(known["family"])
            except OAuthError as err:
                record["status"] = err.status
                return err.status, "application/json", {}, \
                    json.dumps({"error": err.error, "error_description": err.description}).encode()
            record["status"] = 200
            return 200, None, {}, b""

    # The grants of the token endpoint: each takes the checked form, the client
    # already authenticated, and answers the JSON body or raises OAuthError.
    def _grant_authorization_code(self, form: dict) -> dict:
        code, redirect_uri, verifier = self._oauth_required(form, "code", "redirect_uri", "code_verifier")
        if "code" not in self.config["oauth_flows"]:
            raise OAuthError("unauthorized_client", "The client is not allowed the authorization code grant")
        grant = self.authorization_codes.get(code)
        if grant is None:
            raise invalid_grant("Invalid authorization code")
        if grant["used"]:
            raise invalid_grant("The authorization code has already been used")
        grant["used"] = True  # spent by its first redemption, right or wrong
        if grant["client_id"] != self.config["client_id"]:
            raise invalid_grant("The authorization code was issued to another client")
        if time.time() >= grant["expires_at"]:
            raise invalid_grant("The authorization code has expired")
        if redirect_uri != grant["redirect_uri"]:
            raise invalid_grant("redirect_uri is not the one of the authorization request")
        if not VERIFIER_PATTERN.fullmatch(verifier):
            raise invalid_grant("code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
        if not hmac.compare_digest(b64url(hashlib.sha256(verifier.encode("ascii")).digest()), grant["code_challenge"]):
            raise invalid_grant("code_verifier does not match the code_challenge")
        user = self.users.get(grant["username"])
        if user is None or user["sub"] != grant["sub"]:  # deleted or replaced since the sign-in
            raise invalid_grant("The user no longer exists")
        with_id_token = "openid" in grant["scopes"]  # Cognito issues ID tokens only for openid
        result = self._authentication_result(grant["username"], grant["auth_time"], refresh=True,
                                             scope=" ".join(grant["scopes"]), id_token=with_id_token,
                                             nonce=grant["nonce"], oauth=True)
        return self._token_answer(result["AuthenticationResult"], with_id_token)

    def _grant_refresh_token(self, form: dict) -> dict:
        token = self._oauth_required(form, "refresh_token")[0]
        record = self.refresh_tokens.get(token)
        if record is None or record["client_id"] != self.config["client_id"]:
            raise invalid_grant("Invalid Refresh Token")
        # An API sign-in's token bound to a device needs it here too (form field device_key).
        problem = self._refresh_device_problem(record, form.get("device_key"))
        problem = problem or self._refresh_problem(record)  # the API's own bookkeeping: revoked, expired, rotated out
        if problem is not None:
            raise invalid_grant(problem.message)
        rotate = self.config["rotate_refresh_tokens"]
        if rotate:
            self._rotate_out(record)
        result = self._authentication_result(record["username"], record["auth_time"], refresh=rotate,
                                             family=record["family"], scope=record["scope"],
                                             id_token=record["id_token"], oauth=True,
                                             device_key=record.get("device_key"))
        return self._token_answer(result["AuthenticationResult"], record["id_token"])

    def _grant_client_credentials(self, form: dict) -> dict:
        cfg = self.config
        if cfg["client_secret"] is None:
            raise invalid_client("The client_credentials grant needs an app client with a secret")
        if "client_credentials" not in cfg["oauth_flows"]:
            raise OAuthError("unauthorized_client", "The client is not allowed the client_credentials grant")
        requested = space_separated(form.get("scope"))
        unknown = [x for x in requested if x not in cfg["custom_scopes"]]
        if unknown:
            raise OAuthError("invalid_scope", f"{unknown[0]} is not a custom scope of the client")
        scopes = requested or list(cfg["custom_scopes"])  # none asked for: all of them, as Cognito
        if not scopes:
            raise OAuthError("invalid_scope", "The client has no custom scopes")
        iat = int(time.time()) + cfg["issued_at_offset"]
        # A machine's token: the client is its subject, there is no user.
        access = {"sub": cfg["client_id"], "token_use": "access", "scope": " ".join(scopes), "auth_time": iat,
                  "iss": self._issuer(), "exp": iat + cfg["token_lifetime"], "iat": iat,
                  "jti": str(uuid.uuid4()), "client_id": cfg["client_id"]}
        return {"access_token": self._sign(access), "token_type": "Bearer", "expires_in": cfg["token_lifetime"]}

    @staticmethod
    def _token_answer(result: dict, with_id_token: bool) -> dict:
        answer = {"access_token": result["AccessToken"]}
        if with_id_token:
            answer["id_token"] = result["IdToken"]
        if "RefreshToken" in result:
            answer["refresh_token"] = result["RefreshToken"]
        answer.update(token_type="Bearer", expires_in=result["ExpiresIn"])
        return answer

    @staticmethod
    def _oauth_form(headers: dict, raw_body: bytes):
        """(fields, an OAuthError to answer or None) of a token or revocation request."""
        media_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type != FORM:
            return {}, OAuthError("invalid_request", f"Content-Type must be {FORM}")
        try:
            form, repeated = parse_form(raw_body)
        except ValueError:
            return {}, OAuthError("invalid_request", "The body is not UTF-8")
        if repeated:  # RFC 6749 3.2: parameters must not be included more than once
            return form, OAuthError("invalid_request", f"{repeated[0]} is given more than once")
        return form, None

    @staticmethod
    def _oauth_required(form: dict, *names) -> list:
        for name in names:
            if not form.get(name):
                raise OAuthError("invalid_request", f"{name} is required")
        return [form[name] for name in names]

    def _oauth_client(self, headers: dict, form: dict) -> None:
        """Client authentication at the token and revocation endpoints: HTTP
        Basic (client_secret_basic) when the client has a secret, which this
        double requires; client_id in the body when it has none."""
        client_id, secret = self.config["client_id"], self.config["client_secret"]
        if "client_secret" in form:
            raise invalid_client("A client_secret in the body is not accepted here: send it by HTTP Basic")
        body_id = form.get("client_id") or None
        basic = self._basic_credentials(headers.get("authorization"))
        if basic is not None:
            given_id, given_secret = basic
            if given_id != client_id:
                raise invalid_client(f"Client {given_id} does not exist")
            if body_id is not None and body_id != given_id:
                raise invalid_client("client_id in the body is not the client of the Authorization header")
            if secret is None:
                if given_secret:
                    raise invalid_client(f"Client {client_id} has no secret, but one was sent")
            elif not hmac.compare_digest(given_secret.encode(), secret.encode()):
                raise invalid_client(f"Unable to verify the secret of client {client_id}")
            return
        if secret is not None:
            raise invalid_client(f"Client {client_id} has a secret: authenticate with HTTP Basic")
        if body_id is None:
            raise invalid_client("client_id is required")
        if body_id != client_id:
            raise invalid_client(f"Client {body_id} does not exist")

    @staticmethod
    def _basic_credentials(value):
        """(client id, secret) of an Authorization: Basic header, or None
        without one. RFC 6749 2.3.1: both are form-encoded before base64."""
        if value is None:
            return None
        scheme, _, encoded = value.strip().partition(" ")
        if scheme.lower() != "basic":
            raise invalid_client("The Authorization header must be HTTP Basic")
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            raise invalid_client("The Basic credentials are not base64 of UTF-8 text") from None
        if ":" not in decoded:
            raise invalid_client("The Basic credentials have no ':'")
        given_id, _, given_secret = decoded.partition(":")
        return unquote_plus(given_id), unquote_plus(given_secret)

    # The pages.
    @staticmethod
    def _redirect(uri: str, **params):
        return 302, None, {"Location": with_query(uri, **params), "Cache-Control": "no-store"}, b""

    @staticmethod
    def _error_page(error: str, message: str):
        body = (f"<h1>An error was encountered with the requested page.</h1>\n"
                f'<p id="error" data-error="{html.escape(error)}">{html.escape(error)}: {html.escape(message)}</p>')
        return 400, "text/html; charset=utf-8", {"Cache-Control": "no-store"}, html_page("Error", body)

    def _login_page(self, session_id: str, error=None, username: str = ""):
        """The sign-in form. The request it answers stays on the server, named
        by the hidden login_session."""
        session, e = self.login_sessions[session_id], html.escape
        providers = self.config["identity_providers"] if session["federated"] else []
        buttons = "".join(
            f'<p><button type="submit" id="{"federated" if i == 0 else "federated-" + e(name)}" name="provider" '
            f'value="{e(name)}">Sign in with {e(name)}</button></p>\n' for i, name in enumerate(providers))
        alert = f'<p id="error" role="alert">{e(error)}</p>\n' if error else ""
        body = (f"<main>\n<h1>Sign in</h1>\n<p>to <span id=\"client\">{e(session['request']['client_id'])}</span></p>\n"
                f"{alert}"
                '<form id="login" method="post" action="/login">\n'
                f'<input type="hidden" name="login_session" value="{e(session_id)}">\n'
                '<p><label for="username">Username</label>\n'
                f'<input id="username" name="username" type="text" autocomplete="username" value="{e(username)}" '
                "autofocus></p>\n"
                '<p><label for="password">Password</label>\n'
                '<input id="password" name="password" type="password" autocomplete="current-password"></p>\n'
                # First in the form, so Enter in a field signs in.
                '<p><button type="submit" id="signin" name="signin" value="1">Sign in</button></p>\n'
                f"{buttons}"
                '<p><button type="submit" id="cancel" name="cancel" value="1">Cancel</button></p>\n'
                "</form>\n</main>")
        return 200, "text/html; charset=utf-8", {"Cache-Control": "no-store"}, html_page("Sign in", body)
