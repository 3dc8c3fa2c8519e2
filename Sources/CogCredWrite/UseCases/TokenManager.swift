/// A profile's session and what it depends on: the keyring, Cognito, the
/// clock, the refresh lock. Each use case is an extension in a file of its
/// own, read top to bottom: CurrentToken (hand out a fresh token), Refresh,
/// SaveTokens, SignInWay, SignIn (with DeviceConfirmation), BrowserSignIn,
/// SignOut, RejectedToken, SessionStatus, Devices, Passkeys, MFASettings and
/// AWSCredentialsFromIdentityPool. The use cases about profiles rather than
/// one session are ConfiguredProfiles'.
///
/// The refresh lock has no default: every caller says which one (the
/// executable the profile's lock file, a one-caller test `NoRefreshLock`),
/// so a new call site cannot forget it.
///
/// The one rule it exists for: never hand out a token that is expired, and
/// refresh before one gets too close to its expiry. Dependencies are fields
/// so tests can run it on an in-memory store, a fake Cognito and a fake clock.
public struct TokenManager: Sendable {
    public let profileName: String
    public let profile: Profile
    let store: any TokenStore
    /// Made only when a call to Cognito is needed: building the real client
    /// may read the client secret from the keyring, which the common case
    /// (a stored token that is still fresh) never needs.
    let makeCognito: @Sendable () throws -> any CognitoClient
    /// The pool's OAuth 2.0 endpoints (client credentials, browser
    /// sign-in), made on first use like `makeCognito`.
    let makeOAuth: @Sendable () throws -> any OAuthClient
    /// The managed login's domain as the environment has it (FIPS:
    /// Endpoint.domain), for the browser's address and the logout URL.
    let managedLoginDomain: @Sendable () throws -> Endpoint.Resolved
    /// The identity pool and STS (`aws-credentials`), made on first use.
    let makeIdentity: @Sendable () throws -> any CognitoIdentityClient
    /// The security key passkeys are made and used with (libfido2's, in the
    /// executable), made when a passkey is first needed.
    let makeAuthenticator: @Sendable () -> any Authenticator
    let clock: any Clock
    let refreshMemory: any RefreshAPIMemory
    let lock: any RefreshLock
    /// Where warnings for the person go (stderr in the executable): the
    /// library itself never prints.
    let warn: @Sendable (String) -> Void
    /// The agent that keeps this session (COG_CRED_AGENT), when one does:
    /// the use cases that need the refresh token ask it (SessionAgent).
    let agent: (any SessionAgent)?

    public init(
        profileName: String, profile: Profile, store: any TokenStore,
        cognito: @escaping @Sendable () throws -> any CognitoClient,
        oauth: @escaping @Sendable () throws -> any OAuthClient = { throw ConfigError.missingDomain },
        identity: @escaping @Sendable () throws -> any CognitoIdentityClient = { throw CognitoError.deadlineExceeded },
        authenticator: @escaping @Sendable () -> any Authenticator = { Fido2Authenticator(path: nil) },
        clock: any Clock = SystemClock(),
        refreshMemory: any RefreshAPIMemory = InMemoryRefreshMemory(), lock: any RefreshLock,
        warn: @escaping @Sendable (String) -> Void = { _ in }, agent: (any SessionAgent)? = nil,
        domain: (@Sendable () throws -> Endpoint.Resolved)? = nil
    ) {
        self.managedLoginDomain = domain ?? { try Endpoint.domain(profile, environment: [:]) }
        self.agent = agent
        self.profileName = profileName
        self.profile = profile
        self.store = store
        self.makeCognito = cognito
        self.makeOAuth = oauth
        self.makeIdentity = identity
        self.makeAuthenticator = authenticator
        self.clock = clock
        self.refreshMemory = refreshMemory
        self.lock = lock
        self.warn = warn
    }

    public init(
        profileName: String, profile: Profile, store: any TokenStore, cognito: any CognitoClient, clock: any Clock = SystemClock(),
        refreshMemory: any RefreshAPIMemory = InMemoryRefreshMemory(), lock: any RefreshLock,
        warn: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.init(
            profileName: profileName, profile: profile, store: store, cognito: { cognito }, clock: clock,
            refreshMemory: refreshMemory, lock: lock, warn: warn)
    }

    /// A call to Cognito whose failure is `operation`'s.
    func cognitoCall<T>(_ operation: AuthOperation, _ body: () throws(CognitoError) -> T) throws(AuthError) -> T {
        do {
            return try body()
        } catch {
            throw .cognito(error, operation: operation)
        }
    }

    /// The Cognito client, for account calls made beside the token logic.
    public func cognito() throws -> any CognitoClient { try makeCognito() }

    /// The tokens a refresh stored.
    public struct RefreshedTokens: Sendable, Equatable {
        public var access: IssuedToken
        public var id: IssuedToken?
        /// A sign-in's: what became of this machine as the user's device.
        public var device: DeviceOutcome? = nil
    }
}
