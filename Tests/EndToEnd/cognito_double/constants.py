"""The double's constants: protocol names, patterns, messages, limits and
DEFAULT_CONFIG (the keys POST /_double/config takes)."""
import os
import re


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
    # Passkeys (WebAuthn; the pool's WebAuthnConfiguration). The RP id None is the pool's
    # domain, which the double serves: the host of its base URL (real Cognito: the same default).
    "webauthn_rp_id": None,
    "webauthn_user_verification": "preferred",  # WEBAUTHN_USER_VERIFICATIONS; Cognito's default
    "webauthn_configured": True,  # False: no RelyingPartyId and no domain (WebAuthnConfigurationMissingException)
    "webauthn_registration_lifetime": 300,  # seconds a StartWebAuthnRegistration challenge can be completed
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
DEVICE_PAGE_DEFAULT = 10   # ListDevices without a Limit (see README.md)
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

# The challenges whose Session takes another answer after a wrong code or
# a new password the policy refuses, as Cognito's do: AWS's Amplify
# libraries answer again with the same Session after CodeMismatchException
# (amplify-swift's integration tests against real pools: a wrong email or
# SMS one-time code, then the right one; a wrong first authenticator code
# at VerifySoftwareToken, then the right one). The error carries no new
# Session; the old one stays good until it expires or is answered right.
RETRIED_CHALLENGES = ("SOFTWARE_TOKEN_MFA", "SMS_MFA", "SMS_OTP", "NEW_PASSWORD_REQUIRED") + EMAIL_MFA_CHALLENGES
RETRIED_ERRORS = ("CodeMismatchException", "InvalidPasswordException")
# Cognito locks a user out after five wrong MFA codes (exponential
# timeouts, "Password attempts exceeded"): the sixth wrong answer of one
# Session is refused so, and the Session spent.
WRONG_CODES_BEFORE_LOCKOUT = 5
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
# Passkeys (WebAuthn): see webauthn.py and README.md.
WEBAUTHN_USER_VERIFICATIONS = ("preferred", "required")  # WebAuthnConfiguration.UserVerification
# pubKeyCredParams as Cognito offers them: ES256 and RS256 (COSE algorithm numbers), in this order.
WEBAUTHN_ALGORITHMS = (-7, -257)
WEBAUTHN_REGISTRATION_TIMEOUT_MS = 60000  # CredentialCreationOptions.timeout, as Cognito's
WEBAUTHN_PAGE_DEFAULT = 10  # ListWebAuthnCredentials without MaxResults (see README.md)
WEBAUTHN_PAGE_MAX = 20      # the API's maximum MaxResults
# The W3C JSON forms' binary values (Base64URLString): base64url without padding, as amplify-js checks.
BASE64URL_PATTERN = re.compile(r"[A-Za-z0-9_-]*")
# FriendlyCredentialName: Cognito names a passkey itself, by its authenticator (AAGUID);
# the double knows these few, and calls any other a security key.
WEBAUTHN_AAGUID_NAMES = {
    "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4": "Google Password Manager",
    "fbfc3007-154e-4ecc-8c0b-6e020557d7bd": "iCloud Keychain",
    "08987058-cadc-4b81-b6e1-30de50dcbe96": "Windows Hello",
}
WEBAUTHN_DEFAULT_NAME = "Security key"
MOTO_500_BODY = (b"<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n"
                 b"<h1>Internal Server Error</h1>\n<p>The server encountered an internal error and was "
                 b"unable to complete your request. Either the server is overloaded or there is an error "
                 b"in the application.</p>\n")

# Set by the server on every request to POST /: the number of the connection
# it came on (the request records keep it as "connection"); never the client's own.
CONNECTION_HEADER = "x-double-connection"
