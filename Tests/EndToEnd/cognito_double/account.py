"""The account lifecycle: sign-up, confirmation, password reset and change,
GetUser.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import uuid

from .constants import EMAIL_PATTERN
from .errors import CognitoError, invalid_parameter, not_authorized


class AccountLifecycle:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

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
