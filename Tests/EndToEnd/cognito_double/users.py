"""Users and codes: finding and making users, sending codes.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import hmac
import secrets
import time

from .constants import USER_NOT_FOUND
from .crypto import new_srp_salt
from .errors import CognitoError
from .wire import mask_email


class UsersAndCodes:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

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
            "passkey": False,                  # offers WEB_AUTHN without a registered passkey (one elsewhere)
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
