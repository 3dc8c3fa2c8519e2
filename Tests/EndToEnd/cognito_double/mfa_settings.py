"""A user's own MFA settings: SetUserMFAPreference and the authenticator.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
from .constants import API_SCOPE, MFA_SETTINGS_MEMBERS
from .errors import CognitoError, invalid_parameter, not_authorized


class MfaSettings:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

    # ------------------------------------------------------ a user's own MFA settings
    def get_user(self, req: dict) -> dict:
        name = self._verify_access_token(self._require(req, "AccessToken")[0], scope=API_SCOPE)
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
