/// A profile's session and what the use cases beside it depend on: where
/// the session lives (`session`: this machine, or an agent), its items in
/// the command's store, Cognito, the clock, the refresh lock. Each use case
/// is an extension in a file of its own, read top to bottom: SignInWay,
/// SignIn (with DeviceConfirmation), BrowserSignIn, RejectedToken,
/// SessionStatus's report, Devices, Passkeys, MFASettings and
/// AWSCredentialsFromIdentityPool. What needs the refresh token (a fresh
/// token, a refresh, the session's check, sign-out) is the session's, and
/// asked of it here (Session); the use cases about profiles rather than one
/// session are ConfiguredProfiles'.
///
/// The refresh lock has no default: every caller says which one (the
/// executable the profile's lock file, a one-caller test `NoRefreshLock`),
/// so a new call site cannot forget it.
///
/// Dependencies are fields so tests can run it on an in-memory store, a
/// fake Cognito and a fake clock.
public struct TokenManager: Sendable {
    public let profileName: String
    public let profile: Profile
    /// Where the session lives: a LocalSession made of the parts below, or
    /// an agent's (AgentSession), chosen where the program is wired.
    public let session: any Session
    /// The profile's items in the command's store: what a sign-in stores
    /// (through an agent, into the agent).
    let stored: StoredSession
    /// Made only when a call to Cognito is needed (LocalSession says why).
    let makeCognito: @Sendable () throws -> any CognitoClient
    /// The pool's OAuth 2.0 endpoints (client credentials, browser
    /// sign-in), made on first use like `makeCognito`.
    let makeOAuth: @Sendable () throws -> any OAuthClient
    /// The managed login's domain as the environment has it (FIPS:
    /// Endpoint.domain), for the browser's address and the logout URL.
    let managedLoginDomain: @Sendable () throws -> Endpoint.Resolved
    /// The identity pool and STS (`aws-credentials`), made on first use;
    /// nil: the profile names no identity pool, or none is reached here.
    let makeIdentity: (@Sendable () throws -> any CognitoIdentityClient)?
    /// The security key passkeys are made and used with (libfido2's, in the
    /// executable), made when a passkey is first needed.
    let makeAuthenticator: @Sendable () -> any Authenticator
    let refreshMemory: any RefreshAPIMemory

    var store: any TokenStore { stored.store }
    var clock: any Clock { stored.clock }
    var lock: any RefreshLock { stored.lock }
    /// Where warnings for the person go (stderr in the executable): the
    /// library itself never prints.
    var warn: @Sendable (String) -> Void { stored.warn }

    /// `session`: the agent's, when one keeps it; nil: this machine's, a
    /// LocalSession of these same parts.
    public init(
        profileName: String, profile: Profile, store: any TokenStore,
        cognito: @escaping @Sendable () throws -> any CognitoClient,
        oauth: @escaping @Sendable () throws -> any OAuthClient = { throw ConfigError.missingDomain },
        identity: (@Sendable () throws -> any CognitoIdentityClient)? = nil,
        authenticator: @escaping @Sendable () -> any Authenticator = { Fido2Authenticator(path: nil) },
        clock: any Clock = SystemClock(),
        refreshMemory: any RefreshAPIMemory = InMemoryRefreshMemory(), lock: any RefreshLock,
        warn: @escaping @Sendable (String) -> Void = { _ in }, session: (any Session)? = nil,
        domain: (@Sendable () throws -> Endpoint.Resolved)? = nil
    ) {
        let stored = StoredSession(profileName: profileName, profile: profile, store: store, clock: clock, lock: lock, warn: warn)
        self.stored = stored
        self.session = session ?? LocalSession(stored: stored, cognito: cognito, oauth: oauth, refreshMemory: refreshMemory)
        self.managedLoginDomain = domain ?? { try Endpoint.domain(profile, environment: [:]) }
        self.profileName = profileName
        self.profile = profile
        self.makeCognito = cognito
        self.makeOAuth = oauth
        self.makeIdentity = identity
        self.makeAuthenticator = authenticator
        self.refreshMemory = refreshMemory
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

    /// The Cognito client, for account calls made beside the token logic.
    public func cognito() throws -> any CognitoClient { try makeCognito() }
}

/// What needs the refresh token, asked of the session wherever it lives.
extension TokenManager: Session {
    public func currentToken(_ choice: TokenChoice, policy: RefreshPolicy) throws -> IssuedToken {
        try session.currentToken(choice, policy: policy)
    }

    public func currentTokens(policy: RefreshPolicy, authorizing choice: TokenChoice) throws -> RefreshedTokens {
        try session.currentTokens(policy: policy, authorizing: choice)
    }

    @discardableResult
    public func refresh() throws -> RefreshedTokens { try session.refresh() }

    public func status() throws(SecretServiceError) -> SessionStatus { try session.status() }

    public func checkSession() throws -> SessionCheck { try session.checkSession() }

    /// The session's sign-out; with `--global`, a managed login's session
    /// also gets the address that ends its own session in the browser (its
    /// cookie), which revoking the tokens does not.
    @discardableResult
    public func signOut(_ scope: SignOutScope, forgettingDevice: Bool) throws -> SignOutResult {
        var result = try session.signOut(scope, forgettingDevice: forgettingDevice)
        if scope == .global && profile.effectiveAuthFlow == .browser && result.logout == nil {
            result.logout = logoutURL().map { LibcurlURL.shown($0) }
        }
        return result
    }

    public func deleteItems(forgettingDevice: Bool) throws -> Int { try session.deleteItems(forgettingDevice: forgettingDevice) }
}

/// A call to Cognito whose failure is `operation`'s.
func cognitoCall<T>(_ operation: AuthOperation, _ body: () throws(CognitoError) -> T) throws(AuthError) -> T {
    do {
        return try body()
    } catch {
        throw .cognito(error, operation: operation)
    }
}
