/// Failures of signing in, refreshing, handing out tokens and the account
/// calls, worded for the command that was running.
public enum AuthError: CogCredFailure, Equatable {
    /// No refresh token is stored for the profile.
    case notSignedIn(profile: String)
    /// Cognito refused or failed a call; `operation` says which, for the wording.
    case cognito(CognitoError, operation: AuthOperation)
    /// Cognito wants a challenge answered that this build cannot answer.
    case unsupportedChallenge(String)
    /// A challenge needs input, and there is neither a terminal nor the flag that gives it.
    case challengeNeedsInput(challenge: String, flag: String)
    /// Setting a new password also asks for user attributes cog-cred does not collect.
    case requiredAttributes([String])
    /// GlobalSignOut or RevokeToken failed; the local items were deleted anyway.
    case remoteSignOutFailed(CognitoError)
    /// `status --verify` found a token that does not check out.
    case verificationFailed(String)
    /// Cognito returned a token that cannot be decoded.
    case malformedToken(SecretKind)
    /// Even a freshly refreshed token is already expired: the clocks disagree.
    case freshTokenExpired(SecretKind)
    /// An ID token was asked of a machine profile (client credentials), which has none.
    case noIDToken(profile: String)
    /// The ID token of a browser sign-in does not carry the request's nonce.
    case nonceMismatch
    /// The ID token of a browser sign-in fails one of OpenID Connect's
    /// checks (issuer, audience, token_use, expiry): the named check and what was found.
    case idTokenRejected(check: String, found: String)
    /// The browser's answer carries another sign-in's `state`.
    case stateMismatch
    /// No answer from the browser within the time allowed.
    case browserTimedOut(seconds: Int)
    /// `devices forget` without a key, and this machine is no device of the user's.
    case noDevice(profile: String)

    public var category: FailureCategory {
        switch self {
        case .notSignedIn, .unsupportedChallenge, .challengeNeedsInput, .requiredAttributes, .verificationFailed:
            return .notAuthenticated
        case .noIDToken, .noDevice: return .usage
        case .nonceMismatch, .idTokenRejected, .stateMismatch, .browserTimedOut: return .notAuthenticated
        case .remoteSignOutFailed: return .temporary
        case .malformedToken, .freshTokenExpired: return .temporary
        case .cognito(let error, let operation): return AuthError.category(of: error, operation)
        }
    }

    public var message: String {
        switch self {
        case .notSignedIn(let profile):
            return "not signed in (profile '\(profile)'); run: cog-cred sign-in\(profileFlag(profile))"
        case .unsupportedChallenge(let name):
            return "Cognito asks for the \(name) challenge, which this version of cog-cred cannot answer; sign in with a client or user that does not require it"
        case .challengeNeedsInput(let challenge, let flag):
            return "Cognito asks for \(challenge), and there is no terminal to ask on; pass \(flag)"
        case .requiredAttributes(let names):
            return "Cognito requires these attributes before the new password can be set: \(names.joined(separator: ", ")); set them in the AWS console or with an administrator"
        case .remoteSignOutFailed(let error):
            return "the tokens were deleted from the Secret Service, but revoking them at Cognito failed (\(error.summary)); they stay valid until they expire"
        case .verificationFailed(let what):
            return "verification failed: \(what)"
        case .malformedToken(let kind):
            return "Cognito returned an \(kind.displayName) that is not a readable JWT; nothing was stored"
        case .freshTokenExpired(let kind):
            return "the \(kind.displayName) Cognito just issued has already expired: check that this machine's clock is right"
        case .noIDToken(let profile):
            return "profile '\(profile)' is a machine (client credentials): it has an access token and no ID token"
        case .nonceMismatch:
            return "the ID token does not carry this sign-in's nonce (it was issued for another request); nothing was stored: sign in again"
        case .idTokenRejected(let check, let found):
            return "the ID token from the managed login fails the \(check) check (\(found.oneLine(limit: 200))); nothing was stored: check the profile's pool, client and domain, and this machine's clock"
        case .stateMismatch:
            return "the browser's answer belongs to another sign-in (its state does not match); nothing was stored: sign in again"
        case .browserTimedOut(let seconds):
            return "no answer from the browser within \(seconds) s; nothing was stored: sign in again (--timeout SECONDS allows longer)"
        case .noDevice(let profile):
            return "this machine is not one of the user's devices (profile '\(profile)'): name the device to forget; cog-cred devices\(profileFlag(profile)) lists them"
        case .cognito(let error, let operation):
            return AuthError.describe(error, operation)
        }
    }

