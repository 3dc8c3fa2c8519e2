/// Failures of signing in, refreshing, handing out tokens and the account
/// calls, worded for the command that was running; the step out of one is
/// a `NextStep`, which the executable words.
public enum AuthError: ExplainedFailure, Equatable {
    /// No refresh token is stored for the profile.
    case notSignedIn(profile: String)
    /// Cognito refused or failed a call; `operation` says which, for the wording.
    case cognito(CognitoError, operation: AuthOperation)
    /// Cognito wants a challenge answered that this build cannot answer.
    case unsupportedChallenge(String)
    /// A challenge needs input, and there is neither a terminal nor the option that gives it.
    case challengeNeedsInput(challenge: String, input: ChallengeInput)
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
    /// A passkey sign-in, and Cognito offers this user no passkey (the
    /// user has none): the first factors it offers instead.
    case noPasskey(profile: String, offered: [SignInMethod])

    public var category: FailureCategory {
        switch self {
        case .notSignedIn, .unsupportedChallenge, .challengeNeedsInput, .requiredAttributes, .verificationFailed, .noPasskey:
            return .notAuthenticated
        case .noIDToken, .noDevice: return .usage
        case .nonceMismatch, .idTokenRejected, .stateMismatch, .browserTimedOut: return .notAuthenticated
        case .remoteSignOutFailed: return .temporary
        case .malformedToken, .freshTokenExpired: return .temporary
        case .cognito(let error, let operation): return AuthError.category(of: error, operation)
        }
    }

