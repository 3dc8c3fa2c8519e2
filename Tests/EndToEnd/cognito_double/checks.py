"""Checks shared by actions.

A part of CognitoDouble: see double.py, and README.md for the behaviour."""
import hmac

from .constants import PASSWORD_PATTERN, STANDARD_ATTRIBUTES, SYMBOLS, UNWRITABLE_ATTRIBUTES
from .crypto import secret_hash
from .errors import CognitoError, invalid_parameter, not_authorized


class SharedChecks:
    """A mixin of CognitoDouble (double.py), whose __init__ sets up the
    state and the lock these methods use."""

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