    /// NotAuthorizedException covers both a wrong password and a wrong
    /// client secret; only the message tells them apart.
    static func isSecretHashFailure(_ error: CognitoError) -> Bool {
        guard case .service("NotAuthorizedException", let message, _) = error else { return false }
        let lower = message.lowercased()
        return lower.contains("secret hash") || lower.contains("secret_hash")
    }

    static func category(of error: CognitoError, _ operation: AuthOperation) -> FailureCategory {
        if error.isTemporary { return .temporary }
        if isSecretHashFailure(error) || error.isNotCognito { return .configuration }
        switch (error.code ?? "", operation) {
        case ("NotAuthorizedException", .confirmSignUp): return .dataError
        case ("CodeMismatchException", .signIn), ("EnableSoftwareTokenMFAException", .signIn), ("ExpiredCodeException", .signIn):
            return .notAuthenticated
        case ("NotAuthorizedException", _), ("UserNotFoundException", _), ("UserNotConfirmedException", _),
            ("PasswordResetRequiredException", _):
            return .notAuthenticated
        case ("ResourceNotFoundException", .devices): return .dataError
        case ("ResourceNotFoundException", _), ("InvalidIdentityPoolConfigurationException", _), ("AccessDenied", _):
            return .configuration
        case ("InvalidIdentityToken", _), ("ExpiredTokenException", _): return .notAuthenticated
        case ("InvalidParameterException", _), ("UsernameExistsException", _), ("InvalidPasswordException", _),
            ("CodeMismatchException", _), ("ExpiredCodeException", _), ("AliasExistsException", _):
            return .dataError
        case ("CodeDeliveryFailureException", _): return .temporary
        // The OAuth 2.0 endpoints' codes (RFC 6749 5.2).
        case ("invalid_grant", _), ("access_denied", _): return .notAuthenticated
        case ("invalid_client", _), ("unauthorized_client", _), ("invalid_scope", _), ("unsupported_grant_type", _),
            ("invalid_request", _), ("unsupported_token_type", _), ("unsupported_response_type", _):
            return .configuration
        default: return .other
        }
    }

