/// The tokens Cognito returns on a successful authentication.
public struct AuthenticationResult: Sendable, Equatable {
    public var accessToken: String
    public var idToken: String?
    /// Absent on a refresh that does not rotate the refresh token.
    public var refreshToken: String?
    /// Seconds the access token lives, as Cognito says.
    public var expiresIn: Int64?
    /// A sign-in on a pool that tracks devices, from a machine that is not
    /// yet one of the user's devices: the device to confirm.
    public var newDevice: NewDeviceMetadata?

    public init(
        accessToken: String, idToken: String?, refreshToken: String?, expiresIn: Int64? = nil, newDevice: NewDeviceMetadata? = nil
    ) {
        self.accessToken = accessToken
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.newDevice = newDevice
    }
}

/// NewDeviceMetadata: the keys Cognito gave this machine at a sign-in.
public struct NewDeviceMetadata: Sendable, Equatable {
    public var deviceKey: String
    public var deviceGroupKey: String

    public init(deviceKey: String, deviceGroupKey: String) {
        self.deviceKey = deviceKey
        self.deviceGroupKey = deviceGroupKey
    }
}

/// One of the user's devices, as ListDevices says it.
public struct UserDevice: Sendable, Equatable {
    public var key: String
    /// The `device_name` attribute (ConfirmDevice's DeviceName).
    public var name: String?
    /// DeviceLastAuthenticatedDate, else the last change, in epoch seconds.
    public var lastSeen: Int64?
    /// `dev:device_remembered_status` is `remembered`: signing in from it skips MFA.
    public var remembered: Bool

    public init(key: String, name: String?, lastSeen: Int64?, remembered: Bool) {
        self.key = key
        self.name = name
        self.lastSeen = lastSeen
        self.remembered = remembered
    }
}

