/// Failures of signing in, refreshing and handing out tokens.
public enum AuthError: CogCredFailure, Equatable {
    /// No refresh token is stored for the profile.
    case notSignedIn(profile: String)
    /// Cognito refused or failed a call; `operation` says which, for the wording.
    case cognito(CognitoError, operation: AuthOperation)
    /// Cognito wants a challenge answered that this build cannot answer.
    case unsupportedChallenge(String)
    /// Cognito returned a token that cannot be decoded.
    case malformedToken(SecretKind)
    /// Even a freshly refreshed token is already expired: the clocks disagree.
    case freshTokenExpired(SecretKind)

    public var category: FailureCategory {
        switch self {
        case .notSignedIn: return .notAuthenticated
        case .unsupportedChallenge: return .notAuthenticated
        case .malformedToken, .freshTokenExpired: return .temporary
        case .cognito(let error, _):
            if error.isTemporary { return .temporary }
            switch error.code ?? "" {
            case "NotAuthorizedException", "UserNotFoundException", "UserNotConfirmedException",
                "PasswordResetRequiredException":
                return .notAuthenticated
            case "ResourceNotFoundException": return .configuration
            case "InvalidParameterException": return .dataError
            default: return .other
            }
        }
    }

    public var message: String {
        switch self {
        case .notSignedIn(let profile):
            return "not signed in (profile '\(profile)'); run: cog-cred sign-in\(AuthError.profileFlag(profile))"
        case .unsupportedChallenge(let name):
            return "Cognito asks for the \(name) challenge, which this version of cog-cred cannot answer; sign in with a client or user that does not require it"
        case .malformedToken(let kind):
            return "Cognito returned an \(kind.displayName) that is not a readable JWT; nothing was stored"
        case .freshTokenExpired(let kind):
            return "the \(kind.displayName) Cognito just issued has already expired: check that this machine's clock is right"
        case .cognito(let error, let operation):
            return AuthError.describe(error, operation)
        }
    }

    static func profileFlag(_ profile: String) -> String {
        profile == "default" ? "" : " --profile \(profile)"
    }

    static func describe(_ error: CognitoError, _ operation: AuthOperation) -> String {
        let said = "Cognito: \(error.summary)"
        if error.isTemporary {
            return "\(error.summary); try again later"
        }
        switch (error.code ?? "", operation) {
        case ("NotAuthorizedException", .refresh(let profile)):
            return "the session has expired or was revoked; sign in again: cog-cred sign-in\(profileFlag(profile)) (\(said))"
        case ("NotAuthorizedException", _):
            return "incorrect username or password (\(said))"
        case ("UserNotFoundException", _):
            return "the user does not exist in this user pool; check the username (\(said))"
        case ("UserNotConfirmedException", _):
            return "the account is not confirmed yet; check your email for the confirmation code (\(said))"
        case ("PasswordResetRequiredException", _):
            return "Cognito requires a password reset for this user (\(said))"
        case ("ResourceNotFoundException", _):
            return "the user pool or app client in this profile does not exist; check it with cog-cred configure (\(said))"
        default:
            return "\(operation.verb) failed (\(said))"
        }
    }
}

/// What was being done when Cognito answered with an error.
public enum AuthOperation: Sendable, Equatable {
    case signIn
    case refresh(profile: String)

    var verb: String {
        switch self {
        case .signIn: return "sign-in"
        case .refresh: return "refreshing the tokens"
        }
    }
}
