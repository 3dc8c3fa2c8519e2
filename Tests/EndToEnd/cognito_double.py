#!/usr/bin/env python3
"""A small, honest test double of the Amazon Cognito user pool JSON API
(and of an identity pool with STS's AssumeRoleWithWebIdentity beside it).

The end-to-end tests use it for behaviour the moto emulator does not give us:
tokens that expire on demand, exact call counting, refresh-token revocation and
rotation, canned failures (e.g. an HTML 500 from a proxy), and an account
lifecycle that checks what moto waves through: confirmation and reset codes
that must match and can expire, resend limits, password policy, app-client
secrets (SECRET_HASH) and sign-in by email alias; and secure sign-in that moto
only pretends to do: SRP proofs that are really verified, MFA codes that must
be right, single-use challenge sessions, refresh-token rotation with a grace
period, and revocation of one sign-in's tokens (RevokeToken) or all of them.

It hosts exactly one user pool with one app client, and one identity pool
that trusts it (moto's identity pool checks no login and always hands out the
same credentials). The Cognito endpoint is
`POST /` (AWS JSON 1.1 protocol); test control lives under `/_double/`; the
pool's JWKS is at `GET /<pool id>/.well-known/jwks.json`, so the `iss` claim
(`<base_url><pool id>`) can be verified the same way as real Cognito's. The
same server is also the pool's managed login domain (real Cognito:
https://PREFIX.auth.REGION.amazoncognito.com): see "Managed login and OAuth
2.0" below.

Cognito actions: InitiateAuth (USER_PASSWORD_AUTH, USER_SRP_AUTH, USER_AUTH,
CUSTOM_AUTH, REFRESH_TOKEN_AUTH), RespondToAuthChallenge (PASSWORD_VERIFIER,
NEW_PASSWORD_REQUIRED, SOFTWARE_TOKEN_MFA, SMS_MFA, EMAIL_OTP (email MFA, or a first
factor of USER_AUTH; EMAIL_MFA with config email_mfa_challenge), SMS_OTP,
SELECT_CHALLENGE, SELECT_MFA_TYPE, MFA_SETUP, CUSTOM_CHALLENGE), AssociateSoftwareToken
and VerifySoftwareToken (with a sign-in's Session, or a user's AccessToken),
GetTokensFromRefreshToken, RevokeToken, GlobalSignOut, SignUp, ConfirmSignUp,
ResendConfirmationCode, ForgotPassword, ConfirmForgotPassword, ChangePassword, GetUser
and SetUserMFAPreference (a user's own MFA settings: email needs config email_mfa and
an email attribute, SMS a phone_number, TOTP a verified authenticator); with device
tracking (below) also RespondToAuthChallenge DEVICE_SRP_AUTH and DEVICE_PASSWORD_VERIFIER,
ConfirmDevice, ListDevices, UpdateDeviceStatus and ForgetDevice.

Device tracking (remembered devices), config device_tracking: None (off, the
default: DEVICE_KEY is ignored and no action sees a device), "always" (a
confirmed device is remembered at once) or "opt_in" (the user chooses).
  - A sign-in (never a refresh) that did not use a device of the user ends
    with AuthenticationResult.NewDeviceMetadata {"DeviceKey":
    "<region>_<uuid>", "DeviceGroupKey": "-<8 alnum>"} (a new group key per
    device); its refresh tokens and access tokens (claim device_key) are bound
    to that device. Managed login (/oauth2/...) issues no devices.
  - ConfirmDevice {AccessToken, DeviceKey, DeviceSecretVerifierConfig
    {PasswordVerifier, Salt}, DeviceName?} -> {"UserConfirmationNecessary":
    true for opt_in, false for always}. The token's user must own the device
    (else ResourceNotFoundException "Device does not exist."). Both members
    must be base64 (stricter than the API, where the config is optional); the
    verifier's bytes are read as Java's BigInteger reads them (two's
    complement, so SRP's padHex matters: without its leading 00 a verifier
    with the top bit set is negative) and must be in 1..N-1, else
    InvalidParameterException. Confirming a confirmed device again is refused
    (InvalidParameterException "Device has already been confirmed."): the
    stricter reading, as it would let any access token of the user replace
    the device's secret. DeviceName defaults to the DeviceKey.
  - The device SRP (amazon-cognito-identity-js's getDeviceResponse): SRP with
    pool name = DeviceGroupKey, user id = DeviceKey and the device's random
    password; the double keeps only the verifier and salt. DEVICE_KEY goes in
    InitiateAuth's AuthParameters (any flow) and again in the
    PASSWORD_VERIFIER answer (as both SDKs do; the two must agree). It is
    checked once the password is proven (InitiateAuth for USER_PASSWORD_AUTH
    and USER_AUTH's PASSWORD, the PASSWORD_VERIFIER answer for SRP; a
    passwordless or custom sign-in when it would end) and must name a
    confirmed device of the user, else ResourceNotFoundException "Device does
    not exist." (an issued but unconfirmed device too: the stricter reading).
    Then, where MFA would come, a remembered device answers DEVICE_SRP_AUTH
    {USERNAME, USER_ID_FOR_SRP} (with a Session) instead of any MFA: the
    client answers {USERNAME, DEVICE_KEY, SRP_A} with that Session, then
    DEVICE_PASSWORD_VERIFIER {SRP_B, SALT, SECRET_BLOCK, USERNAME, DEVICE_KEY,
    USER_ID_FOR_SRP} (a Session only with srp_challenge_session, like
    PASSWORD_VERIFIER; one sent is taken) with {USERNAME,
    PASSWORD_CLAIM_SECRET_BLOCK, PASSWORD_CLAIM_SIGNATURE, TIMESTAMP,
    DEVICE_KEY}: checked like PASSWORD_VERIFIER, a wrong proof is
    NotAuthorizedException "Incorrect username or password." (why: "detail").
    SALT is the device's Salt read as a number (like the user's SALT: no
    leading zeros, "-" if negative). A confirmed device that is not remembered
    gets MFA as usual. Either way the tokens are bound to the device (no
    NewDeviceMetadata) and its DeviceLastAuthenticatedDate moves. Passwordless
    and custom sign-ins never ask DEVICE_SRP_AUTH (a remembered device only
    stands in for MFA); their tokens are bound to the device all the same.
  - A bound refresh token needs its device: InitiateAuth REFRESH_TOKEN_AUTH
    AuthParameters DEVICE_KEY, GetTokensFromRefreshToken's DeviceKey,
    /oauth2/token's device_key. Missing, another key, a device never
    confirmed (AWS: new devices must be confirmed before their refresh tokens
    work, amplify-android#2506) or one forgotten (AWS's blog on remembered
    devices: "all future calls to revalidate that device's refresh tokens will
    fail") -> NotAuthorizedException "Invalid Refresh Token" (what Cognito
    says, aws-sdk-java-v2#3418; invalid_grant at /oauth2/token). This holds
    for bound tokens even after device_tracking is switched off. Access
    tokens already issued keep working until they expire.
  - ListDevices {AccessToken, Limit? 1..60 (default 10: smaller than any
    documented default, so a client that ignores PaginationToken misses
    devices sooner; 0, which the API allows with no stated meaning, is
    refused), PaginationToken?} -> {"Devices": [DeviceType...],
    "PaginationToken"?}: the user's confirmed devices, oldest first, each
    {"DeviceKey", "DeviceAttributes": device_status "valid", device_name,
    dev:device_remembered_status "remembered"|"not_remembered", last_ip_used
    "127.0.0.1"; "DeviceCreateDate", "DeviceLastModifiedDate",
    "DeviceLastAuthenticatedDate": epoch seconds with milliseconds, written
    like 1.547146396734E9}. A PaginationToken the double did not give this
    user -> InvalidParameterException.
  - UpdateDeviceStatus {AccessToken, DeviceKey, DeviceRememberedStatus
    "remembered"|"not_remembered" (required here)} -> {}. ForgetDevice
    {AccessToken, DeviceKey} -> {}: the device is gone, its key refused at
    sign-in and by its refresh tokens.
  - Device actions see only confirmed devices of the token's user ("Device
    does not exist." otherwise); a bad access token is refused as GetUser's.
    The double checks no token scope here, as in GetUser.
  Stats: GetTokensFromRefreshToken's records have "device_key_sent" (a bool);
  DEVICE_KEY shows in "parameter_names" like any other member.

Choice-based sign-in (USER_AUTH): the first factors a user may choose are
the pool's (config allowed_first_auth_factors; PASSWORD always, which brings
PASSWORD_SRP) that the user has: EMAIL_OTP with an email attribute, SMS_OTP
with a phone_number, WEB_AUTHN with a passkey (users' "passkey": true; listed
only, the double does not verify one). A PREFERRED_CHALLENGE the user has
starts at once (PASSWORD with PASSWORD, PASSWORD_SRP with SRP_A, an OTP mails
or texts a code); none, or one the user lacks, answers SELECT_CHALLENGE with
AvailableChallenges. A one-time code lives in its challenge Session: one
answer, right or wrong, until the session lifetime.

Custom challenges (CUSTOM_AUTH) stand for a pool's Lambda triggers: config
custom_challenges scripts the rounds, each with the public ChallengeParameters
it shows and the one answer it takes (a wrong answer fails the sign-in, as a
DefineAuthChallenge that fails authentication does). CHALLENGE_NAME=SRP_A
with SRP_A proves the password first (PASSWORD_VERIFIER, with a Session),
then the rounds follow.

Sign-in like the real service: USER_SRP_AUTH verifies the password proof
(Cognito's SRP-6a variant, the server side of pycognito's aws_srp.py), and
after the password a user may face NEW_PASSWORD_REQUIRED and then MFA. Every
challenge Session expires (config session_lifetime) and is good for one
answer, right or wrong, as with real Cognito, where a wrong MFA code means
signing in again. As measured on real pools, the PASSWORD_VERIFIER challenge
carries no Session (the SECRET_BLOCK is the state); config
srp_challenge_session adds one.

Managed login (hosted UI) and OAuth 2.0, at the base URL (DOMAIN):
  GET  /oauth2/authorize?response_type=code&client_id&redirect_uri&scope&state
       &nonce&code_challenge&code_challenge_method=S256[&identity_provider=NAME]
       client_id must be the app client's and redirect_uri exactly one of
       config callback_urls (port and trailing slash included), else a 400 HTML
       error page (redirect_mismatch / invalid_client) and no redirect, as
       Cognito never redirects to an unregistered URI; a parameter given twice
       is that page too (invalid_request). Then, by redirect to redirect_uri
       with error, error_description and state: response_type other than
       "code" (unsupported_response_type; "token", the implicit grant, which
       the double lacks, is unauthorized_client) or "code" missing from
       oauth_flows (unauthorized_client); a scope not in allowed_scopes
       (invalid_scope; no scope at all grants every allowed scope); PKCE
       missing or not S256 with a 43-character base64url challenge
       (invalid_request; the double requires PKCE, Cognito only allows it); an
       identity_provider that is neither COGNITO nor in identity_providers
       (invalid_request). A known identity_provider signs its federated user
       in at once (302 with a code); otherwise (or identity_provider=COGNITO,
       which leaves out the federated buttons) 200 and the sign-in page: a
       form POSTing to /login with #username, #password (type password),
       #signin, one button per identity provider (the first is #federated,
       the others #federated-NAME; name=provider, value=NAME) and #cancel
       (name=cancel, value=1), and the request kept server-side under a
       hidden `login_session`, valid for config session_lifetime seconds.
  POST /login  (form: login_session, username, password | provider=NAME | cancel=1)
       the right password of a confirmed user (or an email alias, as in the
       API) -> 302 redirect_uri?code=CODE&state=STATE; cancel -> 302 with
       error=access_denied; provider -> the federated user
       "<name lowercased>_jdoe", made on first use, with no password (the API
       refuses it a password sign-in), an `identities` claim (providerType
       SAML) and the group "<pool id>_<name>" in cognito:groups. A wrong
       password, an unknown or unconfirmed user, or a user whose sign-in would
       need a challenge (new password, MFA: not modelled here) -> 200, the
       form again with #error. An unknown, used or expired login_session ->
       400 HTML error page. The session is spent by the redirect.
  POST /oauth2/token  (application/x-www-form-urlencoded; JSON answers, no-store)
       Client authentication: with config client_secret set, HTTP Basic
       (RFC 6749 2.3.1: id and secret form-encoded, then base64) is required,
       and a client_secret in the body (client_secret_post, which real Cognito
       also takes) is refused; without one, client_id in the body (or Basic
       with an empty secret). Missing or wrong -> 401 invalid_client.
       grant_type=authorization_code (code, redirect_uri, code_verifier): the
         code is spent by its first redemption, right or wrong; it must be
         unexpired (authorization_code_lifetime), issued to this client, with
         the same redirect_uri and SHA-256(code_verifier) = code_challenge,
         else 400 invalid_grant; "code" must still be in oauth_flows
         (unauthorized_client). Answers access_token, id_token (only when
         openid was granted, as Cognito), refresh_token, token_type Bearer,
         expires_in. The ID token has nonce (if one was sent), at_hash and,
         for a federated user, identities; the access token the granted
         scope, client_id and username.
       grant_type=refresh_token (refresh_token): the same records as the API
         (rotation, grace, revocation, refresh_token_lifetime); answers
         access_token, id_token (same rule), token_type, expires_in, and a new
         refresh_token only when rotating. Unknown, revoked, expired or
         rotated out -> 400 invalid_grant.
       grant_type=client_credentials (scope optional): needs a client with a
         secret (else 401 invalid_client) and "client_credentials" in
         oauth_flows (else 400 unauthorized_client); each scope must be in
         custom_scopes (else invalid_scope), none means all of them. Answers
         access_token, token_type, expires_in; the token's sub is the client
         id and it has no username.
       Another grant_type -> unsupported_grant_type; a missing parameter, a
       parameter given twice or a body that is not a form -> invalid_request.
       Every error carries error_description. config fail_next applies here too.
  POST /oauth2/revoke  (form: token, client_id; Basic as above)
       a refresh token: it and its whole sign-in (refresh and access tokens)
       are revoked; 200, empty body, also for a token the double never issued;
       an access or ID token -> 400 unsupported_token_type; bad client -> 401
       invalid_client. config fail_next applies here too.
  GET  /logout?client_id&logout_uri
       logout_uri in config logout_urls -> 302 to it; otherwise 400 HTML.
  Stats keys: "oauth2/authorize", "login", "oauth2/token:<grant_type>" (just
  "oauth2/token" without one), "oauth2/revoke", "logout"; each request is also
  in stats "requests" with action = that path, its parameters (the query, or
  the form less the password), "outcome" for the pages and "status".

Identity pools (service cognito-identity) and STS, at the same `POST /`:
  The double also hosts one identity pool, config identity_pool_id, whose one
  provider is the user pool (Logins key config identity_provider, by default
  "cognito-idp.<region of pool_id>.amazonaws.com/<pool_id>"; its app clients
  config identity_client_ids, by default [client_id]), with no unauthenticated
  identities and the roles config identity_role_arns (the first is the
  default). Requests are AWS JSON 1.1 with `X-Amz-Target:
  AWSCognitoIdentityService.<Action>`, unsigned (an Authorization header ->
  400 UnrecognizedClientException); errors as the user pool's (400, __type
  and message, x-amzn-ErrorType).
  A Logins map is checked as Cognito does: exactly the provider's key (another
  key -> NotAuthorizedException "Invalid login token. Issuer doesn't match
  providerName"), and its value an ID token the double signed ("Invalid login
  token. Not a valid OpenId Connect identity token." / "... Couldn't verify
  signed token."), with the double's iss ("... Issuer doesn't match
  providerName"), unexpired ("Invalid login token. Token expired: NOW >= EXP"),
  an aud (an access token has none: "... Missing a required claim: aud"),
  token_use id, and aud in identity_client_ids ("... Incorrect token audience.").
  GetId {IdentityPoolId, Logins} -> {"IdentityId": "<region>:<uuid>"}, one
       identity per user (sub) for good (until a reset). Another pool id ->
       ResourceNotFoundException "IdentityPool '<id>' not found."; no Logins ->
       NotAuthorizedException "Unauthenticated access is not supported for
       this identity pool."
  GetCredentialsForIdentity {IdentityId, Logins, CustomRoleArn?} ->
       {"IdentityId", "Credentials": {"AccessKeyId": "ASIA" + 16, "SecretKey"
       (40), "SessionToken", "Expiration": epoch seconds written as Cognito
       does, a JSON number like 1.515115602E9}}, fresh on every call, living
       identity_credentials_lifetime seconds. An IdentityId that is not of
       this pool -> ResourceNotFoundException "Identity '<id>' not found."
       (malformed -> InvalidParameterException); no Logins ->
       NotAuthorizedException "Access to Identity '<id>' is forbidden.";
       another user's login -> NotAuthorizedException "Logins don't match.
       Please include at least one valid login for this identity or identity
       pool."; a CustomRoleArn not in identity_role_arns, or config
       identity_pool_misconfigured -> InvalidIdentityPoolConfigurationException
       "Invalid identity pool configuration. Check assigned IAM roles for this
       pool."
  GetOpenIdToken {IdentityId, Logins} -> {"IdentityId", "Token"}: the basic
       (classic) flow's first step, an RS256 JWT signed with the double's key:
       iss https://cognito-identity.amazonaws.com, aud the identity pool id,
       sub the IdentityId, amr ["authenticated", provider,
       "<provider>:CognitoSignIn:<user's sub>"], iat now + issued_at_offset,
       exp iat + identity_open_id_token_lifetime. The same checks as
       GetCredentialsForIdentity; config identity_allow_classic_flow false ->
       InvalidParameterException "Basic (classic) flow is not enabled, please
       use enhanced flow." (as Cognito with AllowClassicFlow off).
  STS AssumeRoleWithWebIdentity: a POST / with no X-Amz-Target and an
       application/x-www-form-urlencoded body: Action=AssumeRoleWithWebIdentity,
       Version=2011-06-15, RoleArn, RoleSessionName, WebIdentityToken,
       DurationSeconds? (900-43200, and at most the role's 3600). Unsigned (an
       Authorization header -> 403 InvalidClientTokenId). The token must be
       GetOpenIdToken's: not a JWT -> 400 InvalidIdentityToken, a bad signature
       -> 400 InvalidIdentityToken, another iss (a user pool ID token) -> 400
       InvalidIdentityToken "No OpenIDConnect provider found in your account
       for ISS", expired -> 400 ExpiredTokenException; then the roles' trust
       policy: RoleArn in identity_role_arns, aud = identity_pool_id, amr has
       "authenticated", and not identity_pool_misconfigured, else 403
       AccessDenied "Not authorized to perform sts:AssumeRoleWithWebIdentity".
       Missing or bad parameters -> 400 ValidationError; another Action or
       Version -> 400 InvalidAction. Credentials live min(DurationSeconds or
       3600, identity_credentials_lifetime) seconds. With `Accept:
       application/json` (as real STS) the answer is JSON,
       {"AssumeRoleWithWebIdentityResponse": {"AssumeRoleWithWebIdentityResult":
       {"Audience", "AssumedRoleUser": {"Arn", "AssumedRoleId"}, "Credentials":
       {"AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration": epoch
       seconds like 1.7E9}, "PackedPolicySize": null, "Provider",
       "SourceIdentity": null, "SubjectFromWebIdentityToken"},
       "ResponseMetadata": {"RequestId"}}} and errors {"Error": {"Code",
       "Message", "Type"}, "RequestId"}; otherwise text/xml, the
       AssumeRoleWithWebIdentityResponse document (Expiration ISO 8601,
       2026-01-02T03:04:05Z) and <ErrorResponse><Error><Type>Sender</Type>
       <Code/><Message/></Error><RequestId/></ErrorResponse>.
  Every AccessKeyId issued is remembered with its identity and role (GET
  /_double/aws_credentials). Stats keys: "GetId",
  "GetCredentialsForIdentity", "GetOpenIdToken" (an unknown identity action:
  its whole X-Amz-Target; an identity action sent with the user pool's
  prefix is not counted under the bare name) and "sts:<Action>" (e.g.
  "sts:AssumeRoleWithWebIdentity"); their records carry "service"
  ("cognito-identity" or "sts"; STS's also the form as "params"). config
  fail_next applies to all of them.

Admin API (JSON in and out; 400 for a bad request, 404 for an unknown user):
  POST /_double/reset                  all state and config back to defaults
  POST /_double/config  {key: value}   patch config (DEFAULT_CONFIG lists the keys)
  GET  /_double/config                 the current config
  POST /_double/users   {username, password, confirmed?=true, sub?, attributes?,
                         force_change_password?=false, mfa?=null, totp_secret?,
                         passkey?=false}
                                       create or replace a user (no password policy);
                                       an "@" username gets {"email": username}
                                       unless attributes are given. mfa is null,
                                       "totp", "sms", "email" (needs an email
                                       attribute), "both" (SELECT_MFA_TYPE of SMS and
                                       TOTP), "all" (and email) or "setup"
                                       (MFA_SETUP); "totp", "both" and "all" without
                                       a totp_secret (base32) get a random one
  GET  /_double/users?username=X       {username, sub, confirmed, attributes,
                                        email_verified, password_set,
                                        force_change_password, mfa, totp_secret}
  POST /_double/revoke  {username}     revoke the user's refresh and access tokens
  GET  /_double/codes?username=X       {"signup": code|null, "reset": code|null,
                                        "sms": code|null, "email": code|null}, what
                                       the last email (or SMS_MFA text, or email MFA
                                       message) would have carried
  POST /_double/expire_codes {username}  make the user's outstanding codes expired
  GET  /_double/devices?username=X     {"username", "devices": [{"device_key",
                                        "device_group_key", "name", "confirmed",
                                        "remembered", "created", "last_modified",
                                        "last_authenticated" (epoch seconds or null)}]}:
                                       every device issued to the user, unconfirmed
                                       ones too, oldest first (never the verifier)
  POST /_double/forget_device {username, device_key}
                                       forget a device as if from elsewhere (another
                                       machine, the console); 404 for a device the
                                       user does not have
  GET  /_double/stats                  {"calls": {"Action[:AuthFlow|:ChallengeName]": n},
                                        "requests": [...]}; a sign-in step's record names
                                       what it carried ("parameter_names", with
                                       "preferred_challenge", and a SELECT_*'s "answer", and
                                       "challenge"), never a secret value; a request refused for a
                                       reason Cognito keeps to itself (e.g. which part
                                       of an SRP proof was wrong) has it as "detail"
  GET  /_double/last_authorize         {"params": {name: value}, "query": "raw query
                                        string"} of the last GET /oauth2/authorize
                                       since the reset; 404 if there was none
  GET  /_double/aws_credentials?access_key_id=X
                                       {"identity_id", "role_arn", "expiration" (epoch
                                        seconds), "action" ("GetCredentialsForIdentity"
                                        or "sts:AssumeRoleWithWebIdentity"),
                                        "secret_access_key", "session_token"} of AWS
                                       credentials the double issued; 404 if it did not
Admin look-ups by username also accept a user's email attribute value.

Run: python3 cognito_double.py --port 0 --host 127.0.0.1
  -> prints one line `LISTENING http://127.0.0.1:<port>/`, serves until SIGTERM/SIGINT.
Or in-process: server, base_url = start_double(); ...; server.shutdown()

Only the Python standard library and `cryptography` are used.
"""
import argparse
import base64
import binascii
import copy
import datetime
import functools
import hashlib
import hmac
import html
import json
import os
import re
import secrets
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, parse_qsl, quote, unquote_plus, urlencode, urlsplit
from xml.sax.saxutils import escape as xml_escape

