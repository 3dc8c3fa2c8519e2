"""CognitoDouble: all state of the fake pool, and the dispatch tables; its
methods come from one mixin per part of the API (see the modules named
below). README.md describes what the double does."""
import threading

from cryptography.hazmat.primitives.asymmetric import rsa

from .account import AccountLifecycle
from .admin import AdminApi
from .challenges import SignInChallenges
from .checks import SharedChecks
from .constants import EMAIL_MFA_CHALLENGES
from .devices import RememberedDevices
from .endpoint import CognitoEndpoint
from .identity import IdentityPools
from .managed_login import ManagedLogin
from .mfa_settings import MfaSettings
from .refresh import RefreshAndSignOut
from .sign_in import SignIn
from .tokens import Tokens
from .users import UsersAndCodes
from .webauthn import Passkeys


class CognitoDouble(AdminApi, CognitoEndpoint, SignIn, SignInChallenges, RefreshAndSignOut, RememberedDevices,
                    Passkeys, AccountLifecycle, MfaSettings, IdentityPools, ManagedLogin, SharedChecks,
                    UsersAndCodes, Tokens):
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
            "StartWebAuthnRegistration": self.start_web_authn_registration,
            "CompleteWebAuthnRegistration": self.complete_web_authn_registration,
            "ListWebAuthnCredentials": self.list_web_authn_credentials,
            "DeleteWebAuthnCredential": self.delete_web_authn_credential,
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
            "WEB_AUTHN": (self._answer_web_authn, ("CREDENTIAL",)),
            "CUSTOM_CHALLENGE": (self._answer_custom_challenge, ("ANSWER",)),
            "SELECT_MFA_TYPE": (self._answer_select_mfa_type, ("ANSWER",)),
            "MFA_SETUP": (self._answer_mfa_setup, ()),
            "DEVICE_SRP_AUTH": (self._answer_device_srp_auth, ("DEVICE_KEY", "SRP_A")),
            "DEVICE_PASSWORD_VERIFIER": (self._answer_device_password_verifier,
                                         ("PASSWORD_CLAIM_SECRET_BLOCK", "PASSWORD_CLAIM_SIGNATURE", "TIMESTAMP",
                                          "DEVICE_KEY")),
        }
        self.reset()
