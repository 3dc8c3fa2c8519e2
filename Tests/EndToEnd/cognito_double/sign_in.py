"""Sign-in: InitiateAuth and its auth flows.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import base64
import hmac
import re
import secrets

from .constants import FIRST_AUTH_FACTORS, INCORRECT
from .crypto import SECRET_BLOCK_BYTES, SRP_G, SRP_K, SRP_N, srp_scrambler, srp_verifier
from .errors import CognitoError, incorrect, invalid_parameter
from .wire import mask_phone


class SignIn:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

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
        if preferred in available:
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
               "SMS_OTP": "phone_number" in user["attributes"], "WEB_AUTHN": self._offers_passkey(username)}
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
            return self._web_authn_challenge(username, device_key)
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
