"""Identity pools (cognito-identity) and STS AssumeRoleWithWebIdentity.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import base64
import binascii
import hashlib
import json
import re
import secrets
import time
import uuid
from xml.sax.saxutils import escape as xml_escape

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding

from .constants import (IDENTITY_ID_PATTERN, KID, OPEN_ID_ISSUER, ROLE_MAX_SESSION_DURATION,
                        ROLE_SESSION_NAME_PATTERN, STS_VERSION, STS_XMLNS)
from .endpoint import arrival
from .errors import CognitoError, JwtProblem, StsError, invalid_parameter, not_authorized
from .wire import aws_json, b64url_decode, epoch, iso_utc, parse_form, random_upper_alnum


class IdentityPools:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

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
                  "params": dict(form), **arrival(headers)}
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