from serving import QuietServer, read_body, run_until_signalled, serve_in_background
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

TARGET_PREFIX = "AWSCognitoIdentityProviderService."
# Identity pools (service cognito-identity): the same JSON 1.1 protocol, another target prefix.
IDENTITY_TARGET_PREFIX = "AWSCognitoIdentityService."
AMZ_JSON = "application/x-amz-json-1.1"
# STS (AWS query protocol): a form POST with Action and Version, answered in XML,
# or in JSON for a client that sends Accept: application/json.
STS_VERSION = "2011-06-15"
STS_XMLNS = "https://sts.amazonaws.com/doc/2011-06-15/"
# The issuer of GetOpenIdToken's tokens, as real Cognito's.
OPEN_ID_ISSUER = "https://cognito-identity.amazonaws.com"
# Cognito's pattern for IdentityPoolId and IdentityId ("<region>:<uuid>").
IDENTITY_ID_PATTERN = re.compile(r"[\w-]+:[0-9a-f-]+")
ROLE_ARN_PATTERN = re.compile(r"arn:aws[\w-]*:iam::[0-9]{12}:role/[\w+=,.@/-]+")
ROLE_SESSION_NAME_PATTERN = re.compile(r"[\w+=,.@-]{2,64}")
ROLE_MAX_SESSION_DURATION = 3600  # an IAM role's MaxSessionDuration unless raised (not modelled)
KID = "double-key"
VERBOSE = os.environ.get("COGNITO_DOUBLE_VERBOSE") == "1"

# Cognito's own default policy, minus the symbol requirement (a setting many
# pools turn off, and one that would make every test password longer).
DEFAULT_PASSWORD_POLICY = {
    "min_length": 8,
    "require_upper": True,
    "require_lower": True,
    "require_digit": True,
    "require_symbol": False,
}

DEFAULT_CONFIG = {
    "pool_id": "us-east-1_double",
    "client_id": "doubleclient",
    "token_lifetime": 3600,      # seconds; also the ExpiresIn we report
    "issued_at_offset": 0,       # added to "now" for iat/auth_time, to mint pre-expired tokens
    "rotate_refresh_tokens": False,
    "fail_next": None,           # {"status", "body", "content_type", "count", "headers"}
    "client_secret": None,       # set: the app client has a secret and SECRET_HASH is required
    "password_policy": DEFAULT_PASSWORD_POLICY,  # a patch may name only some keys
    "code_lifetime": 86400,      # seconds a confirmation or reset code stays valid
    "max_resends": 5,            # ResendConfirmationCode calls allowed per user
    "fixed_code": None,          # set: every confirmation and reset code is this one (the docs' examples say 123456)
    "auto_confirm": False,       # like a pre-sign-up trigger that confirms and verifies
    "username_attributes": None,  # None: usernames only; ["email"]: sign up and in by email
    "session_lifetime": 180,     # seconds a challenge Session stays valid (Cognito: 3 minutes)
    "email_mfa_challenge": "EMAIL_OTP",  # the name email MFA's challenge goes by (EMAIL_MFA_CHALLENGES)
    "allowed_first_auth_factors": ["PASSWORD"],  # USER_AUTH's choices (FIRST_AUTH_FACTORS; Cognito's default)
    "email_mfa": True,           # the pool offers email MFA (Cognito: the Essentials or Plus plan, and SES)
    # CUSTOM_AUTH's rounds: the public ChallengeParameters each shows, and its answer.
    "custom_challenges": [{"parameters": {"question": "What is 2 + 3?"}, "answer": "5"},
                          {"parameters": {"question": "The code on your badge", "hint": "six digits"},
                           "answer": "424242"}],
    "srp_challenge_session": False,  # True: PASSWORD_VERIFIER carries a Session too (real Cognito: none)
    "rotation_grace_seconds": 0,  # how long a rotated-out refresh token keeps working (Cognito: 0-60)
    "reuse_detection": False,    # a rotated-out token answers RefreshTokenReuseException, not NotAuthorized
    "get_tokens_from_refresh_token": True,  # False: answered like moto, which lacks it (HTTP 500, HTML)
    "revoke_token": True,        # False: RevokeToken answered like moto (HTTP 500, HTML)
    "srp_salt": None,            # set: the SALT text of users created or given a password from now on
    "refresh_token_lifetime": 30 * 86400,  # seconds; fixed when a refresh token is issued (Cognito: 30 days)
    # Managed login and OAuth 2.0 (the app client's hosted UI settings).
    "callback_urls": [],         # redirect_uri values /oauth2/authorize accepts, compared exactly
    "logout_urls": [],           # logout_uri values /logout accepts
    "oauth_flows": ["code"],     # AllowedOAuthFlows: "code", "client_credentials" (no implicit grant here)
    "allowed_scopes": ["openid", "email", "profile", "phone", "aws.cognito.signin.user.admin"],
    "custom_scopes": [],         # resource server scopes ("orders/read") for client_credentials
    "identity_providers": ["CorporateIdP"],  # federated (SAML) providers enabled for the client
    "authorization_code_lifetime": 300,      # seconds an authorization code can be redeemed
    # Identity pool (cognito-identity) and STS.
    "identity_pool_id": "us-east-1:0a1b2c3d-0000-4000-8000-000000000001",
    "identity_provider": None,   # None: "cognito-idp.<region of pool_id>.amazonaws.com/<pool_id>"
    "identity_client_ids": None,  # the provider's app clients (ID token aud); None: [client_id]
    "identity_role_arns": ["arn:aws:iam::123456789012:role/Cognito_Authenticated",
                           "arn:aws:iam::123456789012:role/Cognito_Admin"],  # the first is the default role
    "identity_credentials_lifetime": 3600,   # seconds AWS credentials live (STS: at most this)
    "identity_open_id_token_lifetime": 600,  # seconds a GetOpenIdToken token lives (Cognito: 10 minutes)
    "identity_pool_misconfigured": False,    # True: the roles do not trust the pool (every credential call fails)
    "identity_allow_classic_flow": True,     # False: GetOpenIdToken refuses, as with AllowClassicFlow off
    # Remembered devices (DEVICE_TRACKING_MODES): None off, "always", or "opt_in" (UpdateDeviceStatus decides).
    "device_tracking": None,
}

# The characters Cognito's policy counts as symbols (its documented list).
SYMBOLS = set("^$*.[]{}()?\"!@#%&/\\,><':;|_~`=+- ")
# Cognito's input constraint on passwords: no leading or trailing whitespace.
PASSWORD_PATTERN = re.compile(r"^[\S]+.*[\S]+$", re.DOTALL)
# Deliberately lenient: Cognito rejects obvious non-addresses, not odd domains.
EMAIL_PATTERN = re.compile(r"^[^@\s]+@[^@\s]+$")
# The standard attributes of a user pool schema; anything else must be custom:.
STANDARD_ATTRIBUTES = {
    "address", "birthdate", "email", "family_name", "gender", "given_name", "locale",
    "middle_name", "name", "nickname", "phone_number", "picture", "preferred_username",
    "profile", "updated_at", "website", "zoneinfo",
}
# In the schema, but only the pool itself (or an admin) may write them.
UNWRITABLE_ATTRIBUTES = {"sub", "email_verified", "phone_number_verified"}
USER_NOT_FOUND = "Username/client id combination not found."
INCORRECT = "Incorrect username or password."
INVALID_SESSION = "Invalid session for the user."
DEVICE_NOT_FOUND = "Device does not exist."
# A pool's device tracking: off, every confirmed device remembered, or the user's choice.
DEVICE_TRACKING_MODES = (None, "always", "opt_in")
DEVICE_REMEMBERED_STATUSES = ("remembered", "not_remembered")
DEVICE_PAGE_DEFAULT = 10   # ListDevices without a Limit (see the module docstring)
DEVICE_PAGE_MAX = 60       # the API's maximum Limit
DEVICE_IP = "127.0.0.1"    # every request reaches the double from here: the last_ip_used attribute
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
# A user's second factor: "both" offers SMS and an authenticator app,
# "all" email too; "setup" makes them set up an authenticator.
MFA_MODES = (None, "totp", "sms", "email", "both", "all", "setup")
# USER_AUTH's first factors, as a pool's AllowedFirstAuthFactors names them
# (PASSWORD brings PASSWORD_SRP with it).
FIRST_AUTH_FACTORS = ("PASSWORD", "EMAIL_OTP", "SMS_OTP", "WEB_AUTHN")
# The challenge (and ChallengeResponses member) names of email MFA: Cognito
# sends EMAIL_OTP; part of its documentation says EMAIL_MFA.
EMAIL_MFA_CHALLENGES = ("EMAIL_OTP", "EMAIL_MFA")
# A user's MFA methods by their UserMFASettingList names, in Cognito's order,
# and what each mode of POST /_double/users enables.
MFA_METHODS = ("SMS_MFA", "SOFTWARE_TOKEN_MFA", "EMAIL_OTP")
MODE_METHODS = {None: [], "totp": ["SOFTWARE_TOKEN_MFA"], "sms": ["SMS_MFA"], "email": ["EMAIL_OTP"],
                "both": ["SMS_MFA", "SOFTWARE_TOKEN_MFA"], "all": list(MFA_METHODS), "setup": []}
# SetUserMFAPreference's settings member for each method.
MFA_SETTINGS_MEMBERS = {"SMSMfaSettings": "SMS_MFA", "SoftwareTokenMfaSettings": "SOFTWARE_TOKEN_MFA",
                        "EmailMfaSettings": "EMAIL_OTP"}
# The scope of tokens from the API's sign-ins (InitiateAuth and its challenges).
API_SCOPE = "aws.cognito.signin.user.admin"
OAUTH_FLOWS = ("code", "client_credentials")
# A scope token (RFC 6749 3.3): printable ASCII without space, quote or backslash.
SCOPE_PATTERN = re.compile(r"[\x21\x23-\x5B\x5D-\x7E]+")
FORM = "application/x-www-form-urlencoded"
# RFC 7636: a code_verifier is 43-128 of these; an S256 challenge is 43 base64url characters.
VERIFIER_PATTERN = re.compile(r"[A-Za-z0-9._~-]{43,128}")
CHALLENGE_PATTERN = re.compile(r"[A-Za-z0-9_-]{43}")
# Who a federated sign-in brings in: one stable person behind every provider.
FEDERATED_USER_ID = "jdoe"
FEDERATED_EMAIL = "jdoe@corporate.example"
# What moto's server answers for an action it does not implement (Werkzeug's
# page for an unhandled exception, then it hangs up): clients must treat it as
# "no such action here" and fall back, exactly as they would against moto.
MOTO_500_BODY = (b"<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n"
                 b"<h1>Internal Server Error</h1>\n<p>The server encountered an internal error and was "
                 b"unable to complete your request. Either the server is overloaded or there is an error "
                 b"in the application.</p>\n")

# --- Cognito's SRP-6a variant ---------------------------------------------------------
# The server side of what amazon-cognito-identity-js and pycognito's aws_srp.py
# compute. Every hash is over the bytes of pad_hex() strings, so the padding
# rules below are part of the protocol, not a detail.
# The 3072-bit MODP group of RFC 3526 (RFC 5054's 3072-bit group), g = 2.
SRP_N_HEX = (
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
    "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
    "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
    "15728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7"
    "ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200C"
    "BBE117577A615D6C770988C0BAD946E208E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF"
)
SRP_N = int(SRP_N_HEX, 16)
SRP_G = 2
SRP_INFO = b"Caldera Derived Key"  # the HKDF info string Cognito uses
SRP_TIMESTAMP_SKEW = 300           # seconds a TIMESTAMP may be away from now
SECRET_BLOCK_BYTES = 256           # real SECRET_BLOCKs are long opaque blobs; clients must not care
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# "Mon Nov 2 04:03:01 UTC 2026": the day of month unpadded, everything else
# fixed-width. Real Cognito refuses "Nov 02" (see pycognito's history).
TIMESTAMP_PATTERN = re.compile(r"(%s) (%s) ([1-9]|[12][0-9]|3[01]) ([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9]) "
                               r"UTC ([0-9]{4})" % ("|".join(WEEKDAYS), "|".join(MONTHS)))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def int_b64url(n: int) -> str:
    return b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))


