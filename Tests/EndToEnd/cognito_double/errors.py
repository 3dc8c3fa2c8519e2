"""The errors the double answers with: Cognito's JSON errors, raw replies
(moto's HTML page), OAuth 2.0 and STS errors."""
from .constants import INCORRECT, MOTO_500_BODY


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