    static func describe(_ error: CognitoError, _ operation: AuthOperation) -> String {
        if error.isTemporary {
            return "\(error.summary); try again later"
        }
        if case .badResponse(let status, let detail) = error, error.isNotCognito {
            return "this endpoint does not look like Cognito (HTTP \(status), \(detail.oneLine(limit: 120))): check --endpoint-url with cog-cred configure, and AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER and AWS_ENDPOINT_URL"
        }
        let said = "Cognito: \(error.summary)"
        if isSecretHashFailure(error) {
            return "the app client's secret does not match: set it again with cog-cred configure --client-secret-stdin (\(said))"
        }
        let lacksScope = error.summary.lowercased().contains("scope")
        let message: String
        switch (error.code ?? "", operation) {
        case ("NotAuthorizedException", .awsCredentials):
            message = "the identity pool does not accept this user pool's ID token: check that the identity pool's authentication providers name this user pool and app client"
        case ("ResourceNotFoundException", .awsCredentials):
            message = "the identity pool (or the identity in it) does not exist: check --identity-pool-id with cog-cred configure"
        case ("InvalidIdentityPoolConfigurationException", _):
            message = "the identity pool's IAM roles are not set up for it: the role's trust policy must allow cognito-identity.amazonaws.com for this pool"
        case ("AccessDenied", _):
            message = "STS refused to assume the role: check --role-arn and that its trust policy allows this identity pool"
        case ("NotAuthorizedException", .refresh(let profile)):
            message = "the session has expired or was revoked; sign in again: cog-cred sign-in\(profileFlag(profile))"
        case ("NotAuthorizedException", .confirmSignUp):
            message = "the account cannot be confirmed; it may be confirmed already: try cog-cred sign-in"
        case ("NotAuthorizedException", .mfaSettings) where lacksScope, ("NotAuthorizedException", .devices) where lacksScope:
            // A browser sign-in's tokens carry only the scopes it asked for.
            message = "the access token lacks the aws.cognito.signin.user.admin scope \(operation.verb) needs: sign in with the password (not the browser), or add that scope with cog-cred configure --scopes and sign in again"
        case ("NotAuthorizedException", .mfaSettings(let profile)), ("NotAuthorizedException", .devices(let profile)):
            message = "the session is no longer valid; sign in again: cog-cred sign-in\(profileFlag(profile))"
        case ("ResourceNotFoundException", .devices(let profile)):
            message = "you have no such device: cog-cred devices\(profileFlag(profile)) lists them"
        case ("EnableSoftwareTokenMFAException", .mfaSettings), ("CodeMismatchException", .mfaSettings):
            message = "the authenticator's code is incorrect: check the app's clock and run cog-cred mfa enable totp again"
        case ("NotAuthorizedException", .changePassword(let profile)):
            message = error.summary.contains("Access Token")
                ? "the session is no longer valid; sign in again: cog-cred sign-in\(profileFlag(profile))"
                : "the current password is incorrect"
        // Before the password's case below, which would take it: the
        // challenge's Session (3 minutes, one answer) is over.
        case ("NotAuthorizedException", .signIn) where error.summary.lowercased().contains("session"):
            message = "the sign-in session is over (Cognito takes one answer within 3 minutes): sign in again"
        case ("NotAuthorizedException", _):
            message = "incorrect username or password"
        case ("UserNotFoundException", _):
            message = "the user does not exist in this user pool; check the username"
        case ("UserNotConfirmedException", _):
            message = "the account is not confirmed yet; check your email for the code and run cog-cred confirm-sign-up"
        case ("PasswordResetRequiredException", _):
            message = "Cognito requires a password reset for this user: run cog-cred forgot-password"
        case ("ResourceNotFoundException", _):
            message = "the user pool or app client in this profile does not exist; check it with cog-cred configure"
        case ("UsernameExistsException", _):
            message = "an account with this username already exists: sign in, or reset the password with cog-cred forgot-password"
        case ("InvalidPasswordException", _):
            message = "the password does not meet the user pool's password policy"
        case ("CodeMismatchException", .signIn), ("EnableSoftwareTokenMFAException", .signIn):
            message = "the code is incorrect: check it and sign in again"
        case ("CodeMismatchException", _):
            message = "the code is incorrect: check it and try again"
        case ("ExpiredCodeException", .confirmForgotPassword):
            message = "the code has expired: run cog-cred forgot-password again for a new one"
        case ("ExpiredCodeException", _):
            message = "the code has expired: run cog-cred resend-code for a new one"
        case ("InvalidParameterException", _):
            message = "Cognito rejected the request"
        case ("invalid_grant", .refresh(let profile)):
            message = "the session has expired or was revoked; sign in again: cog-cred sign-in\(profileFlag(profile))"
        case ("invalid_grant", _):
            message = "\(operation.verb) was refused"
        case ("access_denied", _):
            message = "the sign-in was cancelled or refused in the browser"
        case ("invalid_client", _):
            message = "the app client or its secret was refused: check --client-id, and set the secret again with cog-cred configure --client-secret-stdin"
        case ("unauthorized_client", _):
            message = "the app client may not use this OAuth flow: allow it in the app client's settings (Allowed OAuth flows)"
        case ("invalid_scope", _):
            message = "a scope was refused: check --scopes against the app client's allowed scopes"
        case ("unsupported_grant_type", _), ("invalid_request", _), ("unsupported_token_type", _), ("unsupported_response_type", _):
            message = "the pool's OAuth endpoint refused the request: check --domain and the app client's OAuth settings"
        default:
            message = "\(operation.verb) failed"
        }
        return "\(message) (\(said))"
    }
}

/// What was being done when Cognito answered with an error.
public enum AuthOperation: Sendable, Equatable {
    case signIn
    case refresh(profile: String)
    case signUp
    case confirmSignUp
    case resendCode
    case forgotPassword
    case confirmForgotPassword
    case changePassword(profile: String)
    case fetchKeys
    case clientCredentials
    case awsCredentials
    case mfaSettings(profile: String)
    case devices(profile: String)

    var verb: String {
        switch self {
        case .signIn: return "sign-in"
        case .refresh: return "refreshing the tokens"
        case .signUp: return "sign-up"
        case .confirmSignUp: return "confirming the sign-up"
        case .resendCode: return "resending the code"
        case .forgotPassword: return "starting the password reset"
        case .confirmForgotPassword: return "resetting the password"
        case .changePassword: return "changing the password"
        case .fetchKeys: return "fetching the pool's signing keys"
        case .clientCredentials: return "getting an access token with the client credentials"
        case .awsCredentials: return "getting AWS credentials from the identity pool"
        case .mfaSettings: return "reading or changing the MFA settings"
        case .devices: return "listing or forgetting devices"
        }
    }
}
