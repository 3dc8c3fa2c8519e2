"""Sign-in challenges (RespondToAuthChallenge), and MFA setup during
sign-in.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import base64
import binascii
import hmac
import json
import secrets
import time

from .constants import (EMAIL_MFA_CHALLENGES, INVALID_SESSION, MFA_METHODS, MODE_METHODS, RETRIED_CHALLENGES,
                        RETRIED_ERRORS, WRONG_CODES_BEFORE_LOCKOUT)
from .crypto import (SRP_TIMESTAMP_SKEW, new_totp_secret, parse_cognito_timestamp, srp_session_key,
                     srp_signature, totp_matches)
from .errors import CognitoError, incorrect, invalid_parameter, not_authorized
from .wire import mask_email, mask_phone


class SignInChallenges:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

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
        state["used"] = True  # from here on the Session is spent: a right answer ends it
        try:
            return answer(state, responses)
        except CognitoError as error:
            self._maybe_take_another(state, name, error)
            raise

    def _maybe_take_another(self, state: dict, challenge: str, error: CognitoError) -> None:
        """After a wrong code or a refused new password, the Session takes
        another answer (RETRIED_CHALLENGES), up to the lockout; any other
        failure spends it."""
        if challenge not in RETRIED_CHALLENGES or error.code not in RETRIED_ERRORS:
            return
        state["wrong"] = state.get("wrong", 0) + 1
        if state["wrong"] > WRONG_CODES_BEFORE_LOCKOUT:
            raise not_authorized("Password attempts exceeded")
        state["used"] = False

    def _answer_password_verifier(self, state: dict, responses: dict) -> dict:
        username = state["username"]
        self._check_srp_proof(state, responses, self._pool_name(), username)
        if not self.users[username]["confirmed"]:
            raise CognitoError("UserNotConfirmedException", "User is not confirmed.")
        device_key = self._session_device_key(state, responses)
        if state.get("then_custom"):
            if device_key is not None:
                self._user_device(username, device_key)  # the password is proven: see _after_password
            return self._custom_round(username, 0, device_key)
        return self._after_password(username, device_key)

    def _session_device_key(self, state: dict, responses: dict):
        """The DEVICE_KEY of a sign-in whose answer ends it: both SDKs send it
        with InitiateAuth and again in the answer; either will do, but not two."""
        device_key, again = state.get("device_key"), self._device_key_given(responses)
        if device_key is not None and again is not None and again != device_key:
            raise invalid_parameter("DEVICE_KEY is not the one InitiateAuth sent")
        return device_key or again

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
            # Verified again with the same Session, as Cognito allows.
            self._maybe_take_another(state, "SOFTWARE_TOKEN_MFA", CognitoError("CodeMismatchException", ""))
            raise CognitoError("EnableSoftwareTokenMFAException", "Code mismatch")
        # Verified means registered: from now on the user signs in with it.
        user = self.users[state["username"]]
        user.update(totp_secret=state["totp_secret"], mfa_setup_required=False)
        self._set_mfa(user, ["SOFTWARE_TOKEN_MFA"], None)
        return {"Status": "SUCCESS", "Session": self._new_session(state["username"], "MFA_SETUP", "respond",
                                                                  device_key=state.get("device_key"))}