/// What a step of a sign-in answered: tokens, or a challenge to answer.
public enum AuthOutcome: Sendable, Equatable {
    case authenticated(AuthenticationResult)
    case challenge(PendingChallenge)
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

/// The Cognito user pool actions cog-cred uses, by the role a use case
/// needs them in: signing in, keeping a session, the account, MFA, devices,
/// passkeys. The real client speaks JSON over HTTPS (`CognitoHTTPClient`)
/// and plays every role; each use case asks for the role(s) it uses, and a
/// unit test fakes only those.
public typealias CognitoClient = CognitoSignIn & CognitoSession & CognitoAccount & CognitoMFA & CognitoDevices & CognitoPasskeys

/// Signing in: InitiateAuth and the challenges that follow.
public protocol CognitoSignIn: Sendable {
    /// InitiateAuth: begins a sign-in as `username`, as the device
    /// `deviceKey` when this machine is one of the user's.
    func startSignIn(_ start: SignInStart, username: String, deviceKey: String?) throws(CognitoError) -> AuthOutcome
    /// RespondToAuthChallenge: answers `challenge` for `username` (the name
    /// Cognito knows the user by), as the device `deviceKey`.
    func respond(to challenge: PendingChallenge, with answer: ChallengeAnswer, username: String, deviceKey: String?)
        throws(CognitoError) -> AuthOutcome
    /// AssociateSoftwareToken during MFA_SETUP: the authenticator's shared secret and a new session.
    func associateSoftwareToken(session: String?) throws(CognitoError) -> (secret: String, session: String?)
    /// VerifySoftwareToken during MFA_SETUP: the session for the final MFA_SETUP response.
    func verifySoftwareToken(session: String?, code: String) throws(CognitoError) -> String?
}

/// Keeping a session: refreshing it, checking it stands, ending it.
public protocol CognitoSession: Sendable {
    /// InitiateAuth with REFRESH_TOKEN_AUTH. `username` is the name Cognito
    /// knows the user by, for SECRET_HASH; `deviceKey` the device the session
    /// was signed in on (a pool that tracks devices refuses it without).
    func refresh(refreshToken: String, username: String?, deviceKey: String?) throws(CognitoError) -> AuthenticationResult
    /// GetTokensFromRefreshToken: refresh that also rotates the refresh token
    /// when the app client is set to; takes the raw client secret.
    func getTokensFromRefreshToken(refreshToken: String, deviceKey: String?) throws(CognitoError) -> AuthenticationResult
    /// Succeeds only while the access token's session stands.
    func confirmSession(accessToken: String) throws(CognitoError)
    /// RevokeToken: ends one refresh token and the tokens issued from it.
    func revokeToken(refreshToken: String) throws(CognitoError)
    /// GlobalSignOut: ends every token of the user, on every device.
    func globalSignOut(accessToken: String) throws(CognitoError)
}

/// The account's life: sign up and confirm, reset and change the password.
public protocol CognitoAccount: Sendable {
    func signUp(username: String, password: String, attributes: [UserAttribute]) throws(CognitoError) -> SignUpResult
    func confirmSignUp(username: String, code: String) throws(CognitoError)
    func resendConfirmationCode(username: String) throws(CognitoError) -> CodeDelivery?
    func forgotPassword(username: String) throws(CognitoError) -> CodeDelivery?
    func confirmForgotPassword(username: String, code: String, newPassword: String) throws(CognitoError)
    /// ChangePassword, authorised by the user's own access token.
    func changePassword(accessToken: String, previousPassword: String, proposedPassword: String) throws(CognitoError)
}

/// A signed-in user's MFA methods.
public protocol CognitoMFA: Sendable {
    /// AssociateSoftwareToken for a signed-in user: the authenticator's shared secret.
    func associateSoftwareToken(accessToken: String) throws(CognitoError) -> String
    /// VerifySoftwareToken for a signed-in user (SetUserMFAPreference then enables it).
    func verifySoftwareToken(accessToken: String, code: String) throws(CognitoError)
    /// GetUser: the user's MFA methods.
    func mfaSettings(accessToken: String) throws(CognitoError) -> MFASettings
    /// SetUserMFAPreference, for the methods given.
    func setMFAPreference(accessToken: String, _ settings: [MFAKind: MFAPreference]) throws(CognitoError)
}

/// The user's devices: this machine made one at a sign-in, and the list.
public protocol CognitoDevices: Sendable {
    /// ConfirmDevice: makes a sign-in's new device one of the user's, with
    /// the verifier of its device password. True when Cognito leaves it to
    /// the user whether to remember it (UserConfirmationNecessary).
    func confirmDevice(accessToken: String, deviceKey: String, verifier: DeviceVerifier, name: String) throws(CognitoError) -> Bool
    /// UpdateDeviceStatus: remembered (sign-ins from it skip MFA) or not.
    func updateDeviceStatus(accessToken: String, deviceKey: String, remembered: Bool) throws(CognitoError)
    /// ListDevices, one page: the devices and the token of the next page.
    func listDevices(accessToken: String, paginationToken: String?) throws(CognitoError) -> (devices: [UserDevice], next: String?)
    /// ForgetDevice: the device is no longer the user's.
    func forgetDevice(accessToken: String, deviceKey: String) throws(CognitoError)
}

/// The user's passkeys: registering one, listing and deleting them.
public protocol CognitoPasskeys: Sendable {
    /// StartWebAuthnRegistration: the options a key makes a new passkey for.
    func startPasskeyRegistration(accessToken: String) throws(CognitoError) -> WebAuthn.CreationOptions
    /// CompleteWebAuthnRegistration: the key's new credential, for Cognito to keep.
    func completePasskeyRegistration(accessToken: String, credential: WebAuthn.RegistrationCredential) throws(CognitoError)
    /// ListWebAuthnCredentials, one page: the user's passkeys and the token of the next page.
    func listPasskeys(accessToken: String, nextToken: String?) throws(CognitoError) -> (passkeys: [Passkey], next: String?)
    /// DeleteWebAuthnCredential.
    func deletePasskey(accessToken: String, id: String) throws(CognitoError)
}

extension CognitoSession {
    /// The calls made without a device.
    public func refresh(refreshToken: String, username: String?) throws(CognitoError) -> AuthenticationResult {
        try refresh(refreshToken: refreshToken, username: username, deviceKey: nil)
    }

    public func getTokensFromRefreshToken(refreshToken: String) throws(CognitoError) -> AuthenticationResult {
        try getTokensFromRefreshToken(refreshToken: refreshToken, deviceKey: nil)
    }
}

extension CognitoSession where Self: CognitoMFA {
    /// GetUser (the call the MFA settings are read with) answers for a live
    /// token and refuses a revoked or expired one, or one without the
    /// aws.cognito.signin.user.admin scope.
    public func confirmSession(accessToken: String) throws(CognitoError) {
        _ = try mfaSettings(accessToken: accessToken)
    }
}

/// One of the user's passkeys, as Cognito lists it.
public struct Passkey: Sendable, Equatable {
    /// The credential id (base64url), which `passkey remove` takes.
    public var id: String
    /// Cognito's name for it (it names passkeys itself).
    public var name: String?
    public var relyingParty: String?
    /// "cross-platform" (a security key) or "platform".
    public var attachment: String?
    public var transports: [String]
    /// Seconds since the epoch.
    public var created: Int64?

    public init(
        id: String, name: String? = nil, relyingParty: String? = nil, attachment: String? = nil, transports: [String] = [],
        created: Int64? = nil
    ) {
        self.id = id
        self.name = name
        self.relyingParty = relyingParty
        self.attachment = attachment
        self.transports = transports
        self.created = created
    }
}

/// A user attribute such as `email` or `name`.
public struct UserAttribute: Sendable, Equatable, Encodable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
