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
    /// GlobalSignOut or RevokeToken failed (`cause`, in words); the
    /// `removed` items were deleted from `store` anyway.
    case remoteSignOutFailed(removed: Int, store: String, cause: String)
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
        case .cognito(let error, let operation): return AuthError.reading(error, operation).category
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
        case .remoteSignOutFailed(let removed, let store, let cause):
            return Explanation(SessionWords.revocationFailed(removed: removed, from: store, cause: cause))
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
            return AuthError.reading(error, operation).explanation
        }
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
