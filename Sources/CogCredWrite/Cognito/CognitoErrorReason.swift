// Cognito's error codes and messages read once, here beside the transport,
// into the reasons the use cases tell apart. A code alone does not always
// say what went wrong: NotAuthorizedException is a wrong password, a wrong
// client secret, a spent challenge session and a revoked access token
// alike, and only the message tells them apart. That reading of the
// message happens here and nowhere else; CognitoErrorReasonTests pins it
// with the messages Cognito sends.

extension CognitoError {
    /// Why Cognito (the user pool, the identity pool, STS or the pool's
    /// OAuth 2.0 endpoints) refused a call, read from its code and message.
    /// The error keeps the code and message themselves (`.service`).
    public enum Reason: Sendable, Equatable {
        /// NotAuthorizedException: the call was refused; `Refusal` says what
        /// the message blames.
        case refused(Refusal)
        /// ResourceNotFoundException: the pool, app client, identity,
        /// device or passkey named does not exist.
        case notFound(Missing)
        /// RefreshTokenReuseException: the refresh token was rotated
        /// already (by another process, as a rule).
        case refreshTokenReused
        /// UserNotFoundException.
        case userNotFound
        /// UserNotConfirmedException: the sign-up was never confirmed.
        case userNotConfirmed
        /// PasswordResetRequiredException.
        case passwordResetRequired
        /// A one-time code that is wrong: CodeMismatchException, or
        /// EnableSoftwareTokenMFAException (an authenticator's code that
        /// does not verify).
        case codeMismatch
        /// ExpiredCodeException.
        case codeExpired
        /// UsernameExistsException.
        case usernameExists
        /// InvalidPasswordException: the password policy refuses it.
        case invalidPassword
        /// AliasExistsException: the email or phone is another account's.
        case aliasExists
        /// InvalidParameterException.
        case invalidParameter
        /// CodeDeliveryFailureException: the email or SMS could not be sent.
        case codeDeliveryFailed
        /// Cognito turned the request away before acting on it
        /// (TooManyRequests, LimitExceeded, Throttling): safe to send again.
        case throttled
        /// A fault on Cognito's side (InternalError, ServiceUnavailable,
        /// RequestTimeout): worth trying again later.
        case serviceFault
        /// The service does not offer the action (UnknownOperationException,
        /// an emulator's InvalidAction).
        case unsupportedOperation
        /// WebAuthnChallengeNotFoundException: the passkey challenge expired
        /// before the authenticator answered.
        case passkeyChallengeExpired
        /// WebAuthnNotEnabledException, WebAuthnConfigurationMissingException.
        case passkeysNotOffered
        /// WebAuthnRelyingPartyMismatchException, WebAuthnOriginNotAllowedException.
        case passkeyRelyingPartyMismatch
        /// WebAuthnClientMismatchException: the registration began with
        /// another app client's token.
        case passkeyClientMismatch
        /// WebAuthnCredentialNotSupportedException.
        case passkeyNotSupported
        /// The identity pool: InvalidIdentityPoolConfigurationException (its
        /// roles' trust policies).
        case identityPoolMisconfigured
        /// STS: AccessDenied, the role may not be assumed.
        case roleRefused
        /// STS: InvalidIdentityToken.
        case identityTokenRefused
        /// STS: ExpiredTokenException.
        case identityTokenExpired
        /// An error of the pool's OAuth 2.0 endpoints (RFC 6749 5.2).
        case oauth(OAuthRefusal)
        /// Any other code, as Cognito sent it.
        case other(String)

        /// What a NotAuthorizedException's message blames.
        public enum Refusal: Sendable, Equatable {
            /// SECRET_HASH is wrong or missing: the app client's secret.
            case secretHash
            /// The access token lacks a scope the call needs
            /// (aws.cognito.signin.user.admin, as a rule).
            case missingScope
            /// The access token is revoked, expired or not one.
            case accessToken
            /// The challenge's Session (3 minutes, one answer) is over.
            case challengeSession
            /// Anything else: a wrong password or proof, a revoked or invalid
            /// refresh token, a disabled user. The message says which.
            case credentials
        }

        /// What a ResourceNotFoundException names.
        public enum Missing: Sendable, Equatable {
            /// A device ("Device does not exist.").
            case device
            /// The pool, the app client, an identity, a passkey.
            case resource
        }

