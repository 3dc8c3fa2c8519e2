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
    /// `parameters` are the ChallengeParameters, and for SELECT_CHALLENGE
    /// the answer's AvailableChallenges too, as a JSON list under
    /// `AuthOutcome.availableChallenges` (as MFAS_CAN_CHOOSE is one).
    case challenge(name: String, session: String?, parameters: [String: String])

    /// Where a challenge's `parameters` carry AvailableChallenges.
    public static let availableChallenges = "AvailableChallenges"
}

/// A user's MFA methods, as GetUser says them.
public struct MFASettings: Sendable, Equatable {
    /// UserMFASettingList, in Cognito's order.
    public var enabled: [MFAKind]
    /// PreferredMfaSetting: the method sign-in asks for without offering a choice.
    public var preferred: MFAKind?

    public init(enabled: [MFAKind], preferred: MFAKind?) {
        self.enabled = enabled
        self.preferred = preferred
    }
}

/// One method's part of SetUserMFAPreference.
public struct MFAPreference: Sendable, Equatable {
    public var enabled: Bool
    public var preferred: Bool

    public init(enabled: Bool, preferred: Bool) {
        self.enabled = enabled
        self.preferred = preferred
    }
}

/// Where Cognito sent a code (CodeDeliveryDetails).
public struct CodeDelivery: Sendable, Equatable {
    /// Masked, such as `a***@e***`.
    public var destination: String?
    /// `EMAIL` or `SMS`.
    public var medium: String?
    public var attributeName: String?

    public init(destination: String?, medium: String?, attributeName: String?) {
        self.destination = destination
        self.medium = medium
        self.attributeName = attributeName
    }
}

/// What SignUp answered.
public struct SignUpResult: Sendable, Equatable {
    /// True when the pool confirmed the account at once (no code to enter).
    public var confirmed: Bool
    public var userSub: String?
    public var delivery: CodeDelivery?

    public init(confirmed: Bool, userSub: String?, delivery: CodeDelivery?) {
        self.confirmed = confirmed
        self.userSub = userSub
        self.delivery = delivery
    }
}

/// The Cognito user pool actions cog-cred uses. The real one speaks JSON
/// over HTTPS (`CognitoHTTPClient`); tests use an in-memory fake.
public protocol CognitoClient: Sendable {
    /// InitiateAuth with USER_PASSWORD_AUTH.
    func signInWithPassword(username: String, password: String) throws(CognitoError) -> AuthOutcome
    /// InitiateAuth with REFRESH_TOKEN_AUTH. `username` is the name Cognito
    /// knows the user by, for SECRET_HASH.
    func refresh(refreshToken: String, username: String?) throws(CognitoError) -> AuthenticationResult
    func signUp(username: String, password: String, attributes: [UserAttribute]) throws(CognitoError) -> SignUpResult
    func confirmSignUp(username: String, code: String) throws(CognitoError)
    func resendConfirmationCode(username: String) throws(CognitoError) -> CodeDelivery?
    func forgotPassword(username: String) throws(CognitoError) -> CodeDelivery?
    func confirmForgotPassword(username: String, code: String, newPassword: String) throws(CognitoError)
    /// ChangePassword, authorised by the user's own access token.
    func changePassword(accessToken: String, previousPassword: String, proposedPassword: String) throws(CognitoError)

    /// InitiateAuth with USER_SRP_AUTH: answers the PASSWORD_VERIFIER challenge.
    func initiateSRP(username: String, srpA: String) throws(CognitoError) -> AuthOutcome
    /// InitiateAuth with USER_AUTH (choice-based sign-in: PREFERRED_CHALLENGE,
    /// with PASSWORD or SRP_A when it needs them) or CUSTOM_AUTH (with
    /// CHALLENGE_NAME=SRP_A and SRP_A to prove the password first).
    /// `parameters` are the AuthParameters besides USERNAME and SECRET_HASH.
    func initiateAuth(flow: String, username: String, parameters: [String: String]) throws(CognitoError) -> AuthOutcome
    /// RespondToAuthChallenge. SECRET_HASH, when needed, is computed over the
    /// responses' USERNAME (USER_ID_FOR_SRP).
    func respondToChallenge(name: String, session: String?, responses: [String: String]) throws(CognitoError) -> AuthOutcome
    /// AssociateSoftwareToken during MFA_SETUP: the authenticator's shared secret and a new session.
    func associateSoftwareToken(session: String?) throws(CognitoError) -> (secret: String, session: String?)
    /// VerifySoftwareToken during MFA_SETUP: the session for the final MFA_SETUP response.
    func verifySoftwareToken(session: String?, code: String) throws(CognitoError) -> String?
    /// AssociateSoftwareToken for a signed-in user: the authenticator's shared secret.
    func associateSoftwareToken(accessToken: String) throws(CognitoError) -> String
    /// VerifySoftwareToken for a signed-in user (SetUserMFAPreference then enables it).
    func verifySoftwareToken(accessToken: String, code: String) throws(CognitoError)
    /// GetUser: the user's MFA methods.
    func mfaSettings(accessToken: String) throws(CognitoError) -> MFASettings
    /// SetUserMFAPreference, for the methods given.
    func setMFAPreference(accessToken: String, _ settings: [MFAKind: MFAPreference]) throws(CognitoError)
    /// GetTokensFromRefreshToken: refresh that also rotates the refresh token
    /// when the app client is set to; takes the raw client secret.
    func getTokensFromRefreshToken(refreshToken: String) throws(CognitoError) -> AuthenticationResult
    /// RevokeToken: ends one refresh token and the tokens issued from it.
    func revokeToken(refreshToken: String) throws(CognitoError)
    /// GlobalSignOut: ends every token of the user, on every device.
    func globalSignOut(accessToken: String) throws(CognitoError)
}

/// A user attribute such as `email` or `name`.
public struct UserAttribute: Sendable, Equatable, Encodable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    enum CodingKeys: String, CodingKey {
        case name = "Name"
        case value = "Value"
    }
}