    public var explanation: Explanation {
        switch self {
        case .notSignedIn(let profile):
            return Explanation("not signed in (profile '\(profile)')", nextStep: .signIn(profile: profile))
        case .unsupportedChallenge(let name):
            return Explanation(
                "Cognito asks for the \(name) challenge, which this version of cog-cred cannot answer; sign in with a client or user that does not require it")
        case .challengeNeedsInput(let challenge, let input):
            return Explanation("Cognito asks for \(challenge), and there is no terminal to ask on", nextStep: .answerWithoutTerminal(input))
        case .requiredAttributes(let names):
            return Explanation(
                "Cognito requires these attributes before the new password can be set: \(names.joined(separator: ", ")); set them in the AWS console or with an administrator")
        case .remoteSignOutFailed(let error):
            return Explanation(
                "the tokens were deleted from the Secret Service, but revoking them at Cognito failed (\(error.summary)); they stay valid until they expire")
        case .verificationFailed(let what):
            return Explanation("verification failed: \(what)")
        case .malformedToken(let kind):
            return Explanation("Cognito returned an \(kind.displayName) that is not a readable JWT; nothing was stored")
        case .freshTokenExpired(let kind):
            return Explanation("the \(kind.displayName) Cognito just issued has already expired: check that this machine's clock is right")
        case .noIDToken(let profile):
            return Explanation("profile '\(profile)' is a machine (client credentials): it has an access token and no ID token")
        case .nonceMismatch:
            return Explanation("the ID token does not carry this sign-in's nonce (it was issued for another request); nothing was stored: sign in again")
        case .idTokenRejected(let check, let found):
            return Explanation(
                "the ID token from the managed login fails the \(check) check (\(found.oneLine(limit: 200))); nothing was stored: check the profile's pool, client and domain, and this machine's clock")
        case .stateMismatch:
            return Explanation("the browser's answer belongs to another sign-in (its state does not match); nothing was stored: sign in again")
        case .browserTimedOut(let seconds):
            return Explanation("no answer from the browser within \(seconds) s; nothing was stored: sign in again", nextStep: .waitLongerForBrowser)
        case .noDevice(let profile):
            return Explanation("this machine is not one of the user's devices (profile '\(profile)')", nextStep: .nameDeviceToForget(profile: profile))
        case .noPasskey(let profile, let offered):
            let others = offered.isEmpty ? "" : " (it offers \(offered.map(\.rawValue).joined(separator: ", ")))"
            return Explanation("Cognito offers this user no passkey\(others)", nextStep: .addPasskey(profile: profile))
        case .cognito(let error, let operation):
            return AuthError.explain(error, operation)
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
        if case .noSecretHash(let failure) = error { return failure.category }
        if error.isTemporary { return .temporary }
        if isSecretHashFailure(error) || error.isNotCognito { return .configuration }
        switch (error.code ?? "", operation) {
        case ("NotAuthorizedException", .confirmSignUp): return .dataError
        // A code Cognito refuses, wrong or expired, is a rejected credential
        // in every command (77); one malformed before it is sent is 65.
        case ("CodeMismatchException", _), ("EnableSoftwareTokenMFAException", _), ("ExpiredCodeException", _):
            return .notAuthenticated
        case ("NotAuthorizedException", _), ("UserNotFoundException", _), ("UserNotConfirmedException", _),
            ("PasswordResetRequiredException", _):
            return .notAuthenticated
        case ("ResourceNotFoundException", .devices), ("ResourceNotFoundException", .passkeys): return .dataError
        case ("WebAuthnChallengeNotFoundException", _): return .temporary
        case ("WebAuthnNotEnabledException", _), ("WebAuthnConfigurationMissingException", _), ("WebAuthnRelyingPartyMismatchException", _),
            ("WebAuthnOriginNotAllowedException", _):
            return .configuration
        case ("WebAuthnClientMismatchException", _): return .notAuthenticated
        case ("WebAuthnCredentialNotSupportedException", _): return .dataError
        case ("ResourceNotFoundException", _), ("InvalidIdentityPoolConfigurationException", _), ("AccessDenied", _):
            return .configuration
        case ("InvalidIdentityToken", _), ("ExpiredTokenException", _): return .notAuthenticated
        case ("InvalidParameterException", _), ("UsernameExistsException", _), ("InvalidPasswordException", _),
            ("AliasExistsException", _):
            return .dataError
        case ("CodeDeliveryFailureException", _): return .temporary
        // The OAuth 2.0 endpoints' codes (RFC 6749 5.2).
        case ("invalid_grant", _), ("access_denied", _), ("invalid_token", _): return .notAuthenticated
        case ("invalid_client", _), ("unauthorized_client", _), ("invalid_scope", _), ("unsupported_grant_type", _),
            ("invalid_request", _), ("unsupported_token_type", _), ("unsupported_response_type", _):
            return .configuration
        default: return .other
        }
    }

    static func explain(_ error: CognitoError, _ operation: AuthOperation) -> Explanation {
        if case .transport(let failure) = error, failure.kind == .tls {
            return Explanation(CognitoError.untrustedCertificate, nextStep: .trustPrivateCA, cause: failure.detail.oneLine())
        }
        if error.isTemporary {
            return Explanation("\(error.summary); try again later")
        }
        if case .badResponse(let status, let detail) = error, error.isNotCognito {
            return Explanation("this endpoint does not look like Cognito (HTTP \(status), \(detail.oneLine(limit: 120)))", nextStep: .checkEndpoint)
        }
        let said = "Cognito: \(error.summary)"
        if isSecretHashFailure(error) {
            return Explanation("the app client's secret does not match", nextStep: .storeClientSecretAgain, cause: said)
        }
        let lacksScope = error.summary.lowercased().contains("scope")
        let (problem, step): (String, NextStep?)
        switch (error.code ?? "", operation) {
        case ("NotAuthorizedException", .awsCredentials):
            (problem, step) = ("the identity pool does not accept this user pool's ID token: check that the identity pool's authentication providers name this user pool and app client", nil)
        case ("ResourceNotFoundException", .awsCredentials):
            (problem, step) = ("the identity pool (or the identity in it) does not exist", .checkIdentityPool)
        case ("InvalidIdentityPoolConfigurationException", _):
            (problem, step) = ("the identity pool's IAM roles are not set up for it: the role's trust policy must allow cognito-identity.amazonaws.com for this pool", nil)
        case ("AccessDenied", _):
            (problem, step) = ("STS refused to assume the role", .checkRole)
        case ("NotAuthorizedException", .refresh(let profile)), ("NotAuthorizedException", .checkSession(let profile)),
            ("invalid_token", .checkSession(let profile)):
            (problem, step) = ("the session has expired or was revoked", .signInAgain(profile: profile))
        case ("NotAuthorizedException", .confirmSignUp):
            (problem, step) = ("the account cannot be confirmed; it may be confirmed already", .trySignIn)
        case ("NotAuthorizedException", .mfaSettings) where lacksScope, ("NotAuthorizedException", .devices) where lacksScope,
            ("NotAuthorizedException", .passkeys) where lacksScope:
            // A browser sign-in's tokens carry only the scopes it asked for.
            (problem, step) = ("the access token lacks the aws.cognito.signin.user.admin scope \(operation.verb) needs", .getAdminScope)
        case ("NotAuthorizedException", .mfaSettings(let profile)), ("NotAuthorizedException", .devices(let profile)),
            ("NotAuthorizedException", .passkeys(let profile)):
            (problem, step) = ("the session is no longer valid", .signInAgain(profile: profile))
        case ("ResourceNotFoundException", .devices(let profile)):
            (problem, step) = ("you have no such device", .listDevices(profile: profile))
        case ("ResourceNotFoundException", .passkeys(let profile)):
            (problem, step) = ("you have no passkey with that id", .listPasskeys(profile: profile))
        case ("WebAuthnChallengeNotFoundException", _):
            (problem, step) = ("Cognito's passkey challenge expired before the key answered; try again", nil)
        case ("WebAuthnNotEnabledException", _), ("WebAuthnConfigurationMissingException", _):
            (problem, step) = ("the user pool does not offer passkeys (docs/passkeys.md says what it needs)", nil)
        case ("WebAuthnRelyingPartyMismatchException", _), ("WebAuthnOriginNotAllowedException", _):
            (problem, step) = ("Cognito's passkey relying party is not this profile's", .checkRelyingParty)
        case ("WebAuthnClientMismatchException", _):
            (problem, step) = ("the passkey registration began with another app client's token: sign in again", nil)
        case ("WebAuthnCredentialNotSupportedException", _):
            (problem, step) = ("Cognito does not accept this security key's passkey", nil)
        case ("EnableSoftwareTokenMFAException", .mfaSettings), ("CodeMismatchException", .mfaSettings):
            (problem, step) = ("the authenticator's code is incorrect", .enableTOTPAgain)
        case ("NotAuthorizedException", .changePassword(let profile)):
            (problem, step) = error.summary.contains("Access Token")
                ? ("the session is no longer valid", .signInAgain(profile: profile))
                : ("the current password is incorrect", nil)
        // Before the password's case below, which would take it: the
        // challenge's Session (3 minutes, one answer) is over.
        case ("NotAuthorizedException", .signIn) where error.summary.lowercased().contains("session"):
            (problem, step) = ("the sign-in session is over (Cognito takes one answer within 3 minutes): sign in again", nil)
        case ("NotAuthorizedException", _):
            (problem, step) = ("incorrect username or password", nil)
        case ("UserNotFoundException", _):
            (problem, step) = ("the user does not exist in this user pool; check the username", nil)
        case ("UserNotConfirmedException", _):
            (problem, step) = ("the account is not confirmed yet", .confirmSignUp)
        case ("PasswordResetRequiredException", _):
            (problem, step) = ("Cognito requires a password reset for this user", .resetPassword)
        case ("ResourceNotFoundException", _):
            (problem, step) = ("the user pool or app client in this profile does not exist", .checkProfile)
        case ("UsernameExistsException", _):
            (problem, step) = ("an account with this username already exists", .signInOrResetPassword)
        case ("InvalidPasswordException", _):
            (problem, step) = ("the password does not meet the user pool's password policy", nil)
        case ("CodeMismatchException", .signIn), ("EnableSoftwareTokenMFAException", .signIn):
            (problem, step) = ("the code is incorrect: check it and sign in again", nil)
        case ("CodeMismatchException", _):
            (problem, step) = ("the code is incorrect: check it and try again", nil)
        case ("ExpiredCodeException", .confirmForgotPassword):
            (problem, step) = ("the code has expired", .requestNewCode(forPasswordReset: true))
        case ("ExpiredCodeException", _):
            (problem, step) = ("the code has expired", .requestNewCode(forPasswordReset: false))
        case ("InvalidParameterException", _):
            (problem, step) = ("Cognito rejected the request", nil)
        case ("invalid_grant", .refresh(let profile)):
            (problem, step) = ("the session has expired or was revoked", .signInAgain(profile: profile))
        case ("invalid_grant", _):
            (problem, step) = ("\(operation.verb) was refused", nil)
        case ("access_denied", _):
            (problem, step) = ("the sign-in was cancelled or refused in the browser", nil)
        case ("invalid_client", _):
            (problem, step) = ("the app client or its secret was refused", .checkClientAndSecret)
        case ("unauthorized_client", _):
            (problem, step) = ("the app client may not use this OAuth flow: allow it in the app client's settings (Allowed OAuth flows)", nil)
        case ("invalid_scope", _):
            (problem, step) = ("a scope was refused", .checkScopes)
        case ("unsupported_grant_type", _), ("invalid_request", _), ("unsupported_token_type", _), ("unsupported_response_type", _):
            (problem, step) = ("the pool's OAuth endpoint refused the request", .checkDomain)
        default:
            (problem, step) = ("\(operation.verb) failed", nil)
        }
        return Explanation(problem, nextStep: step, cause: said)
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
    /// Adding, listing or removing passkeys.
    case passkeys(profile: String)
    /// `status` asking Cognito whether the stored session still stands.
    case checkSession(profile: String)

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
        case .passkeys: return "adding, listing or removing passkeys"
        case .checkSession: return "checking the session with Cognito"
        }
    }
}