        /// The OAuth 2.0 endpoints' codes the use cases tell apart.
        public enum OAuthRefusal: Sendable, Equatable {
            /// invalid_grant: the refresh token or code is refused.
            case invalidGrant
            /// access_denied: the browser sign-in was cancelled or refused.
            case accessDenied
            /// invalid_token (RFC 6750): the access token is refused.
            case invalidToken
            /// invalid_client: the app client or its secret.
            case invalidClient
            /// unauthorized_client: the app client may not use the flow.
            case unauthorizedClient
            /// invalid_scope.
            case invalidScope
            /// invalid_request and the unsupported_* codes: the request is
            /// not one this endpoint takes.
            case unsupportedRequest
        }

        /// Reads Cognito's `code` (its `__type` without any prefix, or the
        /// OAuth endpoint's `error`) and `message`.
        public init(code: String, message: String) {
            if let known = Reason.byCode[code] {
                self = known
                return
            }
            switch code {
            case "NotAuthorizedException": self = .refused(Refusal(message: message))
            case "ResourceNotFoundException":
                self = .notFound(message.lowercased().contains("device") ? .device : .resource)
            default:
                if CognitoError.throttlingCodes.contains(code) {
                    self = .throttled
                } else if CognitoError.temporaryCodes.contains(code) {
                    self = .serviceFault
                } else {
                    self = .other(code)
                }
            }
        }

        /// The codes that are a reason alone, whatever the message.
        static let byCode: [String: Reason] = [
            "RefreshTokenReuseException": .refreshTokenReused,
            "UserNotFoundException": .userNotFound,
            "UserNotConfirmedException": .userNotConfirmed,
            "PasswordResetRequiredException": .passwordResetRequired,
            "CodeMismatchException": .codeMismatch,
            "EnableSoftwareTokenMFAException": .codeMismatch,
            "ExpiredCodeException": .codeExpired,
            "UsernameExistsException": .usernameExists,
            "InvalidPasswordException": .invalidPassword,
            "AliasExistsException": .aliasExists,
            "InvalidParameterException": .invalidParameter,
            "CodeDeliveryFailureException": .codeDeliveryFailed,
            "UnknownOperationException": .unsupportedOperation,
            "InvalidAction": .unsupportedOperation,
            "WebAuthnChallengeNotFoundException": .passkeyChallengeExpired,
            "WebAuthnNotEnabledException": .passkeysNotOffered,
            "WebAuthnConfigurationMissingException": .passkeysNotOffered,
            "WebAuthnRelyingPartyMismatchException": .passkeyRelyingPartyMismatch,
            "WebAuthnOriginNotAllowedException": .passkeyRelyingPartyMismatch,
            "WebAuthnClientMismatchException": .passkeyClientMismatch,
            "WebAuthnCredentialNotSupportedException": .passkeyNotSupported,
            "InvalidIdentityPoolConfigurationException": .identityPoolMisconfigured,
            "AccessDenied": .roleRefused,
            "InvalidIdentityToken": .identityTokenRefused,
            "ExpiredTokenException": .identityTokenExpired,
            "invalid_grant": .oauth(.invalidGrant),
            "access_denied": .oauth(.accessDenied),
            "invalid_token": .oauth(.invalidToken),
            "invalid_client": .oauth(.invalidClient),
            "unauthorized_client": .oauth(.unauthorizedClient),
            "invalid_scope": .oauth(.invalidScope),
            "invalid_request": .oauth(.unsupportedRequest),
            "unsupported_grant_type": .oauth(.unsupportedRequest),
            "unsupported_token_type": .oauth(.unsupportedRequest),
            "unsupported_response_type": .oauth(.unsupportedRequest),
        ]
    }

    /// Why Cognito refused the call, when it answered with an error.
    public var reason: Reason? {
        guard case .service(let code, let message, _) = self else { return nil }
        return Reason(code: code, message: message)
    }

    /// Whatever the call named (a device, an identity, the pool) does not
    /// exist: ResourceNotFoundException.
    public var isNotFound: Bool {
        if case .notFound? = reason { return true }
        return false
    }
}

extension CognitoError.Reason.Refusal {
    /// NotAuthorizedException's one code covers several faults; its message
    /// tells them apart ("Unable to verify secret hash for client …",
    /// "Access Token does not have required scopes", "Access Token has been
    /// revoked", "Invalid session for the user, session is expired.").
    /// Checked in this order: the scope's message names the access token too.
    init(message: String) {
        let lower = message.lowercased()
        if lower.contains("secret hash") || lower.contains("secret_hash") {
            self = .secretHash
        } else if lower.contains("scope") {
            self = .missingScope
        } else if message.contains("Access Token") {
            self = .accessToken
        } else if lower.contains("session") {
            self = .challengeSession
        } else {
            self = .credentials
        }
    }
}
