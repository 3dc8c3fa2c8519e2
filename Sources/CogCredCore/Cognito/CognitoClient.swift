/// The tokens Cognito returns on a successful authentication.
public struct AuthenticationResult: Sendable, Equatable {
    public var accessToken: String
    public var idToken: String?
    /// Absent on a refresh that does not rotate the refresh token.
    public var refreshToken: String?
    /// Seconds the access token lives, as Cognito says.
    public var expiresIn: Int64?

    public init(accessToken: String, idToken: String?, refreshToken: String?, expiresIn: Int64? = nil) {
        self.accessToken = accessToken
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
    }
}

/// What InitiateAuth answered: tokens, or a challenge that needs more input.
public enum AuthOutcome: Sendable, Equatable {
    case authenticated(AuthenticationResult)
    case challenge(name: String, session: String?, parameters: [String: String])
}

/// The Cognito user pool actions cog-cred uses. The real one speaks JSON
/// over HTTPS (`CognitoHTTPClient`); tests use an in-memory fake.
public protocol CognitoClient: Sendable {
    /// InitiateAuth with USER_PASSWORD_AUTH.
    func signInWithPassword(username: String, password: String) throws(CognitoError) -> AuthOutcome
    /// InitiateAuth with REFRESH_TOKEN_AUTH.
    func refresh(refreshToken: String) throws(CognitoError) -> AuthenticationResult
}