def secret_hash(client_secret: str, username: str, client_id: str) -> str:
    """What a client with a secret must send: Base64(HMAC-SHA256(secret, username + client id))."""
    digest = hmac.new(client_secret.encode(), (username + client_id).encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


def mask_email(email: str) -> str:
    """Cognito tells the caller where a code went without revealing the address."""
    local, _, domain = email.partition("@")
    return f"{local[:1]}***@{domain[:1]}***"


def mask_phone(number: str) -> str:
    """Like Cognito's CODE_DELIVERY_DESTINATION: only the last four digits show."""
    return "+" + "*" * max(0, len(number) - 5) + number[-4:]


# --- SRP -------------------------------------------------------------------------------

def pad_hex(value: int) -> str:
    """A number as Cognito and its SDKs hash it: the two's-complement bytes
    of Java's BigInteger.toByteArray (amazon-cognito-identity-js's padHex):
    whole bytes, a leading 00 when a positive number's top bit is set."""
    if value < 0:
        return value.to_bytes((~value).bit_length() // 8 + 1, "big", signed=True).hex()
    text = format(value, "x")
    if len(text) % 2:
        return "0" + text
    if text[0] in "89abcdef":
        return "00" + text
    return text


def hex_hash(hex_text: str) -> str:
    return hashlib.sha256(bytes.fromhex(hex_text)).hexdigest()


# k = H(pad(N) | pad(g)): pycognito's hex_hash("00" + N_HEX + "0" + G_HEX).
SRP_K = int(hex_hash(pad_hex(SRP_N) + pad_hex(SRP_G)), 16)


def new_srp_salt(fixed=None) -> str:
    # A random number in hex without leading zeros, as Cognito usually sends
    # SALT: the client pads it itself, and sometimes that means adding "00"
    # or "0". `fixed` (the srp_salt setting) is a shape Cognito has also
    # sent: leading zeros, or a leading "-" (a negative number).
    return fixed or format(secrets.randbits(128) or 1, "x")


@functools.lru_cache(maxsize=256)
def srp_verifier(pool_name: str, username: str, password: str, salt_hex: str) -> int:
    """v = g^x mod N, x = H(pad(salt) | H(pool name | username | ":" | password)).
    Cached: the 3072-bit exponentiation is the slow part and the inputs repeat."""
    inner = hashlib.sha256(f"{pool_name}{username}:{password}".encode()).hexdigest()
    # SALT is a number, whatever its text looks like (see new_srp_salt).
    x = int(hex_hash(pad_hex(int(salt_hex, 16)) + inner), 16)
    return pow(SRP_G, x, SRP_N)


def srp_scrambler(a_pub: int, b_pub: int) -> int:
    """u = H(pad(A) | pad(B))."""
    return int(hex_hash(pad_hex(a_pub) + pad_hex(b_pub)), 16)


def srp_session_key(a_pub: int, b_pub: int, b_priv: int, verifier: int) -> bytes:
    """The 16-byte key both sides derive: S = (A * v^u)^b mod N, then one
    HKDF-SHA256 block with pad(S) as key material and pad(u) as salt."""
    u = srp_scrambler(a_pub, b_pub)
    shared = pow(a_pub * pow(verifier, u, SRP_N) % SRP_N, b_priv, SRP_N)
    prk = hmac.new(bytes.fromhex(pad_hex(u)), bytes.fromhex(pad_hex(shared)), hashlib.sha256).digest()
    return hmac.new(prk, SRP_INFO + b"\x01", hashlib.sha256).digest()[:16]


def srp_signature(key: bytes, pool_name: str, user_id: str, secret_block: bytes, timestamp: str) -> bytes:
    """PASSWORD_CLAIM_SIGNATURE before base64: HMAC-SHA256 over pool name,
    USER_ID_FOR_SRP, the decoded SECRET_BLOCK and the TIMESTAMP text."""
    message = pool_name.encode() + user_id.encode() + secret_block + timestamp.encode()
    return hmac.new(key, message, hashlib.sha256).digest()


def parse_cognito_timestamp(text: str):
    """Seconds since the epoch for a TIMESTAMP in Cognito's format, or None
    when it is not in that format or names the wrong weekday for its date."""
    match = TIMESTAMP_PATTERN.fullmatch(text)
    if not match:
        return None
    weekday, month, day, hour, minute, second, year = match.groups()
    try:
        moment = datetime.datetime(int(year), MONTHS.index(month) + 1, int(day), int(hour), int(minute),
                                   int(second), tzinfo=datetime.timezone.utc)
    except ValueError:  # "Feb 30"
        return None
    if WEEKDAYS[moment.weekday()] != weekday:
        return None
    return moment.timestamp()


# --- TOTP (RFC 6238 as authenticator apps do it: SHA-1, 30 s steps, 6 digits) ---------

def new_totp_secret() -> str:
    # 20 random bytes are 32 base32 characters, the length of Cognito's SecretCode.
    return base64.b32encode(secrets.token_bytes(20)).decode("ascii")


def totp_key(secret_b32: str):
    """The key bytes of a base32 secret, or None if it is not base32."""
    try:
        key = base64.b32decode(secret_b32.upper() + "=" * (-len(secret_b32) % 8))
    except (binascii.Error, ValueError):
        return None
    return key or None


def totp_code(secret_b32: str, counter: int) -> str:
    digest = hmac.new(totp_key(secret_b32), counter.to_bytes(8, "big"), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return f"{(int.from_bytes(digest[offset:offset + 4], 'big') & 0x7FFFFFFF) % 10 ** 6:06d}"


def totp_matches(secret_b32: str, code: str, now=None) -> bool:
    """One step of clock drift either way is accepted, as Cognito does."""
    counter = int((time.time() if now is None else now) // 30)
    return any(hmac.compare_digest(totp_code(secret_b32, c).encode(), code.encode())
               for c in (counter - 1, counter, counter + 1))


class CognitoError(Exception):
    """An error Cognito would report as `{"__type": code, "message": ...}`.
    `detail` is what the double knows but Cognito does not say (recorded in
    stats only): a test that fails on "Incorrect username or password." can
    look up which check it was."""

    def __init__(self, code: str, message: str, status: int = 400, detail=None):
        super().__init__(message)
        self.code, self.message, self.status, self.detail = code, message, status, detail


class RawReply(Exception):
    """An answer that is not Cognito's JSON, e.g. moto's HTML page for an
    action it does not implement."""

    def __init__(self, status: int, content_type: str, headers: dict, body: bytes):
        super().__init__(status)
        self.status, self.content_type, self.headers, self.body = status, content_type, headers, body


class OAuthError(Exception):
    """An error of the OAuth 2.0 endpoints: `{"error": error, "error_description": ...}`."""

    def __init__(self, error: str, description: str, status: int = 400):
        super().__init__(description)
        self.error, self.description, self.status = error, description, status


def invalid_client(description: str) -> OAuthError:
    # RFC 6749 5.2: a client that failed to authenticate gets 401.
    return OAuthError("invalid_client", description, status=401)


def invalid_grant(description: str) -> OAuthError:
    return OAuthError("invalid_grant", description)


def parse_form(raw: bytes):
    """(fields, names given more than once) of a form body or query; ValueError
    if it is not UTF-8. A repeated field keeps its last value."""
    pairs = parse_qsl(raw.decode("utf-8") if isinstance(raw, bytes) else raw, keep_blank_values=True)
    names = [name for name, _ in pairs]
    return dict(pairs), sorted({name for name in names if names.count(name) > 1})


def with_query(uri: str, **params) -> str:
    """`uri` with `params` (None left out) added to its query, percent-encoded
    (a space as %20), so a redirect target's own query survives."""
    query = urlencode([(k, v) for k, v in params.items() if v is not None], quote_via=quote)
    if not query:
        return uri
    return uri + ("&" if urlsplit(uri).query else "" if uri.endswith("?") else "?") + query


def space_separated(text) -> list:
    """The scopes of a scope parameter (RFC 6749 3.3), each once, in order."""
    return list(dict.fromkeys(x for x in (text or "").split(" ") if x))


def html_page(title: str, body: str) -> bytes:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title></head>\n<body>\n{body}\n</body></html>\n").encode()


def java_double(seconds) -> str:
    """Epoch seconds as real Cognito Identity and STS write them in JSON:
    Java's Double.toString, 1515115602 -> "1.515115602E9" (a JSON number).
    A float keeps milliseconds, as the user pool writes its dates:
    1547146396.734 -> "1.547146396734E9"."""
    whole, fraction = str(seconds), ""
    if isinstance(seconds, float):
        whole, _, fraction = f"{seconds:.3f}".partition(".")
        fraction = fraction.rstrip("0")
    if int(whole) < 10 ** 7:
        return f"{whole}.{fraction or '0'}"
    digits = (whole + fraction).rstrip("0")
    return f"{digits[0]}.{digits[1:] or '0'}E{len(whole) - 1}"


def epoch(seconds: int) -> str:
    """A placeholder aws_json() writes as java_double(seconds)."""
    return f"\x00epoch:{int(seconds)}\x00"


def epoch_millis(seconds: float) -> str:
    """A placeholder aws_json() writes as java_double(seconds) with milliseconds."""
    return f"\x00epoch:{seconds:.3f}\x00"


def aws_json(body) -> bytes:
    """JSON as the AWS services write it: epoch() placeholders become numbers like 1.7E9."""
    text = json.dumps(body)

    def number(match):
        value = match.group(1)
        return java_double(float(value) if "." in value else int(value))
    return re.sub(r'"\\u0000epoch:([0-9]+(?:\.[0-9]+)?)\\u0000"', number, text).encode()


def random_upper_alnum(count: int) -> str:
    return "".join(secrets.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(count))


def iso_utc(seconds: int) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class StsError(Exception):
    """An STS error: <ErrorResponse><Error><Type/><Code/><Message/></Error>... (or its JSON form)."""

    def __init__(self, code: str, message: str, status: int = 400):
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


class JwtProblem(Exception):
    """A JWT that is not one (kind "malformed") or whose signature fails (kind "signature")."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


def moto_unimplemented() -> RawReply:
    return RawReply(500, "text/html; charset=utf-8", {"Connection": "close"}, MOTO_500_BODY)


def not_authorized(message: str) -> CognitoError:
    return CognitoError("NotAuthorizedException", message)


def invalid_parameter(message: str) -> CognitoError:
    return CognitoError("InvalidParameterException", message)


def incorrect(detail: str) -> CognitoError:
    """Cognito's one answer to every failed password proof; the reason goes to stats."""
    return CognitoError("NotAuthorizedException", INCORRECT, detail=detail)


class CognitoDouble:
    """All state of the fake pool. Every public method takes the lock, because
    ThreadingHTTPServer serves each connection on its own thread."""

    def __init__(self, base_url: str = ""):
        self.lock = threading.RLock()
        self.base_url = base_url
        # One key for the process lifetime: tokens minted before a reset still
        # verify, which is what a real pool (with a stable key) does too.
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        # Dispatch tables: extend these when adding actions / auth flows.
        self.actions = {
            "InitiateAuth": self.initiate_auth,
            "SignUp": self.sign_up,
            "ConfirmSignUp": self.confirm_sign_up,
            "ResendConfirmationCode": self.resend_confirmation_code,
            "ForgotPassword": self.forgot_password,
            "ConfirmForgotPassword": self.confirm_forgot_password,
            "ChangePassword": self.change_password,
            "GetUser": self.get_user,
            "SetUserMFAPreference": self.set_user_mfa_preference,
            "RespondToAuthChallenge": self.respond_to_auth_challenge,
            "AssociateSoftwareToken": self.associate_software_token,
            "VerifySoftwareToken": self.verify_software_token,
            "GetTokensFromRefreshToken": self.get_tokens_from_refresh_token,
            "RevokeToken": self.revoke_token,
            "GlobalSignOut": self.global_sign_out,
            "ConfirmDevice": self.confirm_device,
            "ListDevices": self.list_devices,
            "UpdateDeviceStatus": self.update_device_status,
            "ForgetDevice": self.forget_device,
        }
        # Identity pool actions (X-Amz-Target AWSCognitoIdentityService.<Action>).
        self.identity_actions = {
            "GetId": self.get_id,
            "GetCredentialsForIdentity": self.get_credentials_for_identity,
            "GetOpenIdToken": self.get_open_id_token,
        }
        self.auth_flows = {
            "USER_PASSWORD_AUTH": self._user_password_auth,
            "USER_SRP_AUTH": self._user_srp_auth,
            "USER_AUTH": self._user_auth,
            "CUSTOM_AUTH": self._custom_auth,
            "REFRESH_TOKEN_AUTH": self._refresh_token_auth,
        }
        # ChallengeName -> (answer, ChallengeResponses members it needs besides USERNAME).
        self.challenges = {
            "PASSWORD_VERIFIER": (self._answer_password_verifier,
                                  ("PASSWORD_CLAIM_SECRET_BLOCK", "PASSWORD_CLAIM_SIGNATURE", "TIMESTAMP")),
            "NEW_PASSWORD_REQUIRED": (self._answer_new_password, ("NEW_PASSWORD",)),
            "SOFTWARE_TOKEN_MFA": (self._answer_software_token_mfa, ("SOFTWARE_TOKEN_MFA_CODE",)),
            "SMS_MFA": (self._answer_sms_mfa, ("SMS_MFA_CODE",)),
            **{name: (self._answer_email_mfa, (name + "_CODE",)) for name in EMAIL_MFA_CHALLENGES},
            "SMS_OTP": (self._answer_sms_otp, ("SMS_OTP_CODE",)),
            "SELECT_CHALLENGE": (self._answer_select_challenge, ("ANSWER",)),
            "CUSTOM_CHALLENGE": (self._answer_custom_challenge, ("ANSWER",)),
            "SELECT_MFA_TYPE": (self._answer_select_mfa_type, ("ANSWER",)),
            "MFA_SETUP": (self._answer_mfa_setup, ()),
            "DEVICE_SRP_AUTH": (self._answer_device_srp_auth, ("DEVICE_KEY", "SRP_A")),
            "DEVICE_PASSWORD_VERIFIER": (self._answer_device_password_verifier,
                                         ("PASSWORD_CLAIM_SECRET_BLOCK", "PASSWORD_CLAIM_SIGNATURE", "TIMESTAMP",
                                          "DEVICE_KEY")),
        }
        self.reset()

    # ----------------------------------------------------------- admin API
    def reset(self) -> dict:
        with self.lock:
            self.config = copy.deepcopy(DEFAULT_CONFIG)
            self.users = {}           # canonical username -> see _new_user
            # token -> {username, client_id, auth_time, revoked, family, rotated_at}; a
            # family is one sign-in: its refresh tokens (rotation adds more) and
            # every access token issued with them, which RevokeToken ends together.
            self.refresh_tokens = {}
            self.access_tokens = {}   # jti -> {username, family}, so revocation can reach them
            self.revoked_access = set()  # jti of access tokens that no longer work
            self.sessions = {}        # challenge Session -> see _new_session
            self.srp_blocks = {}      # SECRET_BLOCK -> Session of its (DEVICE_)PASSWORD_VERIFIER challenge
            # DeviceKey -> see _issue_device; a forgotten device is deleted, so its key is unknown again.
            self.devices = {}
            self.device_pages = {}    # ListDevices PaginationToken -> {"username", "sub", "offset"}
            self.calls = {}           # "Action[:AuthFlow|:ChallengeName]" -> count
            self.requests = []        # one record per Cognito request, in order
            # Managed login: login_session -> {"request", "federated", "expires_at", "used"},
            # where "request" is the checked authorize request (see _authorize).
            self.login_sessions = {}
            self.authorization_codes = {}  # code -> the request, user and times (see _signed_in)
            self.last_authorize = None     # {"params", "query"} of the last GET /oauth2/authorize
            # Identity pool: (identity pool id, sub) -> IdentityId, so a user keeps one identity,
            # and IdentityId -> {"pool", "sub", "username"}.
            self.identity_by_sub = {}
            self.identities = {}
            # AccessKeyId -> what was issued with it (see _mint_aws_credentials).
            self.aws_credentials = {}
            return {"ok": True}

    def configure(self, patch: dict) -> dict:
        def non_negative_int(v):
            return isinstance(v, int) and not isinstance(v, bool) and v >= 0

        def string_list(v):
            return isinstance(v, list) and all(isinstance(x, str) and x != "" for x in v)

        def valid_urls(v):
            # Absolute URIs (a custom scheme like myapp:// too) without a fragment, as Cognito demands.
            return string_list(v) and all(urlsplit(x).scheme and "#" not in x for x in v)

        checks = {
            "pool_id": lambda v: isinstance(v, str) and v != "",
            "client_id": lambda v: isinstance(v, str) and v != "",
            "token_lifetime": non_negative_int,
            "issued_at_offset": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "rotate_refresh_tokens": lambda v: isinstance(v, bool),
            "fail_next": lambda v: v is None or isinstance(v, dict),
            "client_secret": lambda v: v is None or (isinstance(v, str) and v != ""),
            "password_policy": self._valid_policy,
            "code_lifetime": non_negative_int,
            "max_resends": non_negative_int,
            "auto_confirm": lambda v: isinstance(v, bool),
            "fixed_code": lambda v: v is None or (isinstance(v, str) and len(v) == 6 and v.isdigit()),
            # Only email is modelled; phone numbers would need SMS delivery too.
            "username_attributes": lambda v: v is None or (isinstance(v, list) and set(v) <= {"email"}),
            "session_lifetime": non_negative_int,
            "email_mfa_challenge": lambda v: v in EMAIL_MFA_CHALLENGES,
            "email_mfa": lambda v: isinstance(v, bool),
            "allowed_first_auth_factors": lambda v: string_list(v) and "PASSWORD" in v
                                                    and set(v) <= set(FIRST_AUTH_FACTORS),
            "custom_challenges": lambda v: isinstance(v, list) and all(
                isinstance(r, dict) and set(r) == {"parameters", "answer"} and isinstance(r["answer"], str)
                and isinstance(r["parameters"], dict) and all(isinstance(x, str) for x in r["parameters"].values())
                for r in v),
            "srp_challenge_session": lambda v: isinstance(v, bool),
            "rotation_grace_seconds": lambda v: non_negative_int(v) and v <= 60,  # Cognito's range
            "reuse_detection": lambda v: isinstance(v, bool),
            "get_tokens_from_refresh_token": lambda v: isinstance(v, bool),
            "revoke_token": lambda v: isinstance(v, bool),
            "srp_salt": lambda v: v is None or (isinstance(v, str) and re.fullmatch(r"-?[0-9a-fA-F]+", v) is not None),
            "refresh_token_lifetime": non_negative_int,
            "callback_urls": valid_urls,
            "logout_urls": valid_urls,
            "oauth_flows": lambda v: string_list(v) and set(v) <= set(OAUTH_FLOWS),
            "allowed_scopes": lambda v: string_list(v) and all(SCOPE_PATTERN.fullmatch(x) for x in v),
            # A resource server's scopes are always "identifier/name".
            "custom_scopes": lambda v: string_list(v) and all(SCOPE_PATTERN.fullmatch(x) and "/" in x for x in v),
            # COGNITO is the name of the pool's own sign-in, not a federated provider.
            "identity_providers": lambda v: string_list(v) and "COGNITO" not in v
                                            and all(re.fullmatch(r"[\w.-]+", x, re.ASCII) for x in v),
            "authorization_code_lifetime": non_negative_int,
            "identity_pool_id": lambda v: isinstance(v, str) and len(v) <= 55
                                          and IDENTITY_ID_PATTERN.fullmatch(v) is not None,
            "identity_provider": lambda v: v is None or (isinstance(v, str) and v != ""),
            "identity_client_ids": lambda v: v is None or (string_list(v) and v != []),
            "identity_role_arns": lambda v: string_list(v) and v != []
                                            and all(ROLE_ARN_PATTERN.fullmatch(x) for x in v),
            "identity_credentials_lifetime": non_negative_int,
            "identity_open_id_token_lifetime": non_negative_int,
            "identity_pool_misconfigured": lambda v: isinstance(v, bool),
            "identity_allow_classic_flow": lambda v: isinstance(v, bool),
            "device_tracking": lambda v: v in DEVICE_TRACKING_MODES,
        }
        for key, value in patch.items():
            if key not in checks:
                raise ValueError(f"unknown config key {key!r}")
            if not checks[key](value):
                raise ValueError(f"invalid value for {key!r}: {value!r}")
        fail = patch.get("fail_next")
        if fail is not None:  # normalise up front so request handling stays simple
            patch = dict(patch, fail_next={
                "status": int(fail.get("status", 500)),
                "body": str(fail.get("body", "")),
                "content_type": str(fail.get("content_type", "text/plain")),
                "count": max(1, int(fail.get("count", 1))),
                "headers": dict(fail.get("headers", {})),
            })
        if "password_policy" in patch:  # a partial policy means "defaults for the rest"
            patch = dict(patch, password_policy={**DEFAULT_PASSWORD_POLICY, **patch["password_policy"]})
        with self.lock:
            self.config.update(copy.deepcopy(patch))
            return copy.deepcopy(self.config)

    @staticmethod
    def _valid_policy(value) -> bool:
        if not isinstance(value, dict) or not set(value) <= set(DEFAULT_PASSWORD_POLICY):
            return False
        for key, item in value.items():
            if key == "min_length":
                if not isinstance(item, int) or isinstance(item, bool) or item < 1:
                    return False
            elif not isinstance(item, bool):
                return False
        return True

    def put_user(self, body: dict) -> dict:
        username, password = body.get("username"), body.get("password")
        if not isinstance(username, str) or not username or not isinstance(password, str):
            raise ValueError("username and password (strings) are required")
        attributes = body.get("attributes")
        if attributes is None:
            # Tests have long relied on an email-shaped username meaning an email.
            attributes = {"email": username} if "@" in username else {}
        elif not (isinstance(attributes, dict)
                  and all(isinstance(k, str) and isinstance(v, str) for k, v in attributes.items())):
            raise ValueError("attributes must be an object of strings")
        passkey = body.get("passkey", False)
        if not isinstance(passkey, bool):
            raise ValueError("passkey must be a boolean")
        force = body.get("force_change_password", False)
        if not isinstance(force, bool):
            raise ValueError("force_change_password must be a boolean")
        mfa, totp_secret = body.get("mfa"), body.get("totp_secret")
        if mfa not in MFA_MODES:
            raise ValueError(f"mfa must be one of {list(MFA_MODES)}")
        if totp_secret is not None and not (isinstance(totp_secret, str) and totp_key(totp_secret)):
            raise ValueError("totp_secret must be a base32 string")
        if mfa in ("email", "all") and "email" not in attributes:
            raise ValueError("email MFA needs an email attribute")
        if totp_secret is None and mfa in ("totp", "both", "all"):
            totp_secret = new_totp_secret()  # the test reads it back from GET /_double/users
        with self.lock:
            # Replacing a user is delete + create, so a new sub unless one is given;
            # existing refresh tokens are kept (like a password change without sign-out).
            user = self._new_user(
                password=password, confirmed=bool(body.get("confirmed", True)),
                sub=str(body.get("sub") or uuid.uuid4()), attributes=dict(attributes),
                # An admin-made user's email counts as verified, as with
                # AdminCreateUser plus email_verified=true.
                email_verified="email" in attributes)
            # force_change_password is what AdminCreateUser leaves (FORCE_CHANGE_PASSWORD).
            user.update(force_change_password=force, totp_secret=totp_secret, passkey=passkey,
                        mfa_setup_required=mfa == "setup")
            self._set_mfa(user, MODE_METHODS[mfa], None)
            self.users[username] = user
            return {"username": username, "sub": user["sub"], "confirmed": user["confirmed"]}

    def revoke(self, body: dict) -> dict:
        with self.lock:
            return {"revoked": self._sign_out(self._admin_user(body.get("username")))}

    def user_info(self, username) -> dict:
        with self.lock:
            name = self._admin_user(username)
            user = self.users[name]
            return {"username": name, "sub": user["sub"], "confirmed": user["confirmed"],
                    "attributes": dict(user["attributes"]), "email_verified": user["email_verified"],
                    "password_set": user["password"] is not None,
                    "force_change_password": user["force_change_password"], "mfa": user["mfa"],
                    "totp_secret": user["totp_secret"]}

    def codes(self, username) -> dict:
        with self.lock:
            user = self.users[self._admin_user(username)]
            # Expired codes are still shown: the email that carried them still exists.
            codes = {kind: (user["codes"][kind] or {}).get("code") for kind in ("signup", "reset")}
            # MFA codes live in their challenge Session (and die with it).
            return dict(codes, sms=user["sms_code"], email=user["email_code"])

    def expire_codes(self, body: dict) -> dict:
        with self.lock:
            user = self.users[self._admin_user(body.get("username"))]
            outstanding = [c for c in user["codes"].values() if c is not None]
            for code in outstanding:
                code["expires_at"] = 0.0
            return {"expired": len(outstanding)}

    def devices_info(self, username) -> dict:
        """GET /_double/devices: what a test needs to know of a user's devices, never their secrets."""
        with self.lock:
            name = self._admin_user(username)
            return {"username": name, "devices": [
                {"device_key": key, "device_group_key": device["group_key"], "name": device["name"],
                 "confirmed": device["confirmed"], "remembered": device["remembered"],
                 "created": device["created"], "last_modified": device["modified"],
                 "last_authenticated": device["last_authenticated"]}
                for key, device in self._devices_of(name, confirmed_only=False)]}

    def forget_device_admin(self, body: dict) -> dict:
        """POST /_double/forget_device: as if the user forgot it elsewhere (another machine, the console)."""
        with self.lock:
            name, key = self._admin_user(body.get("username")), body.get("device_key")
            if key not in dict(self._devices_of(name, confirmed_only=False)):
                raise LookupError(f"user {name!r} has no device {key!r}")
            del self.devices[key]
            return {"forgotten": key}

    def stats(self) -> dict:
        with self.lock:
            return {"calls": dict(self.calls), "requests": copy.deepcopy(self.requests)}

    def aws_credentials_info(self, access_key_id) -> dict:
        """What the double issued with an AccessKeyId (GET /_double/aws_credentials)."""
        if not isinstance(access_key_id, str) or not access_key_id:
            raise ValueError("access_key_id is required")
        with self.lock:
            issued = self.aws_credentials.get(access_key_id)
            if issued is None:
                raise LookupError(f"no AWS credentials with access key id {access_key_id!r}")
            return dict(issued)

    def jwks(self) -> dict:
        public = self._key.public_key().public_numbers()
        return {"keys": [{"alg": "RS256", "e": int_b64url(public.e), "kid": KID,
                          "kty": "RSA", "n": int_b64url(public.n), "use": "sig"}]}

    def _admin_user(self, username) -> str:
        """The canonical username an admin call means (the name or a unique email)."""
        # A missing name is "no such user" (404), as /_double/revoke always answered.
        if username in self.users:
            return username
        matches = [n for n, u in self.users.items()
                   if username is not None and u["attributes"].get("email") == username]
        if len(matches) == 1:
            return matches[0]
        raise LookupError(f"no such user {username!r}")

    # ------------------------------------------------------ Cognito endpoint
    def handle(self, headers: dict, raw_body: bytes):
        """Answer one `POST /`. Returns (status, content_type, extra_headers, body)."""
        with self.lock:
            target = headers.get("x-amz-target", "")
            media_type = headers.get("content-type", "").split(";")[0].strip().lower()
            if not target and media_type == FORM:
                return self._sts(headers, raw_body)  # STS, the AWS query protocol
            identity = target.startswith(IDENTITY_TARGET_PREFIX)
            if identity:
                # Counted under the bare name only when it is an identity pool action.
                name = target[len(IDENTITY_TARGET_PREFIX):]
                handlers, action = self.identity_actions, (name if name in self.identity_actions else None)
            else:
                handlers = self.actions
                action = target[len(TARGET_PREFIX):] if target.startswith(TARGET_PREFIX) else None
                if action in self.identity_actions and action not in self.actions:
                    action = None  # an identity pool action sent to the user pool: not counted as one
            try:
                payload = json.loads(raw_body or b"{}")
            except ValueError:
                payload = None
            auth_flow = payload.get("AuthFlow") if isinstance(payload, dict) and not identity else None
            # Which step of a sign-in an answer is counts as much as which flow.
            step = auth_flow
            if action == "RespondToAuthChallenge" and isinstance(payload, dict):
                step = payload.get("ChallengeName")
            # Count and record *before* anything can fail: tests assert on
            # retries and on what the client sent, including rejected requests.
            key = (action or target or "(missing target)") + (f":{step}" if step else "")
            self.calls[key] = self.calls.get(key, 0) + 1
            record = {"action": action, "auth_flow": auth_flow, "headers": dict(headers)}
            if identity:
                record["service"] = "cognito-identity"
            # What a sign-in step carried: the names only (never a password or
            # code), and the choices, which are no secret.
            sent = payload.get("AuthParameters", payload.get("ChallengeResponses")) if isinstance(payload, dict) else None
            if isinstance(sent, dict) and not identity:
                record["parameter_names"] = sorted(sent)
                choices = ("PREFERRED_CHALLENGE",) + (("ANSWER",) if step in ("SELECT_CHALLENGE", "SELECT_MFA_TYPE") else ())
                record.update({key.lower(): sent[key] for key in choices if key in sent})
                if step != auth_flow:
                    record["challenge"] = step
            if action == "GetTokensFromRefreshToken" and isinstance(payload, dict):
                # It has no AuthParameters: whether the device came along, not which.
                record["device_key_sent"] = payload.get("DeviceKey") is not None
            self.requests.append(record)

            failed = self._fail_next(record)
            if failed is not None:
                return failed

            try:
                if media_type != AMZ_JSON:
                    raise CognitoError("SerializationException",
                                       f"Expected Content-Type {AMZ_JSON}, got {media_type or 'none'}")
                if action not in handlers:
                    raise CognitoError("UnknownOperationException",
                                       f"Unknown operation {target or '(no X-Amz-Target)'}")
                if identity and "authorization" in headers:
                    # The identity pool actions are unsigned; a signature must be a valid one.
                    raise CognitoError("UnrecognizedClientException",
                                       "The security token included in the request is invalid.")
                if not isinstance(payload, dict):
                    raise CognitoError("SerializationException", "Request body is not a JSON object")
                status, body = 200, handlers[action](payload)
                extra = {}
            except RawReply as raw:
                record["status"] = raw.status
                return raw.status, raw.content_type, dict(raw.headers), raw.body
            except CognitoError as err:
                status, body = err.status, {"__type": err.code, "message": err.message}
                extra = {"x-amzn-ErrorType": err.code}
                if err.detail:
                    record["detail"] = err.detail
            record["status"] = status
            extra["x-amzn-RequestId"] = str(uuid.uuid4())
            return status, AMZ_JSON, extra, aws_json(body)

    def _fail_next(self, record: dict):
        """The canned answer config fail_next asks for, used up by one request
        (recorded in `record`), or None to answer normally."""
        fail = self.config["fail_next"]
        if fail is None:
            return None
        fail["count"] -= 1
        if fail["count"] <= 0:
            self.config["fail_next"] = None
        record["status"] = fail["status"]
        return fail["status"], fail["content_type"], dict(fail["headers"]), fail["body"].encode()

    # ------------------------------------------------------ sign-in (InitiateAuth)
    def initiate_auth(self, req: dict) -> dict:
        flow = req.get("AuthFlow")
        if flow not in self.auth_flows:
            # Real Cognito also answers InvalidParameterException for flows it
            # does not allow; we say plainly that the double lacks the flow.
            raise CognitoError("InvalidParameterException",
                               f"AuthFlow {flow!r} is not supported by the Cognito double")
        self._check_client(req)
        params = req.get("AuthParameters")
        if not isinstance(params, dict):
            raise CognitoError("InvalidParameterException", "Missing required parameter AuthParameters")
        return self.auth_flows[flow](params)

    def _signing_in(self, params: dict, secret: str) -> str:
        """The canonical name of the user a sign-in names, after the checks
        both flows make first: USERNAME and `secret` present, SECRET_HASH
        right (over what the user typed, which may be an alias), user known."""
        for name in ("USERNAME", secret):
            if not params.get(name):
                raise CognitoError("InvalidParameterException", f"Missing required parameter {name}")
        self._check_secret_hash(params["USERNAME"], params.get("SECRET_HASH"))
        username = self._find_user(params["USERNAME"])
        if username is None:
            raise CognitoError("UserNotFoundException", "User does not exist.")
        if self.users[username]["password"] is None:
            raise incorrect("a federated user signs in only through its identity provider")
        return username

    def _user_password_auth(self, params: dict) -> dict:
        username = self._signing_in(params, "PASSWORD")
        user = self.users[username]
        if user["password"] != params["PASSWORD"]:
            raise CognitoError("NotAuthorizedException", INCORRECT)
        # Cognito checks the password before confirmation, so a wrong password
        # on an unconfirmed user is still NotAuthorized.
        if not user["confirmed"]:
            raise CognitoError("UserNotConfirmedException", "User is not confirmed.")
        return self._after_password(username, self._device_key_given(params))

    def _user_srp_auth(self, params: dict) -> dict:
        return self._srp_challenge(self._signing_in(params, "SRP_A"), params["SRP_A"],
                                   device_key=self._device_key_given(params))

    def _srp_challenge(self, username: str, srp_a: str, with_session: bool = False, **state) -> dict:
        """Step one of SRP: take A, answer B and what the client needs for its proof."""
        user = self.users[username]
        verifier = srp_verifier(self._pool_name(), username, user["password"], user["srp_salt"])
        b_pub, secret_block, session = self._srp_step(username, srp_a, verifier, "PASSWORD_VERIFIER", **state)
        answer = {"ChallengeName": "PASSWORD_VERIFIER", "ChallengeParameters": {
            "SALT": user["srp_salt"], "SRP_B": format(b_pub, "x"), "SECRET_BLOCK": secret_block,
            # The proof is over the canonical name, which the client may not know yet.
            "USER_ID_FOR_SRP": username, "USERNAME": username}}
        if self.config["srp_challenge_session"] or with_session:
            answer["Session"] = session
        return answer

    def _srp_step(self, username: str, srp_a: str, verifier: int, challenge: str, **state) -> tuple:
        """The server's half of an SRP round over `verifier` (a password's or a
        device's): takes A, returns (B, SECRET_BLOCK, the Session of
        `challenge`, where the proof is answered)."""
        if not re.fullmatch(r"[0-9a-fA-F]+", srp_a):
            raise invalid_parameter("SRP_A must be a hexadecimal number")
        a_pub = int(srp_a, 16)
        if a_pub % SRP_N == 0:  # A = 0 (mod N) would force the shared secret to 0
            raise invalid_parameter("SRP_A is invalid: A mod N is 0")
        while True:  # u = 0 would leave the password out of the key; redraw b (never happens in practice)
            b_priv = secrets.randbits(1024) | 1
            b_pub = (SRP_K * verifier + pow(SRP_G, b_priv, SRP_N)) % SRP_N
            if b_pub and srp_scrambler(a_pub, b_pub):
                break
        secret_block = base64.b64encode(secrets.token_bytes(SECRET_BLOCK_BYTES)).decode("ascii")
        session = self._new_session(username, challenge, a_pub=a_pub, b_pub=b_pub, b_priv=b_priv,
                                    verifier=verifier, secret_block=secret_block, **state)
        self.srp_blocks[secret_block] = session
        return b_pub, secret_block, session

    def _user_auth(self, params: dict) -> dict:
        """Choice-based sign-in: the preferred first factor, else a choice."""
        username = self._signing_in(params, "USERNAME")
        preferred = params.get("PREFERRED_CHALLENGE")
        if preferred is not None and preferred not in FIRST_AUTH_FACTORS + ("PASSWORD_SRP",):
            raise invalid_parameter(f"PREFERRED_CHALLENGE {preferred!r} is not a first factor")
        device_key = self._device_key_given(params)
        available = self._first_factors(username)
        if preferred in available and preferred != "WEB_AUTHN":
            return self._first_factor(username, preferred, params, device_key)
        return {"ChallengeName": "SELECT_CHALLENGE", "ChallengeParameters": {}, "AvailableChallenges": available,
                "Session": self._new_session(username, "SELECT_CHALLENGE", available=available,
                                             device_key=device_key)}

    def _custom_auth(self, params: dict) -> dict:
        """The pool's own challenges, after an SRP proof of the password if asked."""
        username = self._signing_in(params, "USERNAME")
        device_key = self._device_key_given(params)
        step = params.get("CHALLENGE_NAME")
        if step is None:
            return self._custom_round(username, 0, device_key)
        if step != "SRP_A":
            raise invalid_parameter(f"CHALLENGE_NAME {step!r}: the double's custom flow starts with SRP_A or nothing")
        if not params.get("SRP_A"):
            raise invalid_parameter("Missing required parameter SRP_A")
        answer = self._srp_challenge(username, params["SRP_A"], with_session=True, device_key=device_key)
        self.sessions[answer["Session"]]["then_custom"] = True
        return answer

    def _custom_round(self, username: str, index: int, device_key=None) -> dict:
        rounds = self.config["custom_challenges"]
        if index >= len(rounds):
            return self._sign_in_tokens(username, device_key)
        return self._challenge(username, "CUSTOM_CHALLENGE", {**rounds[index]["parameters"], "USERNAME": username},
                               round=index, device_key=device_key)

    def _answer_custom_challenge(self, state: dict, responses: dict) -> dict:
        expected = self.config["custom_challenges"][state["round"]]["answer"]
        if not hmac.compare_digest(responses["ANSWER"].encode(), expected.encode()):
            raise CognitoError("NotAuthorizedException", INCORRECT)
        return self._custom_round(state["username"], state["round"] + 1, state.get("device_key"))

    def _first_factors(self, username: str) -> list:
        """The first factors this user may choose, in this pool."""
        allowed, user = self.config["allowed_first_auth_factors"], self.users[username]
        has = {"PASSWORD": True, "PASSWORD_SRP": True, "EMAIL_OTP": "email" in user["attributes"],
               "SMS_OTP": "phone_number" in user["attributes"], "WEB_AUTHN": user["passkey"]}
        return [f for f in ("PASSWORD", "PASSWORD_SRP", "EMAIL_OTP", "SMS_OTP", "WEB_AUTHN")
                if (f in allowed or (f == "PASSWORD_SRP" and "PASSWORD" in allowed)) and has[f]]

    def _first_factor(self, username: str, factor: str, given: dict, device_key=None) -> dict:
        """Starts the chosen first factor; `given` holds its PASSWORD or SRP_A."""
        user = self.users[username]
        if factor == "PASSWORD":
            if not given.get("PASSWORD"):
                raise invalid_parameter("Missing required parameter PASSWORD")
            if user["password"] != given["PASSWORD"]:
                raise CognitoError("NotAuthorizedException", INCORRECT)
            if not user["confirmed"]:
                raise CognitoError("UserNotConfirmedException", "User is not confirmed.")
            return self._after_password(username, device_key)
        if factor == "PASSWORD_SRP":
            if not given.get("SRP_A"):
                raise invalid_parameter("Missing required parameter SRP_A")
            return self._srp_challenge(username, given["SRP_A"], with_session=True, device_key=device_key)
        if factor == "WEB_AUTHN":
            raise invalid_parameter("The Cognito double lists WEB_AUTHN but does not implement it")
        if factor == "EMAIL_OTP":
            # The same challenge, and code, as email MFA; a right code ends the sign-in.
            return self._mfa_challenge(username, "EMAIL_OTP", device_key)
        code = user["sms_code"]
        while code == user["sms_code"]:
            code = f"{secrets.randbelow(10 ** 6):06d}"
        user["sms_code"] = code
        return self._challenge(username, "SMS_OTP", {"CODE_DELIVERY_DELIVERY_MEDIUM": "SMS",
                                                     "CODE_DELIVERY_DESTINATION": mask_phone(user["attributes"]["phone_number"])},
                               sms_code=code, device_key=device_key)

    def _refresh_token_auth(self, params: dict) -> dict:
        token = params.get("REFRESH_TOKEN")
        if not token:
            raise CognitoError("InvalidParameterException", "Missing required parameter REFRESH_TOKEN")
        record = self._refresh_record(token)
        # A refresh has no typed name: the hash covers the canonical username,
        # which a client with an email alias must take from its tokens.
        self._check_secret_hash(record["username"], params.get("SECRET_HASH"))
        self._check_refresh_device(record, params.get("DEVICE_KEY"))
        self._check_refresh_alive(record)
        # Kept from before GetTokensFromRefreshToken existed: real Cognito
        # refuses to rotate here, but the rotation tests predate that action.
        rotate = self.config["rotate_refresh_tokens"]
        if rotate:
            self._rotate_out(record)
        # auth_time stays the original sign-in time: a refresh is not a new authentication.
        return self._authentication_result(record["username"], record["auth_time"], refresh=rotate,
                                           family=record["family"], scope=record["scope"],
                                           id_token=record["id_token"], device_key=record.get("device_key"))

    # ------------------------------------------------------ sign-in challenges
    def _after_password(self, username: str, device_key=None) -> dict:
        """What a right password leads to: a new password, then MFA (or the
        remembered device's own proof), then tokens."""
        user = self.users[username]
        if device_key is not None:
            # The first step that knows the password is right: only now may a
            # caller learn whether the user has this device.
            self._user_device(username, device_key)
        if not user["force_change_password"]:
            return self._mfa_or_tokens(username, device_key)
        attributes = dict(user["attributes"])
        if "email" in attributes:
            attributes["email_verified"] = "true" if user["email_verified"] else "false"
        return self._challenge(username, "NEW_PASSWORD_REQUIRED", {
            "requiredAttributes": "[]", "userAttributes": json.dumps(attributes)}, device_key=device_key)

    @staticmethod
    def _set_mfa(user: dict, enabled: list, preferred) -> None:
        """A user's MFA methods (UserMFASettingList) and the preferred one;
        "mfa" (GET /_double/users) names the set as POST's modes do."""
        enabled = [m for m in MFA_METHODS if m in enabled]
        user.update(mfa_enabled=enabled, mfa_preferred=preferred if preferred in enabled else None)
        modes = {tuple(methods): mode for mode, methods in MODE_METHODS.items() if mode not in (None, "setup")}
        names = {"SMS_MFA": "sms", "SOFTWARE_TOKEN_MFA": "totp", "EMAIL_OTP": "email"}
        if not enabled:
            user["mfa"] = "setup" if user["mfa_setup_required"] else None
        else:
            user["mfa"] = modes.get(tuple(enabled), "+".join(names[m] for m in enabled))

    def _mfa_or_tokens(self, username: str, device_key=None) -> dict:
        if device_key is not None and self._user_device(username, device_key)["remembered"]:
            # A remembered device stands in for any MFA: it proves itself with its own SRP.
            return self._challenge(username, "DEVICE_SRP_AUTH", {"USERNAME": username}, device_key=device_key)
        user = self.users[username]
        email = self.config["email_mfa_challenge"]
        # A pool without email MFA (config email_mfa) never asks for it.
        enabled = [m for m in user["mfa_enabled"] if m != "EMAIL_OTP" or self.config["email_mfa"]]
        preferred = user["mfa_preferred"] if user["mfa_preferred"] in enabled else None
        if not enabled and user["mfa_setup_required"]:
            # MFA is required but the user has no factor yet.
            return self._challenge(username, "MFA_SETUP", {
                "MFAS_CAN_SETUP": json.dumps(["SOFTWARE_TOKEN_MFA"], separators=(",", ":"))}, step="associate",
                device_key=device_key)
        if not enabled:
            return self._sign_in_tokens(username, device_key)
        if preferred or len(enabled) == 1:
            method = preferred or enabled[0]
            return self._mfa_challenge(username, email if method == "EMAIL_OTP" else method, device_key)
        offered = [email if m == "EMAIL_OTP" else m for m in enabled]
        return self._challenge(username, "SELECT_MFA_TYPE", {
            "MFAS_CAN_CHOOSE": json.dumps(offered, separators=(",", ":"))}, offered=offered, device_key=device_key)

    def _mfa_challenge(self, username: str, kind: str, device_key=None) -> dict:
        if kind == "SOFTWARE_TOKEN_MFA":
            return self._challenge(username, kind, {}, device_key=device_key)
        user = self.users[username]
        if kind in EMAIL_MFA_CHALLENGES:
            code = user["email_code"]
            while code == user["email_code"]:  # a new email must not repeat the last one
                code = f"{secrets.randbelow(10 ** 6):06d}"
            user["email_code"] = code  # what the email said, for GET /_double/codes
            return self._challenge(username, kind, {"CODE_DELIVERY_DELIVERY_MEDIUM": "EMAIL",
                                                    "CODE_DELIVERY_DESTINATION": mask_email(user["attributes"]["email"])},
                                   email_code=code, device_key=device_key)
        code = user["sms_code"]
        while code == user["sms_code"]:  # a new text must not repeat the last one
            code = f"{secrets.randbelow(10 ** 6):06d}"
        user["sms_code"] = code  # what the text message said, for GET /_double/codes
        phone = user["attributes"].get("phone_number", "+10000000000")
        return self._challenge(username, kind, {"CODE_DELIVERY_DELIVERY_MEDIUM": "SMS",
                                                "CODE_DELIVERY_DESTINATION": mask_phone(phone)}, sms_code=code,
                               device_key=device_key)

    def _challenge(self, username: str, name: str, parameters: dict, step: str = "respond", **state) -> dict:
        # USER_ID_FOR_SRP in every challenge is how clients learn the canonical
        # name that later SECRET_HASHes must cover.
        return {"ChallengeName": name, "Session": self._new_session(username, name, step, **state),
                "ChallengeParameters": {**parameters, "USER_ID_FOR_SRP": username}}

    def _new_session(self, username: str, challenge: str, step: str = "respond", **state) -> str:
        """A challenge Session, valid for one use of `step`: "respond" is
        RespondToAuthChallenge; MFA_SETUP goes associate -> verify -> respond."""
        # Opaque and long with "+" and "/", like real ones.
        token = base64.b64encode(secrets.token_bytes(192)).decode("ascii")
        self.sessions[token] = {"username": username, "sub": self.users[username]["sub"],
                                "challenge": challenge, "step": step, "used": False,
                                "expires_at": time.time() + self.config["session_lifetime"], **state}
        return token

    def _use_session(self, token, challenge: str, step: str) -> dict:
        """The live state of a Session for this step, marked used."""
        state = self._session(token, challenge, step)
        state["used"] = True
        return state

    def _session(self, token, challenge: str, step: str) -> dict:
        if not isinstance(token, str) or not token:
            raise invalid_parameter("Missing required parameter Session")
        state = self.sessions.get(token)
        if state is None or state["challenge"] != challenge or state["step"] != step:
            raise CognitoError("NotAuthorizedException", INVALID_SESSION,
                               detail=None if state is None else f"the Session is for {state['challenge']}"
                                                                 f" ({state['step']})")
        if state["used"]:
            raise not_authorized("Invalid session for the user, session can only be used once.")
        if time.time() >= state["expires_at"]:
            raise not_authorized("Invalid session for the user, session is expired.")
        user = self.users.get(state["username"])
        if user is None or user["sub"] != state["sub"]:  # replaced or deleted since
            raise CognitoError("NotAuthorizedException", INVALID_SESSION, detail="the user has been replaced")
        return state

    def respond_to_auth_challenge(self, req: dict) -> dict:
        self._check_client(req)
        name = req.get("ChallengeName")
        if name not in self.challenges:
            raise invalid_parameter(f"ChallengeName {name!r} is not supported by the Cognito double")
        responses = req.get("ChallengeResponses")
        if not isinstance(responses, dict):
            raise invalid_parameter("Missing required parameter ChallengeResponses")
        if not all(isinstance(v, str) for v in responses.values()):
            raise CognitoError("SerializationException", "ChallengeResponses values must be strings")
        answer, required = self.challenges[name]
        for member in ("USERNAME",) + required:
            if not responses.get(member):
                raise invalid_parameter(f"Missing required parameter {member}")
        session = req.get("Session")
        if name in ("PASSWORD_VERIFIER", "DEVICE_PASSWORD_VERIFIER") and session is None:
            # Real Cognito gives this challenge no Session: the SECRET_BLOCK is the state.
            session = self.srp_blocks.get(responses["PASSWORD_CLAIM_SECRET_BLOCK"])
            if session is None:
                raise incorrect("PASSWORD_CLAIM_SECRET_BLOCK is no SECRET_BLOCK this double issued")
        state = self._session(session, name, "respond")
        if self._find_user(responses["USERNAME"]) != state["username"]:
            raise CognitoError("NotAuthorizedException", INVALID_SESSION,
                               detail="USERNAME does not name the user of the Session")
        # Over the canonical name, whatever USERNAME says: clients must take it
        # from USER_ID_FOR_SRP, as the AWS SDKs do.
        self._check_secret_hash(state["username"], responses.get("SECRET_HASH"))
        state["used"] = True  # from here on, right or wrong, the Session is spent
        return answer(state, responses)

    def _answer_password_verifier(self, state: dict, responses: dict) -> dict:
        username = state["username"]
        self._check_srp_proof(state, responses, self._pool_name(), username)
        if not self.users[username]["confirmed"]:
            raise CognitoError("UserNotConfirmedException", "User is not confirmed.")
        # Both SDKs send DEVICE_KEY with InitiateAuth and again here; either will do, but not two.
        device_key, again = state.get("device_key"), self._device_key_given(responses)
        if device_key is not None and again is not None and again != device_key:
            raise invalid_parameter("DEVICE_KEY is not the one InitiateAuth sent")
        device_key = device_key or again
        if state.get("then_custom"):
            if device_key is not None:
                self._user_device(username, device_key)  # the password is proven: see _after_password
            return self._custom_round(username, 0, device_key)
        return self._after_password(username, device_key)

    def _check_srp_proof(self, state: dict, responses: dict, pool_name: str, user_id: str) -> None:
        """A (DEVICE_)PASSWORD_VERIFIER answer's proof against its Session's
        SRP round: the SECRET_BLOCK, a TIMESTAMP near now, and the signature
        over `pool_name` and `user_id` (the pool and user, or for a device its
        group key and key)."""
        if not hmac.compare_digest(responses["PASSWORD_CLAIM_SECRET_BLOCK"].encode(), state["secret_block"].encode()):
            raise incorrect("PASSWORD_CLAIM_SECRET_BLOCK is not the SECRET_BLOCK of this challenge")
        timestamp = responses["TIMESTAMP"]
        moment = parse_cognito_timestamp(timestamp)
        if moment is None:
            raise incorrect(f"TIMESTAMP {timestamp!r} is not like 'Mon Nov 2 04:03:01 UTC 2026'")
        if abs(time.time() - moment) > SRP_TIMESTAMP_SKEW:
            raise incorrect(f"TIMESTAMP {timestamp!r} is more than {SRP_TIMESTAMP_SKEW} s from now")
        key = srp_session_key(state["a_pub"], state["b_pub"], state["b_priv"], state["verifier"])
        expected = srp_signature(key, pool_name, user_id, base64.b64decode(state["secret_block"]), timestamp)
        try:
            given = base64.b64decode(responses["PASSWORD_CLAIM_SIGNATURE"], validate=True)
        except (binascii.Error, ValueError):
            raise incorrect("PASSWORD_CLAIM_SIGNATURE is not base64") from None
        if not hmac.compare_digest(given, expected):
            what = "device password" if state["challenge"] == "DEVICE_PASSWORD_VERIFIER" else "password"
            raise incorrect(f"PASSWORD_CLAIM_SIGNATURE does not match (wrong {what}, or a bug in the proof)")

    def _answer_new_password(self, state: dict, responses: dict) -> dict:
        user = self.users[state["username"]]
        password = responses["NEW_PASSWORD"]
        self._check_password_input(password, "NEW_PASSWORD")
        self._check_password_policy(password)
        # A pool may ask for attributes here ("userAttributes.<name>"); none are required.
        given = [{"Name": k[len("userAttributes."):], "Value": v}
                 for k, v in responses.items() if k.startswith("userAttributes.")]
        user["attributes"].update(self._sign_up_attributes(given))
        self._set_password(user, password)
        user["force_change_password"] = False
        return self._mfa_or_tokens(state["username"], state.get("device_key"))

    def _answer_software_token_mfa(self, state: dict, responses: dict) -> dict:
        secret = self.users[state["username"]]["totp_secret"]
        if secret is None or not totp_matches(secret, responses["SOFTWARE_TOKEN_MFA_CODE"]):
            raise CognitoError("CodeMismatchException", "Invalid code received for user")
        return self._sign_in_tokens(state["username"], state.get("device_key"))

    def _answer_sms_mfa(self, state: dict, responses: dict) -> dict:
        if not hmac.compare_digest(responses["SMS_MFA_CODE"].encode(), state["sms_code"].encode()):
            raise CognitoError("CodeMismatchException", "Invalid code received for user")
        return self._sign_in_tokens(state["username"], state.get("device_key"))

    def _answer_email_mfa(self, state: dict, responses: dict) -> dict:
        # Under the name of the challenge this Session was for (checked before).
        given = responses[state["challenge"] + "_CODE"]
        if not hmac.compare_digest(given.encode(), state["email_code"].encode()):
            raise CognitoError("CodeMismatchException", "Invalid code received for user")
        return self._sign_in_tokens(state["username"], state.get("device_key"))

    def _answer_sms_otp(self, state: dict, responses: dict) -> dict:
        if not hmac.compare_digest(responses["SMS_OTP_CODE"].encode(), state["sms_code"].encode()):
            raise CognitoError("CodeMismatchException", "Invalid code received for user")
        return self._sign_in_tokens(state["username"], state.get("device_key"))

    def _answer_select_challenge(self, state: dict, responses: dict) -> dict:
        choice = responses["ANSWER"]
        if choice not in state["available"]:
            raise invalid_parameter(f"ANSWER must be one of {', '.join(state['available'])}, not {choice!r}")
        return self._first_factor(state["username"], choice, responses, state.get("device_key"))

    def _answer_select_mfa_type(self, state: dict, responses: dict) -> dict:
        choice = responses["ANSWER"]
        if choice not in state["offered"]:
            raise invalid_parameter(f"ANSWER must be one of {', '.join(state['offered'])}, not {choice!r}")
        return self._mfa_challenge(state["username"], choice, state.get("device_key"))

    def _answer_mfa_setup(self, state: dict, responses: dict) -> dict:
        # Only reachable with the Session VerifySoftwareToken gave out, so the
        # token is already verified and registered.
        return self._sign_in_tokens(state["username"], state.get("device_key"))

    def _answer_device_srp_auth(self, state: dict, responses: dict) -> dict:
        """The remembered device's SRP, step one: A in, B and the device's salt out."""
        username, device_key = state["username"], state["device_key"]
        if responses["DEVICE_KEY"] != device_key:
            raise incorrect("DEVICE_KEY is not the device this sign-in named")
        device = self._user_device(username, device_key)  # forgotten since the last step?
        b_pub, secret_block, session = self._srp_step(username, responses["SRP_A"], device["verifier"],
                                                      "DEVICE_PASSWORD_VERIFIER", device_key=device_key)
        answer = {"ChallengeName": "DEVICE_PASSWORD_VERIFIER", "ChallengeParameters": {
            "SRP_B": format(b_pub, "x"), "SALT": device["salt"], "SECRET_BLOCK": secret_block,
            "USERNAME": username, "DEVICE_KEY": device_key, "USER_ID_FOR_SRP": username}}
        # Like PASSWORD_VERIFIER: the SECRET_BLOCK is the state unless config srp_challenge_session.
        if self.config["srp_challenge_session"]:
            answer["Session"] = session
        return answer

    def _answer_device_password_verifier(self, state: dict, responses: dict) -> dict:
        """The device's proof: SRP with the group key as pool name and the device key as user id."""
        username, device_key = state["username"], state["device_key"]
        if responses["DEVICE_KEY"] != device_key:
            raise incorrect("DEVICE_KEY is not the device this sign-in named")
        device = self._user_device(username, device_key)
        self._check_srp_proof(state, responses, device["group_key"], device_key)
        return self._sign_in_tokens(username, device_key)

    # ------------------------------------------------------ MFA setup during sign-in
    def associate_software_token(self, req: dict) -> dict:
        if req.get("AccessToken") is not None:
            # A signed-in user adding an authenticator: verified next, enabled by SetUserMFAPreference.
            user = self.users[self._verify_access_token(req["AccessToken"])]
            user["pending_totp_secret"] = new_totp_secret()
            return {"SecretCode": user["pending_totp_secret"]}
        state = self._use_session(req.get("Session"), "MFA_SETUP", "associate")
        secret = new_totp_secret()
        return {"SecretCode": secret, "Session": self._new_session(state["username"], "MFA_SETUP", "verify",
                                                                   totp_secret=secret,
                                                                   device_key=state.get("device_key"))}

    def verify_software_token(self, req: dict) -> dict:
        code = self._require(req, "UserCode")[0]
        friendly = req.get("FriendlyDeviceName")
        if friendly is not None and not isinstance(friendly, str):
            raise CognitoError("SerializationException", "Expected a string for FriendlyDeviceName")
        if req.get("AccessToken") is not None:
            user = self.users[self._verify_access_token(req["AccessToken"])]
            if user["pending_totp_secret"] is None:
                raise invalid_parameter("No software token is associated: call AssociateSoftwareToken first")
            if not totp_matches(user["pending_totp_secret"], code):
                raise CognitoError("EnableSoftwareTokenMFAException", "Code mismatch")
            user.update(totp_secret=user["pending_totp_secret"], pending_totp_secret=None)
            return {"Status": "SUCCESS"}
        state = self._use_session(req.get("Session"), "MFA_SETUP", "verify")
        if not totp_matches(state["totp_secret"], code):
            raise CognitoError("EnableSoftwareTokenMFAException", "Code mismatch")
        # Verified means registered: from now on the user signs in with it.
        user = self.users[state["username"]]
        user.update(totp_secret=state["totp_secret"], mfa_setup_required=False)
        self._set_mfa(user, ["SOFTWARE_TOKEN_MFA"], None)
        return {"Status": "SUCCESS", "Session": self._new_session(state["username"], "MFA_SETUP", "respond",
                                                                  device_key=state.get("device_key"))}

    # ------------------------------------------------------ refresh tokens and sign-out
    def get_tokens_from_refresh_token(self, req: dict) -> dict:
        if not self.config["get_tokens_from_refresh_token"]:
            raise moto_unimplemented()
        token = self._require(req, "RefreshToken", "ClientId")[0]
        self._check_client(req)
        self._check_client_secret(req.get("ClientSecret"), "NotAuthorizedException")
        record = self._refresh_record(token)
        self._check_refresh_device(record, req.get("DeviceKey"))
        self._check_refresh_alive(record)
        rotate = self.config["rotate_refresh_tokens"]
        if rotate:
            self._rotate_out(record)
        result = self._authentication_result(record["username"], record["auth_time"], refresh=rotate,
                                             family=record["family"], scope=record["scope"],
                                             id_token=record["id_token"], device_key=record.get("device_key"))
        return {"AuthenticationResult": result["AuthenticationResult"]}

    def revoke_token(self, req: dict) -> dict:
        if not self.config["revoke_token"]:
            raise moto_unimplemented()
        token = self._require(req, "Token", "ClientId")[0]
        self._check_client(req)
        # RevokeToken's documented errors have UnauthorizedException, not NotAuthorized.
        self._check_client_secret(req.get("ClientSecret"), "UnauthorizedException")
        record = self.refresh_tokens.get(token)
        if record is None:
            if self._is_jwt(token):  # an access or ID token: only refresh tokens can be revoked
                raise CognitoError("UnsupportedTokenTypeException", "Unsupported token type")
            return {}  # Cognito does not say whether it knew the token
        if record["client_id"] != self.config["client_id"]:
            raise CognitoError("UnsupportedTokenTypeException", "The token was issued to another client")
        self._revoke_family(record["family"])
        return {}

    def global_sign_out(self, req: dict) -> dict:
        access_token = self._require(req, "AccessToken")[0]
        self._sign_out(self._verify_access_token(access_token))
        return {}

    def _refresh_record(self, token: str) -> dict:
        record = self.refresh_tokens.get(token)
        if record is None or record["client_id"] != self.config["client_id"]:
            raise CognitoError("NotAuthorizedException", "Invalid Refresh Token")
        return record

    def _refresh_problem(self, record: dict):
        """Why a known refresh token no longer works, or None if it does."""
        if record["revoked"] or record["username"] not in self.users:
            return not_authorized("Refresh Token has been revoked")
        if time.time() >= record["expires_at"]:
            return not_authorized("Refresh Token has expired")
        rotated_at = record["rotated_at"]
        if rotated_at is not None and time.time() >= rotated_at + self.config["rotation_grace_seconds"]:
            if self.config["reuse_detection"]:
                return CognitoError("RefreshTokenReuseException", "Refresh token has already been used")
            return not_authorized("Refresh Token has been revoked")
        return None

    def _check_refresh_alive(self, record: dict) -> None:
        problem = self._refresh_problem(record)
        if problem is not None:
            raise problem

    @staticmethod
    def _rotate_out(record: dict) -> None:
        # The grace period runs from the first rotation: a retry inside it
        # gets tokens again but does not extend the old token's life.
        if record["rotated_at"] is None:
            record["rotated_at"] = time.time()

    def _revoke_family(self, family: str) -> None:
        for record in self.refresh_tokens.values():
            if record["family"] == family:
                record["revoked"] = True
        self.revoked_access.update(jti for jti, origin in self.access_tokens.items() if origin["family"] == family)

    def _sign_out(self, username: str) -> int:
        """GlobalSignOut: every refresh and access token of the user dies. The
        count is of refresh tokens that still worked."""
        revoked = 0
        for record in self.refresh_tokens.values():
            if record["username"] == username:
                revoked += self._refresh_problem(record) is None
                record["revoked"] = True
        self.revoked_access.update(jti for jti, origin in self.access_tokens.items()
                                   if origin["username"] == username)
        return revoked

    @staticmethod
    def _is_jwt(token: str) -> bool:
        parts = token.split(".")
        try:
            return len(parts) == 3 and isinstance(json.loads(b64url_decode(parts[0])), dict)
        except (ValueError, binascii.Error):
            return False

    # ------------------------------------------------------ remembered devices (config device_tracking)
    # A device is issued at the end of a sign-in (NewDeviceMetadata), exists
    # for the sign-in actions and the device actions only once confirmed, and
    # is deleted when forgotten. It belongs to the user as it was (its sub):
    # replacing a user leaves its devices behind, as it does its sessions.
    def _device_key_given(self, given: dict):
        """The DEVICE_KEY a sign-in step carries, or None: also when the pool
        tracks no devices, which ignores it."""
        key = given.get("DEVICE_KEY")
        if not self.config["device_tracking"] or key is None:
            return None
        if not isinstance(key, str) or not key:
            raise invalid_parameter("DEVICE_KEY must be a non-empty string")
        return key

    def _devices_of(self, username: str, confirmed_only: bool = True) -> list:
        """(key, device) of the user's devices, oldest first."""
        sub = self.users[username]["sub"]
        return [(key, device) for key, device in self.devices.items()
                if device["username"] == username and device["sub"] == sub
                and (device["confirmed"] or not confirmed_only)]

    def _owned_device(self, username: str, key) -> dict:
        """The user's device `key`, confirmed or not, else Cognito's ResourceNotFoundException."""
        device = self.devices.get(key) if isinstance(key, str) else None
        if device is None or device["username"] != username or device["sub"] != self.users[username]["sub"]:
            raise CognitoError("ResourceNotFoundException", DEVICE_NOT_FOUND,
                               detail="no such device of this user (never issued to it, or forgotten)")
        return device

    def _user_device(self, username: str, key) -> dict:
        """The user's confirmed device `key`, else Cognito's ResourceNotFoundException."""
        device = self._owned_device(username, key)
        if not device["confirmed"]:
            # The stricter reading: until ConfirmDevice the key names no device.
            raise CognitoError("ResourceNotFoundException", DEVICE_NOT_FOUND,
                               detail="the device was issued but never confirmed (ConfirmDevice)")
        return device

    def _issue_device(self, username: str) -> str:
        """A new, unconfirmed device for the user: what NewDeviceMetadata names."""
        key = f"{self.config['pool_id'].split('_', 1)[0]}_{uuid.uuid4()}"
        self.devices[key] = {
            "username": username, "sub": self.users[username]["sub"],
            "group_key": "-" + "".join(secrets.choice(ALNUM) for _ in range(8)),
            "confirmed": False, "remembered": False,
            "verifier": None,    # int, from ConfirmDevice's PasswordVerifier
            "salt": None,        # the SALT text DEVICE_PASSWORD_VERIFIER shows
            "name": None, "created": None, "modified": None,
            "last_authenticated": time.time(),  # the sign-in that brought it
        }
        return key

    def _sign_in_tokens(self, username: str, device_key=None) -> dict:
        """The tokens that end a sign-in (never a refresh). With device tracking
        they are bound to the device the sign-in used, or to a new one the
        answer names in NewDeviceMetadata."""
        if not self.config["device_tracking"]:
            return self._authentication_result(username, auth_time=None, refresh=True)
        if device_key is not None:
            self._user_device(username, device_key)["last_authenticated"] = time.time()
            return self._authentication_result(username, auth_time=None, refresh=True, device_key=device_key)
        device_key = self._issue_device(username)
        answer = self._authentication_result(username, auth_time=None, refresh=True, device_key=device_key)
        answer["AuthenticationResult"]["NewDeviceMetadata"] = {
            "DeviceKey": device_key, "DeviceGroupKey": self.devices[device_key]["group_key"]}
        return answer

    def _refresh_device_problem(self, record: dict, given):
        """Why a refresh token bound to a device may not be used with `given`
        (the DEVICE_KEY sent), or None. Cognito says only "Invalid Refresh Token"."""
        bound = record.get("device_key")
        if bound is None:
            return None  # a token from before tracking, or from managed login: a DEVICE_KEY is ignored
        if given is None:
            why = "the refresh token is bound to a device and no DEVICE_KEY was sent"
        elif given != bound:
            why = "DEVICE_KEY is not the device the refresh token is bound to"
        elif bound not in self.devices:
            why = "the refresh token's device has been forgotten"
        elif not self.devices[bound]["confirmed"]:
            why = "the refresh token's device was never confirmed (ConfirmDevice)"
        else:
            return None
        return CognitoError("NotAuthorizedException", "Invalid Refresh Token", detail=why)

    def _check_refresh_device(self, record: dict, given) -> None:
        problem = self._refresh_device_problem(record, given)
        if problem is not None:
            raise problem

    def confirm_device(self, req: dict) -> dict:
        access_token, key = self._require(req, "AccessToken", "DeviceKey")
        device = self._owned_device(self._verify_access_token(access_token), key)
        name = req.get("DeviceName")
        if name is not None and not (isinstance(name, str) and 1 <= len(name) <= 1024):
            raise invalid_parameter("DeviceName must be a string of 1 to 1024 characters")
        if device["confirmed"]:
            # Stricter than not knowing: a second ConfirmDevice would let any
            # access token of the user replace the device's secret.
            raise invalid_parameter("Device has already been confirmed.")
        verifier, salt = self._device_secret(req.get("DeviceSecretVerifierConfig"))
        now = time.time()
        device.update(verifier=verifier, salt=salt, name=name or key, confirmed=True, created=now, modified=now,
                      remembered=self.config["device_tracking"] == "always")
        return {"UserConfirmationNecessary": not device["remembered"]}

    @staticmethod
    def _device_secret(config) -> tuple:
        """(verifier, SALT text) of a DeviceSecretVerifierConfig. Its members are
        base64 of padHex bytes; they are read as Java's BigInteger reads bytes
        (two's complement), the reading Cognito's negative SALTs point to."""
        if not isinstance(config, dict):
            raise invalid_parameter("DeviceSecretVerifierConfig (PasswordVerifier and Salt) is required")
        numbers = []
        for member in ("PasswordVerifier", "Salt"):
            text = config.get(member)
            if not isinstance(text, str) or not text:
                raise invalid_parameter(f"DeviceSecretVerifierConfig.{member} is required")
            try:
                raw = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                raise invalid_parameter(f"DeviceSecretVerifierConfig.{member} is not base64") from None
            if not raw:
                raise invalid_parameter(f"DeviceSecretVerifierConfig.{member} is empty")
            numbers.append(int.from_bytes(raw, "big", signed=True))
        verifier, salt = numbers
        if not 0 < verifier < SRP_N:
            raise invalid_parameter("DeviceSecretVerifierConfig.PasswordVerifier is not a number in 1..N-1 "
                                    "(padHex bytes of g^x mod N)")
        # Shown as the user's SALT is: a number in hex, no leading zeros, "-" if negative.
        return verifier, format(salt, "x")

    def list_devices(self, req: dict) -> dict:
        username = self._verify_access_token(self._require(req, "AccessToken")[0])
        limit = req.get("Limit", DEVICE_PAGE_DEFAULT)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= DEVICE_PAGE_MAX:
            raise invalid_parameter(f"Limit must be a number from 1 to {DEVICE_PAGE_MAX}")
        offset, token = 0, req.get("PaginationToken")
        if token is not None:
            page = self.device_pages.get(token) if isinstance(token, str) else None
            if page is None or page["username"] != username or page["sub"] != self.users[username]["sub"]:
                raise invalid_parameter("Invalid pagination token.")
            offset = page["offset"]
        devices = self._devices_of(username)
        answer = {"Devices": [self._device_type(key, device) for key, device in devices[offset:offset + limit]]}
        if offset + limit < len(devices):
            token = base64.b64encode(secrets.token_bytes(48)).decode("ascii")
            self.device_pages[token] = {"username": username, "sub": self.users[username]["sub"],
                                        "offset": offset + limit}
            answer["PaginationToken"] = token
        return answer

    @staticmethod
    def _device_type(key: str, device: dict) -> dict:
        """A DeviceType as ListDevices answers it."""
        return {"DeviceKey": key, "DeviceAttributes": [
            {"Name": "device_status", "Value": "valid"},
            {"Name": "device_name", "Value": device["name"]},
            {"Name": "dev:device_remembered_status",
             "Value": "remembered" if device["remembered"] else "not_remembered"},
            {"Name": "last_ip_used", "Value": DEVICE_IP}],
            "DeviceCreateDate": epoch_millis(device["created"]),
            "DeviceLastModifiedDate": epoch_millis(device["modified"]),
            "DeviceLastAuthenticatedDate": epoch_millis(device["last_authenticated"])}

    def update_device_status(self, req: dict) -> dict:
        access_token, key = self._require(req, "AccessToken", "DeviceKey")
        status = req.get("DeviceRememberedStatus")
        if status not in DEVICE_REMEMBERED_STATUSES:
            raise invalid_parameter(f"1 validation error detected: Value {status!r} at 'deviceRememberedStatus' "
                                    "failed to satisfy constraint: Member must satisfy enum value set: "
                                    "[remembered, not_remembered]")
        device = self._user_device(self._verify_access_token(access_token), key)
        device.update(remembered=status == "remembered", modified=time.time())
        return {}

    def forget_device(self, req: dict) -> dict:
        access_token, key = self._require(req, "AccessToken", "DeviceKey")
        self._user_device(self._verify_access_token(access_token), key)
        del self.devices[key]
        return {}

    # ------------------------------------------------------ account lifecycle
    def sign_up(self, req: dict) -> dict:
        typed, password = self._require(req, "ClientId", "Username", "Password")[1:]
        self._check_password_input(password, "password")
        attributes = self._sign_up_attributes(req.get("UserAttributes"))
        self._check_client(req)
        self._check_secret_hash(typed, req.get("SecretHash"), top_level=True)
        by_email = "email" in (self.config["username_attributes"] or [])
        if by_email:
            if not EMAIL_PATTERN.match(typed):
                raise invalid_parameter("Username should be an email.")
            taken = typed in self.users or any(
                u["attributes"].get("email") == typed for u in self.users.values())
            if taken:
                raise CognitoError("UsernameExistsException", "An account with the given email already exists.")
            attributes["email"] = typed  # the sign-in name *is* the email attribute
        elif typed in self.users:
            raise CognitoError("UsernameExistsException", "User already exists")
        self._check_password_policy(password)
        if "email" in attributes and not EMAIL_PATTERN.match(attributes["email"]):
            raise invalid_parameter("Invalid email address format.")

        sub = str(uuid.uuid4())
        # With email as the username attribute Cognito names the user by its sub;
        # tokens then carry that name, not the address the user typed.
        username = sub if by_email else typed
        confirmed = self.config["auto_confirm"]
        user = self._new_user(password=password, confirmed=confirmed, sub=sub, attributes=attributes,
                              email_verified=confirmed and "email" in attributes)
        self.users[username] = user
        response = {"UserConfirmed": confirmed, "UserSub": sub}
        if not confirmed:
            self._issue_code(user, "signup")
            response.update(self._delivery(user))
        return response

    def confirm_sign_up(self, req: dict) -> dict:
        typed, code = self._require(req, "ClientId", "Username", "ConfirmationCode")[1:]
        self._check_client(req)
        self._check_secret_hash(typed, req.get("SecretHash"), top_level=True)
        user = self._user_or_not_found(typed)
        if user["confirmed"]:
            raise not_authorized("User cannot be confirmed. Current status is CONFIRMED")
        self._use_code(user, "signup", code)
        user["confirmed"] = True
        # The code arrived by email, which proves the address.
        user["email_verified"] = "email" in user["attributes"]
        return {}

    def resend_confirmation_code(self, req: dict) -> dict:
        typed = self._require(req, "ClientId", "Username")[1]
        self._check_client(req)
        self._check_secret_hash(typed, req.get("SecretHash"), top_level=True)
        user = self._user_or_not_found(typed)
        if user["confirmed"]:
            raise invalid_parameter("User is already confirmed.")
        if user["resends"] >= self.config["max_resends"]:
            raise CognitoError("LimitExceededException", "Attempt limit exceeded, please try after some time.")
        user["resends"] += 1
        self._issue_code(user, "signup")
        return self._delivery(user)

    def forgot_password(self, req: dict) -> dict:
        typed = self._require(req, "ClientId", "Username")[1]
        self._check_client(req)
        self._check_secret_hash(typed, req.get("SecretHash"), top_level=True)
        user = self._user_or_not_found(typed)
        # Cognito only sends reset codes to a verified address, and an
        # unconfirmed user has none.
        if not user["confirmed"] or not user["email_verified"]:
            raise invalid_parameter(
                "Cannot reset password for the user as there is no registered/verified email or phone_number")
        self._issue_code(user, "reset")
        return self._delivery(user)

    def confirm_forgot_password(self, req: dict) -> dict:
        typed, code, password = self._require(req, "ClientId", "Username", "ConfirmationCode", "Password")[1:]
        self._check_password_input(password, "password")
        self._check_client(req)
        self._check_secret_hash(typed, req.get("SecretHash"), top_level=True)
        user = self._user_or_not_found(typed)
        self._check_code(user, "reset", code)
        self._check_password_policy(password)
        user["codes"]["reset"] = None  # used up only once the new password is accepted
        self._set_password(user, password)
        return {}

    # ------------------------------------------------------ a user's own MFA settings
    def get_user(self, req: dict) -> dict:
        name = self._verify_access_token(self._require(req, "AccessToken")[0])
        user = self.users[name]
        attributes = [{"Name": "sub", "Value": user["sub"]}] + [{"Name": k, "Value": v} for k, v in user["attributes"].items()]
        if "email" in user["attributes"]:
            attributes.append({"Name": "email_verified", "Value": "true" if user["email_verified"] else "false"})
        answer = {"Username": name, "UserAttributes": attributes}
        # Like Cognito: left out, not empty, for a user without MFA.
        if user["mfa_enabled"]:
            answer["UserMFASettingList"] = list(user["mfa_enabled"])
        if user["mfa_preferred"]:
            answer["PreferredMfaSetting"] = user["mfa_preferred"]
        return answer

    def set_user_mfa_preference(self, req: dict) -> dict:
        user = self.users[self._verify_access_token(self._require(req, "AccessToken")[0])]
        enabled, preferred = list(user["mfa_enabled"]), user["mfa_preferred"]
        for member, method in MFA_SETTINGS_MEMBERS.items():
            settings = req.get(member)
            if settings is None:
                continue
            if not isinstance(settings, dict) or not all(isinstance(settings.get(k, False), bool)
                                                         for k in ("Enabled", "PreferredMfa")):
                raise CognitoError("SerializationException", f"{member} must be {{Enabled, PreferredMfa}} booleans")
            on, first = settings.get("Enabled", False), settings.get("PreferredMfa", False)
            if first and not on:
                raise invalid_parameter(f"{method} cannot be preferred and disabled")
            if on:
                if method == "EMAIL_OTP" and not self.config["email_mfa"]:
                    raise invalid_parameter("Email MFA is not enabled for this user pool")
                delivery = {"SMS_MFA": "phone_number" in user["attributes"],
                            "SOFTWARE_TOKEN_MFA": user["totp_secret"] is not None,
                            "EMAIL_OTP": "email" in user["attributes"]}[method]
                if not delivery:
                    raise invalid_parameter(f"User does not have delivery config set to turn on {method}")
                enabled = enabled + [method] if method not in enabled else enabled
            else:
                enabled = [m for m in enabled if m != method]
            if first:
                preferred = method
            elif preferred == method:
                preferred = None
        self._set_mfa(user, enabled, preferred)
        return {}

    def change_password(self, req: dict) -> dict:
        previous, proposed, access_token = self._require(req, "PreviousPassword", "ProposedPassword", "AccessToken")
        self._check_password_input(previous, "previousPassword")
        self._check_password_input(proposed, "proposedPassword")
        user = self.users[self._verify_access_token(access_token)]
        if user["password"] != previous:
            raise not_authorized("Incorrect username or password.")
        self._check_password_policy(proposed)
        self._set_password(user, proposed)
        return {}

    # ------------------------------------------------------ identity pools (cognito-identity) and STS
    # One identity pool (config identity_pool_id) that trusts the user pool's
    # ID tokens (provider identity_provider, app clients identity_client_ids)
    # and allows no unauthenticated identities; its roles are identity_role_arns.
    def _identity_provider(self) -> str:
        provider = self.config["identity_provider"]
        if provider is not None:
            return provider
        pool_id = self.config["pool_id"]
        region = pool_id.split("_", 1)[0] if "_" in pool_id else "us-east-1"
        return f"cognito-idp.{region}.amazonaws.com/{pool_id}"

    def _identity_client_ids(self) -> list:
        return self.config["identity_client_ids"] or [self.config["client_id"]]

    def _jwt_claims(self, token) -> dict:
        """The claims of a JWT signed with the double's key; JwtProblem otherwise."""
        if not isinstance(token, str):
            raise JwtProblem("malformed")
        parts = token.split(".")
        if len(parts) != 3:
            raise JwtProblem("malformed")
        try:
            header, claims = (json.loads(b64url_decode(p)) for p in parts[:2])
            signature = b64url_decode(parts[2])
        except (ValueError, binascii.Error):
            raise JwtProblem("malformed") from None
        if not isinstance(header, dict) or not isinstance(claims, dict):
            raise JwtProblem("malformed")
        if header.get("alg") != "RS256" or header.get("kid") != KID:
            raise JwtProblem("signature")  # not a key of ours
        try:
            self._key.public_key().verify(signature, f"{parts[0]}.{parts[1]}".encode(),
                                          padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            raise JwtProblem("signature") from None
        return claims

    def _check_logins(self, logins) -> dict:
        """The verified claims of the ID token in a non-empty Logins map, with
        Cognito's NotAuthorizedException for every way it can be wrong."""
        if not isinstance(logins, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                   for k, v in logins.items()):
            raise CognitoError("SerializationException", "Logins must be a map of strings to strings")
        provider = self._identity_provider()
        mismatch = not_authorized("Invalid login token. Issuer doesn't match providerName")
        if any(key != provider for key in logins):
            raise mismatch  # a provider the pool does not have
        try:
            claims = self._jwt_claims(logins[provider])
        except JwtProblem as problem:
            if problem.kind == "signature":
                raise not_authorized("Invalid login token. Couldn't verify signed token.") from None
            raise not_authorized("Invalid login token. Not a valid OpenId Connect identity token.") from None
        if claims.get("iss") != self._issuer():
            raise mismatch
        now, exp = int(time.time()), claims.get("exp")
        if not isinstance(exp, int) or isinstance(exp, bool) or now >= exp:
            raise not_authorized(f"Invalid login token. Token expired: {now} >= {exp}")
        if "aud" not in claims:  # an access token
            raise not_authorized("Invalid login token. Missing a required claim: aud")
        if claims.get("token_use") != "id" or not isinstance(claims.get("sub"), str):
            raise not_authorized("Invalid login token. Not a valid OpenId Connect identity token.")
        if claims["aud"] not in self._identity_client_ids():
            raise not_authorized("Invalid login token. Incorrect token audience.")
        return claims

    def _identity(self, req: dict) -> tuple:
        """(IdentityId, its record) of a request naming an identity of this pool."""
        identity_id = self._require(req, "IdentityId")[0]
        if len(identity_id) > 55 or not IDENTITY_ID_PATTERN.fullmatch(identity_id):
            raise invalid_parameter(f"1 validation error detected: Value '{identity_id}' at 'identityId' failed "
                                    r"to satisfy constraint: Member must satisfy regular expression pattern: "
                                    r"[\w-]+:[0-9a-f-]+")
        record = self.identities.get(identity_id)
        if record is None or record["pool"] != self.config["identity_pool_id"]:
            raise CognitoError("ResourceNotFoundException", f"Identity '{identity_id}' not found.")
        return identity_id, record

    def _identity_logins(self, req: dict, identity_id: str, record: dict) -> dict:
        """The checked Logins of a request about an existing identity: the ID
        token must be valid and be its user's."""
        logins = req.get("Logins")
        if not logins:  # an authenticated identity without its login
            raise not_authorized(f"Access to Identity '{identity_id}' is forbidden.")
        claims = self._check_logins(logins)
        if claims["sub"] != record["sub"]:
            raise not_authorized("Logins don't match. Please include at least one valid login for this "
                                 "identity or identity pool.")
        return claims

    def get_id(self, req: dict) -> dict:
        pool_id = self._require(req, "IdentityPoolId")[0]
        if pool_id != self.config["identity_pool_id"]:
            raise CognitoError("ResourceNotFoundException", f"IdentityPool '{pool_id}' not found.")
        logins = req.get("Logins")
        if not logins:
            raise not_authorized("Unauthenticated access is not supported for this identity pool.")
        claims = self._check_logins(logins)
        key = (pool_id, claims["sub"])
        identity_id = self.identity_by_sub.get(key)
        if identity_id is None:  # the user's first visit: a new identity, theirs for good
            identity_id = f"{pool_id.split(':', 1)[0]}:{uuid.uuid4()}"
            self.identity_by_sub[key] = identity_id
            self.identities[identity_id] = {"pool": pool_id, "sub": claims["sub"],
                                            "username": claims.get("cognito:username")}
        return {"IdentityId": identity_id}

    def get_credentials_for_identity(self, req: dict) -> dict:
        identity_id, record = self._identity(req)
        self._identity_logins(req, identity_id, record)
        roles = self.config["identity_role_arns"]
        role = req.get("CustomRoleArn")
        if role is not None and not isinstance(role, str):
            raise CognitoError("SerializationException", "CustomRoleArn must be a string")
        misconfigured = CognitoError("InvalidIdentityPoolConfigurationException",
                                     "Invalid identity pool configuration. Check assigned IAM roles for this pool.")
        if self.config["identity_pool_misconfigured"] or (role is not None and role not in roles):
            raise misconfigured
        credentials = self._mint_aws_credentials(identity_id, role or roles[0], "GetCredentialsForIdentity",
                                                 self.config["identity_credentials_lifetime"])
        return {"IdentityId": identity_id, "Credentials": {
            "AccessKeyId": credentials["AccessKeyId"], "SecretKey": credentials["SecretAccessKey"],
            "SessionToken": credentials["SessionToken"], "Expiration": epoch(credentials["Expiration"])}}

    def get_open_id_token(self, req: dict) -> dict:
        identity_id, record = self._identity(req)
        if not self.config["identity_allow_classic_flow"]:
            raise invalid_parameter("Basic (classic) flow is not enabled, please use enhanced flow.")
        claims = self._identity_logins(req, identity_id, record)
        provider = self._identity_provider()
        iat = int(time.time()) + self.config["issued_at_offset"]
        token = self._sign({
            "sub": identity_id, "aud": self.config["identity_pool_id"], "iss": OPEN_ID_ISSUER,
            "amr": ["authenticated", provider, f"{provider}:CognitoSignIn:{claims['sub']}"],
            "https://cognito-identity.amazonaws.com/identity-pool-arn":
                f"arn:aws:cognito-identity:{self.config['identity_pool_id'].split(':', 1)[0]}:123456789012:"
                f"identitypool/{self.config['identity_pool_id']}",
            "iat": iat, "exp": iat + self.config["identity_open_id_token_lifetime"]})
        return {"IdentityId": identity_id, "Token": token}

    def _mint_aws_credentials(self, identity_id: str, role_arn: str, action: str, lifetime: int) -> dict:
        """Fresh temporary credentials, remembered by AccessKeyId for GET /_double/aws_credentials."""
        credentials = {
            "AccessKeyId": "ASIA" + random_upper_alnum(16),
            # 40 characters of base64's alphabet, "+" and "/" included, like real secret keys.
            "SecretAccessKey": base64.b64encode(secrets.token_bytes(30)).decode("ascii"),
            # Real session tokens are opaque base64 some hundreds of characters long.
            "SessionToken": "IQoJb3JpZ2luX2VjE" + base64.b64encode(secrets.token_bytes(600)).decode("ascii"),
            "Expiration": int(time.time()) + lifetime,
        }
        self.aws_credentials[credentials["AccessKeyId"]] = {
            "identity_id": identity_id, "role_arn": role_arn, "expiration": credentials["Expiration"],
            "action": action, "secret_access_key": credentials["SecretAccessKey"],
            "session_token": credentials["SessionToken"]}
        return credentials

    # STS: POST / with a form and no X-Amz-Target.
    @staticmethod
    def _accepts_json(headers: dict) -> bool:
        ranges = (part.split(";")[0].strip().lower() for part in headers.get("accept", "").split(","))
        return "application/json" in ranges

    def _sts(self, headers: dict, raw_body: bytes):
        """One STS request (the AWS query protocol). Returns (status, content_type, headers, body)."""
        try:
            form, repeated = parse_form(raw_body)
            problem = StsError("ValidationError", f"{repeated[0]} is given more than once") if repeated else None
        except ValueError:
            form, problem = {}, StsError("ValidationError", "The request body is not a UTF-8 form")
        action = form.get("Action") or None
        key = f"sts:{action or '(no Action)'}"
        self.calls[key] = self.calls.get(key, 0) + 1
        record = {"action": key, "auth_flow": None, "headers": dict(headers), "service": "sts",
                  "params": dict(form)}
        self.requests.append(record)
        failed = self._fail_next(record)
        if failed is not None:
            return failed
        request_id = str(uuid.uuid4())
        as_json = self._accepts_json(headers)
        try:
            if problem is not None:
                raise problem
            if "authorization" in headers:  # AssumeRoleWithWebIdentity is unsigned; a bad signature fails
                raise StsError("InvalidClientTokenId", "The security token included in the request is invalid.", 403)
            if action != "AssumeRoleWithWebIdentity" or form.get("Version") != STS_VERSION:
                raise StsError("InvalidAction", f"Could not find operation {action} for version {form.get('Version')}")
            result = self._assume_role_with_web_identity(form)
        except StsError as err:
            record["status"] = err.status
            kind = "Sender" if err.status < 500 else "Receiver"
            extra = {"x-amzn-RequestId": request_id}
            if as_json:
                return err.status, "application/json", extra, json.dumps(
                    {"Error": {"Code": err.code, "Message": err.message, "Type": kind},
                     "RequestId": request_id}).encode()
            return err.status, "text/xml", extra, (
                f'<ErrorResponse xmlns="{STS_XMLNS}">\n  <Error>\n    <Type>{kind}</Type>\n'
                f"    <Code>{xml_escape(err.code)}</Code>\n    <Message>{xml_escape(err.message)}</Message>\n"
                f"  </Error>\n  <RequestId>{request_id}</RequestId>\n</ErrorResponse>\n").encode()
        record["status"] = 200
        extra = {"x-amzn-RequestId": request_id}
        if as_json:
            result["Credentials"]["Expiration"] = epoch(result["Credentials"]["Expiration"])
            return 200, "application/json", extra, aws_json({"AssumeRoleWithWebIdentityResponse": {
                "AssumeRoleWithWebIdentityResult": result, "ResponseMetadata": {"RequestId": request_id}}})
        c, user = result["Credentials"], result["AssumedRoleUser"]
        e = xml_escape
        return 200, "text/xml", extra, (
            f'<AssumeRoleWithWebIdentityResponse xmlns="{STS_XMLNS}">\n'
            f"  <AssumeRoleWithWebIdentityResult>\n"
            f"    <SubjectFromWebIdentityToken>{e(result['SubjectFromWebIdentityToken'])}</SubjectFromWebIdentityToken>\n"
            f"    <Audience>{e(result['Audience'])}</Audience>\n"
            f"    <AssumedRoleUser>\n      <Arn>{e(user['Arn'])}</Arn>\n"
            f"      <AssumedRoleId>{e(user['AssumedRoleId'])}</AssumedRoleId>\n    </AssumedRoleUser>\n"
            f"    <Credentials>\n      <SessionToken>{e(c['SessionToken'])}</SessionToken>\n"
            f"      <SecretAccessKey>{e(c['SecretAccessKey'])}</SecretAccessKey>\n"
            f"      <Expiration>{iso_utc(c['Expiration'])}</Expiration>\n"
            f"      <AccessKeyId>{e(c['AccessKeyId'])}</AccessKeyId>\n    </Credentials>\n"
            f"    <Provider>{e(result['Provider'])}</Provider>\n"
            f"  </AssumeRoleWithWebIdentityResult>\n"
            f"  <ResponseMetadata>\n    <RequestId>{request_id}</RequestId>\n  </ResponseMetadata>\n"
            f"</AssumeRoleWithWebIdentityResponse>\n").encode()

    def _assume_role_with_web_identity(self, form: dict) -> dict:
        """The result of AssumeRoleWithWebIdentity (Expiration as epoch seconds), or StsError."""
        for name in ("RoleArn", "RoleSessionName", "WebIdentityToken"):
            if not form.get(name):
                member = name[0].lower() + name[1:]
                raise StsError("ValidationError", f"1 validation error detected: Value null at '{member}' "
                                                  "failed to satisfy constraint: Member must not be null")
        role, session, token = form["RoleArn"], form["RoleSessionName"], form["WebIdentityToken"]
        if not ROLE_SESSION_NAME_PATTERN.fullmatch(session):
            raise StsError("ValidationError", f"1 validation error detected: Value '{session}' at 'roleSessionName' "
                                              r"failed to satisfy constraint: Member must satisfy regular expression "
                                              r"pattern: [\w+=,.@-]*")
        duration = ROLE_MAX_SESSION_DURATION
        if "DurationSeconds" in form:
            text = form["DurationSeconds"]
            if not re.fullmatch(r"[0-9]{1,6}", text) or not 900 <= int(text) <= 43200:
                raise StsError("ValidationError", f"1 validation error detected: Value '{text}' at 'durationSeconds' "
                                                  "failed to satisfy constraint: Member must have value greater "
                                                  "than or equal to 900 and less than or equal to 43200")
            duration = int(text)
            if duration > ROLE_MAX_SESSION_DURATION:
                raise StsError("ValidationError",
                               "The requested DurationSeconds exceeds the MaxSessionDuration set for this role.")
        try:
            claims = self._jwt_claims(token)
        except JwtProblem as problem:
            if problem.kind == "malformed":
                raise StsError("InvalidIdentityToken", "The ID Token provided is not a valid JWT. "
                                                       "(You may see this error if you sent an Access Token)") from None
            raise StsError("InvalidIdentityToken", "The web identity token's signature could not be verified.") from None
        iss = claims.get("iss")
        if iss != OPEN_ID_ISSUER:  # e.g. a user pool ID token: only Cognito Identity's issuer is trusted
            raise StsError("InvalidIdentityToken", f"No OpenIDConnect provider found in your account for {iss}")
        now, exp = int(time.time()), claims.get("exp")
        if not isinstance(exp, int) or isinstance(exp, bool) or now >= exp:
            raise StsError("ExpiredTokenException", f"Token expired: current date/time {now} must be before "
                                                    f"the expiration date/time{exp}")
        amr = claims.get("amr") if isinstance(claims.get("amr"), list) else []
        # The roles' trust policy: this identity pool as aud, authenticated identities only.
        denied = StsError("AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity", 403)
        if (role not in self.config["identity_role_arns"] or self.config["identity_pool_misconfigured"]
                or claims.get("aud") != self.config["identity_pool_id"] or "authenticated" not in amr):
            raise denied
        lifetime = min(duration, self.config["identity_credentials_lifetime"])
        credentials = self._mint_aws_credentials(claims.get("sub"), role, "sts:AssumeRoleWithWebIdentity", lifetime)
        role_name = role.rsplit("/", 1)[-1]
        account = role.split(":")[4]
        # A role's id is stable: derived from its ARN.
        role_id = "AROA" + base64.b32encode(hashlib.sha256(role.encode()).digest()).decode("ascii")[:17]
        return {
            "Audience": claims.get("aud"),
            "AssumedRoleUser": {"Arn": f"arn:aws:sts::{account}:assumed-role/{role_name}/{session}",
                                "AssumedRoleId": f"{role_id}:{session}"},
            "Credentials": credentials,
            "PackedPolicySize": None,
            "Provider": OPEN_ID_ISSUER,
            "SourceIdentity": None,
            "SubjectFromWebIdentityToken": claims.get("sub"),
        }

    # ------------------------------------------------------ managed login and OAuth 2.0
    # The pool's domain: the browser's pages (authorize, login, logout) and the
    # app's token and revocation endpoints. Each request is counted and
    # recorded first, like the API's (see the module docstring).
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

    # ------------------------------------------------------ checks shared by actions
    @staticmethod
    def _require(req: dict, *names) -> list:
        """The named members' values, with AWS's validation error for a missing one."""
        values = []
        for name in names:
            value = req.get(name)
            member = name[0].lower() + name[1:]
            if value is None or value == "":
                raise invalid_parameter(f"1 validation error detected: Value null at '{member}' "
                                        "failed to satisfy constraint: Member must not be null")
            if not isinstance(value, str):
                raise CognitoError("SerializationException", f"Expected a string for {name}")
            values.append(value)
        return values

    def _check_client(self, req: dict) -> None:
        if req.get("ClientId") != self.config["client_id"]:
            raise CognitoError("ResourceNotFoundException",
                               f"User pool client {req.get('ClientId')} does not exist.")

    def _check_client_secret(self, given, error: str) -> None:
        """The raw ClientSecret the token actions take instead of a SECRET_HASH."""
        client_id, secret = self.config["client_id"], self.config["client_secret"]
        if secret is None:
            if given is not None:  # a client bug worth catching: it thinks it has a secret
                raise invalid_parameter(f"Client {client_id} is not configured with a secret "
                                        "but ClientSecret was received")
            return
        if not given:
            raise CognitoError(error, f"Client {client_id} is configured with secret but ClientSecret was not received")
        if not isinstance(given, str) or not hmac.compare_digest(given.encode(), secret.encode()):
            raise CognitoError(error, f"Unable to verify client secret for client {client_id}")

    def _pool_name(self) -> str:
        """The part of the pool id after the region, which SRP hashes in."""
        return self.config["pool_id"].split("_", 1)[-1]

    def _check_secret_hash(self, username: str, given, top_level: bool = False) -> None:
        client_id, secret = self.config["client_id"], self.config["client_secret"]
        if secret is None:
            # Cognito rejects a SecretHash member for a client without a secret.
            # Not done for AuthParameters.SECRET_HASH, which the double has
            # always ignored there.
            if top_level and given is not None:
                raise invalid_parameter(f"Client {client_id} is not configured for secret but secret hash was received")
            return
        if not given:
            raise not_authorized(f"Client {client_id} is configured with secret but SECRET_HASH was not received")
        if not isinstance(given, str) or not hmac.compare_digest(given, secret_hash(secret, username, client_id)):
            raise not_authorized(f"Unable to verify secret hash for client {client_id}")

    @staticmethod
    def _check_password_input(password: str, member: str) -> None:
        # The API's input constraint, checked before (and apart from) the pool's policy.
        if len(password) > 256 or not PASSWORD_PATTERN.match(password):
            raise invalid_parameter(f"1 validation error detected: Value at '{member}' failed to satisfy "
                                    "constraint: Member must satisfy regular expression pattern: ^[\\S]+.*[\\S]+$")

    def _check_password_policy(self, password: str) -> None:
        policy = self.config["password_policy"]
        rules = [
            (len(password) >= policy["min_length"], "Password not long enough"),
            (not policy["require_lower"] or any("a" <= c <= "z" for c in password),
             "Password must have lowercase characters"),
            (not policy["require_upper"] or any("A" <= c <= "Z" for c in password),
             "Password must have uppercase characters"),
            (not policy["require_digit"] or any(c.isascii() and c.isdigit() for c in password),
             "Password must have numeric characters"),
            (not policy["require_symbol"] or any(c in SYMBOLS for c in password),
             "Password must have symbol characters"),
        ]
        for ok, reason in rules:  # Cognito reports the first rule broken
            if not ok:
                raise CognitoError("InvalidPasswordException", f"Password did not conform with policy: {reason}")

    @staticmethod
    def _sign_up_attributes(raw) -> dict:
        if raw is None:
            return {}
        if not isinstance(raw, list):
            raise CognitoError("SerializationException", "UserAttributes must be a list")
        attributes = {}
        for item in raw:
            name = item.get("Name") if isinstance(item, dict) else None
            value = item.get("Value") if isinstance(item, dict) else None
            if not isinstance(name, str) or not isinstance(value, str):
                raise CognitoError("SerializationException", "Each user attribute needs a Name and a Value (strings)")
            if name in UNWRITABLE_ATTRIBUTES:
                raise not_authorized("A client attempted to write unauthorized attribute")
            if name not in STANDARD_ATTRIBUTES and not name.startswith("custom:"):
                raise invalid_parameter(f"Attributes did not conform to the schema: {name}: "
                                        "Attribute does not exist in the schema.")
            attributes[name] = value
        return attributes

    # ------------------------------------------------------ users and codes
    def _new_user(self, password, confirmed, sub, attributes, email_verified) -> dict:
        return {
            "password": password,
            # The SRP verifier is derived from password and salt when needed
            # (srp_verifier caches it), so it can never go stale: every
            # password change goes through _set_password, which draws a new salt.
            "srp_salt": new_srp_salt(self.config["srp_salt"]),
            "confirmed": confirmed,
            "sub": sub,
            "attributes": attributes,          # name -> value, as signed up (no sub, no *_verified)
            "email_verified": email_verified,
            "codes": {"signup": None, "reset": None},  # kind -> {"code", "expires_at"} or None
            "resends": 0,                      # ResendConfirmationCode calls so far
            "force_change_password": False,    # sign-in answers NEW_PASSWORD_REQUIRED first
            "mfa": None,                       # one of MFA_MODES, or "email+sms" and so on (_set_mfa)
            "mfa_enabled": [],                 # UserMFASettingList: some of MFA_METHODS
            "mfa_preferred": None,             # PreferredMfaSetting
            "mfa_setup_required": False,       # no method yet, and sign-in must set one up (MFA_SETUP)
            "pending_totp_secret": None,       # AssociateSoftwareToken's, until VerifySoftwareToken
            "totp_secret": None,               # base32, for SOFTWARE_TOKEN_MFA
            "sms_code": None,                  # the last SMS_MFA (or SMS_OTP) code "sent"
            "passkey": False,                  # offers WEB_AUTHN in USER_AUTH (listed only)
            "email_code": None,                # the last email MFA code "sent"
            "identities": None,                # a federated user's `identities` claim (managed login)
        }

    def _set_password(self, user: dict, password: str) -> None:
        user["password"] = password
        user["srp_salt"] = new_srp_salt(self.config["srp_salt"])

    def _find_user(self, typed: str):
        """The canonical username a caller means: the name itself, or (only in a
        pool signing in by email) the user whose email attribute it is."""
        if typed in self.users:
            return typed
        if "email" in (self.config["username_attributes"] or []):
            for name, user in self.users.items():
                if user["attributes"].get("email") == typed:
                    return name
        return None

    def _user_or_not_found(self, typed: str) -> dict:
        username = self._find_user(typed)
        if username is None:
            raise CognitoError("UserNotFoundException", USER_NOT_FOUND)
        return self.users[username]

    def _issue_code(self, user: dict, kind: str) -> None:
        previous = (user["codes"][kind] or {}).get("code")
        code = self.config["fixed_code"] or previous
        while code == previous and not self.config["fixed_code"]:  # a new code must really retire the old one
            code = f"{secrets.randbelow(10 ** 6):06d}"
        user["codes"][kind] = {"code": code, "expires_at": time.time() + self.config["code_lifetime"]}

    def _check_code(self, user: dict, kind: str, given: str) -> None:
        issued = user["codes"][kind]
        if issued is None or not hmac.compare_digest(issued["code"], given):
            raise CognitoError("CodeMismatchException", "Invalid verification code provided, please try again.")
        if time.time() >= issued["expires_at"]:
            raise CognitoError("ExpiredCodeException", "Invalid code provided, please request a code again.")

    def _use_code(self, user: dict, kind: str, given: str) -> None:
        self._check_code(user, kind, given)
        user["codes"][kind] = None

    @staticmethod
    def _delivery(user: dict) -> dict:
        """CodeDeliveryDetails for a code sent to the user; none without an email."""
        email = user["attributes"].get("email")
        if email is None:
            return {}
        return {"CodeDeliveryDetails": {"Destination": mask_email(email), "DeliveryMedium": "EMAIL",
                                        "AttributeName": "email"}}

    # --------------------------------------------------------------- tokens
    def _authentication_result(self, username: str, auth_time, refresh: bool, family=None,
                               scope: str = API_SCOPE, id_token: bool = True, nonce=None,
                               oauth: bool = False, device_key=None) -> dict:
        """Tokens; a new sign-in (family None) starts a new token family.
        `scope` is what the access token grants (the API's sign-ins: API_SCOPE;
        managed login: what the authorize request was granted) and `id_token`
        whether the token endpoint hands out ID tokens for it (managed login:
        only with openid); a refresh token keeps both for its refreshes.
        `oauth`: for the token endpoint, whose ID tokens carry at_hash (and
        `nonce` when the authorize request had one). `device_key`: the device
        the sign-in is bound to (device tracking), kept by its refresh tokens
        and named in its access tokens' device_key claim, as Cognito's."""
        cfg, user = self.config, self.users[username]
        family = family or str(uuid.uuid4())
        iat = int(time.time()) + cfg["issued_at_offset"]
        auth_time = iat if auth_time is None else auth_time
        exp = iat + cfg["token_lifetime"]
        iss = self._issuer()
        access = {"sub": user["sub"], "iss": iss, "client_id": cfg["client_id"],
                  "token_use": "access", "scope": scope,
                  "auth_time": auth_time, "iat": iat, "exp": exp,
                  "jti": str(uuid.uuid4()), "username": username}
        if device_key is not None:
            access["device_key"] = device_key
        self.access_tokens[access["jti"]] = {"username": username, "family": family}
        id_claims = {"sub": user["sub"], "aud": cfg["client_id"], "iss": iss,
                     "token_use": "id", "cognito:username": username,
                     "auth_time": auth_time, "iat": iat, "exp": exp, "jti": str(uuid.uuid4())}
        if user["identities"] is not None:
            # A federated user: Cognito puts it in the group "<pool id>_<provider>".
            groups = [f"{cfg['pool_id']}_{identity['providerName']}" for identity in user["identities"]]
            access["cognito:groups"] = id_claims["cognito:groups"] = groups
            id_claims["identities"] = copy.deepcopy(user["identities"])
        if nonce is not None:
            id_claims["nonce"] = nonce
        # Attributes go into the ID token as Cognito does; they cannot clash
        # with the claims above (sign-up and the schema keep such names out).
        for name, value in user["attributes"].items():
            id_claims.setdefault(name, value)
        if "email" in user["attributes"]:
            # Real pools only carry email_verified alongside an email attribute.
            id_claims["email_verified"] = user["email_verified"]
        access_token = self._sign(access)
        if oauth:
            # OIDC's at_hash: the left half of SHA-256 over the access token, base64url.
            id_claims["at_hash"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest()[:16])
        result = {"AccessToken": access_token, "IdToken": self._sign(id_claims),
                  "ExpiresIn": cfg["token_lifetime"], "TokenType": "Bearer"}
        if refresh:
            token = f"{uuid.uuid4()}.{secrets.token_hex(32)}"
            self.refresh_tokens[token] = {"username": username, "client_id": cfg["client_id"],
                                          "auth_time": auth_time, "revoked": False,
                                          "family": family, "rotated_at": None,
                                          "scope": scope, "id_token": id_token, "device_key": device_key,
                                          # Lifetimes apply to tokens issued after a change, as in Cognito.
                                          "expires_at": time.time() + cfg["refresh_token_lifetime"]}
            result["RefreshToken"] = token
        return {"AuthenticationResult": result, "ChallengeParameters": {}}

    def _issuer(self) -> str:
        return f"{self.base_url}{self.config['pool_id']}"

    def _sign(self, claims: dict) -> str:
        header = {"alg": "RS256", "kid": KID, "typ": "JWT"}
        signing_input = ".".join(b64url(json.dumps(part, separators=(",", ":")).encode())
                                 for part in (header, claims))
        signature = self._key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{b64url(signature)}"

    def _verify_access_token(self, token: str) -> str:
        """The canonical username of a live access token this pool issued."""
        invalid = not_authorized("Invalid Access Token")
        parts = token.split(".")
        if len(parts) != 3:
            raise invalid
        try:
            header, claims = (json.loads(b64url_decode(p)) for p in parts[:2])
            signature = b64url_decode(parts[2])
        except (ValueError, binascii.Error):
            raise invalid from None
        if not isinstance(header, dict) or header.get("alg") != "RS256" or header.get("kid") != KID:
            raise invalid
        try:
            self._key.public_key().verify(signature, f"{parts[0]}.{parts[1]}".encode(),
                                          padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            raise invalid from None
        if not isinstance(claims, dict) or claims.get("token_use") != "access" or claims.get("iss") != self._issuer():
            raise invalid  # an ID token, or one from another pool
        exp = claims.get("exp")
        if not isinstance(exp, int) or time.time() >= exp:
            raise not_authorized("Access Token has expired")
        username = claims.get("username")
        user = self.users.get(username)
        # A replaced user (new sub) is a deleted user: its tokens are dead too.
        if claims.get("jti") in self.revoked_access or user is None or user["sub"] != claims.get("sub"):
            raise not_authorized("Access Token has been revoked")
        return username


class Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keep-alive like the real endpoint; every reply sets Content-Length.
    protocol_version = "HTTP/1.1"
    server_version = "CognitoDouble/1"

    def do_POST(self):
        double, body = self.server.double, read_body(self)
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.path == "/":
            self._send(*double.handle(headers, body))
            return
        # The managed login domain's POSTs: the sign-in form, the app's token and revocation calls.
        oauth = {"/login": double.oauth_login, "/oauth2/token": double.oauth_token,
                 "/oauth2/revoke": double.oauth_revoke}
        if urlsplit(self.path).path in oauth:
            self._send(*oauth[urlsplit(self.path).path](headers, body))
            return
        admin = {"/_double/reset": lambda _: double.reset(),
                 "/_double/config": double.configure,
                 "/_double/users": double.put_user,
                 "/_double/revoke": double.revoke,
                 "/_double/expire_codes": double.expire_codes,
                 "/_double/forget_device": double.forget_device_admin}
        if self.path not in admin:
            return self._json(404, {"error": f"no route POST {self.path}"})
        self._admin(lambda: admin[self.path](self._object(body)))

    def do_GET(self):
        double = self.server.double
        with double.lock:
            jwks_path = f"/{double.config['pool_id']}/.well-known/jwks.json"
            config = copy.deepcopy(double.config)
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if url.path == "/_double/stats":
            self._json(200, double.stats())
        elif url.path == "/_double/config":
            self._json(200, config)
        elif url.path == "/_double/users":
            self._admin(lambda: double.user_info(query.get("username")))
        elif url.path == "/_double/codes":
            self._admin(lambda: double.codes(query.get("username")))
        elif url.path == "/_double/devices":
            self._admin(lambda: double.devices_info(query.get("username")))
        elif url.path == "/_double/last_authorize":
            self._admin(double.last_authorize_request)
        elif url.path == "/_double/aws_credentials":
            self._admin(lambda: double.aws_credentials_info(query.get("access_key_id")))
        elif url.path == jwks_path:
            self._json(200, double.jwks())
        elif url.path in ("/oauth2/authorize", "/logout"):
            headers = {k.lower(): v for k, v in self.headers.items()}
            page = double.oauth_authorize if url.path == "/oauth2/authorize" else double.oauth_logout
            self._send(*page(headers, url.query))
        else:
            self._json(404, {"error": f"no route GET {self.path}"})

    def _admin(self, call) -> None:
        try:
            self._json(200, call())
        except LookupError as err:
            self._json(404, {"error": str(err)})
        except (ValueError, TypeError) as err:
            self._json(400, {"error": str(err)})

    @staticmethod
    def _object(body: bytes) -> dict:
        payload = json.loads(body or b"{}")
        if not isinstance(payload, dict):
            raise ValueError("body must be a JSON object")
        return payload

    def _json(self, status: int, obj) -> None:
        self._send(status, "application/json", {}, json.dumps(obj).encode())

    def _send(self, status: int, content_type, headers: dict, body: bytes) -> None:
        self.send_response(status)
        if content_type is not None:  # None: an empty body of no type (a redirect, a revocation)
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, str(value))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        if VERBOSE:
            sys.stderr.write("cognito-double: " + (format % args) + "\n")


class DoubleServer(QuietServer):
    verbose = VERBOSE


def make_server(host: str = "127.0.0.1", port: int = 0):
    server = DoubleServer((host, port), Handler)
    base_url = f"http://{host}:{server.server_address[1]}/"
    server.double = CognitoDouble(base_url)
    return server, base_url


def start_double(host: str = "127.0.0.1", port: int = 0):
    """Serve on a background thread; stop with server.shutdown(); server.server_close()."""
    server, base_url = make_server(host, port)
    serve_in_background(server, "cognito-double")
    return server, base_url


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args(argv)
    return run_until_signalled(lambda: start_double(args.host, args.port))


if __name__ == "__main__":
    sys.exit(main())
