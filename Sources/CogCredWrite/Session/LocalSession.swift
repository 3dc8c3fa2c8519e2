/// A session kept on this machine: its items in this machine's store (the
/// Secret Service, or an agent's own store when the agent serves it), and
/// Cognito reached from here. The use cases that need the refresh token are
/// its extensions, a file each: CurrentToken, Refresh, SessionCheck, SignOut.
public struct LocalSession: Session {
    public let stored: StoredSession
    /// Made only when a call to Cognito is needed: building the real client
    /// may read the client secret from the keyring, which the common case
    /// (a stored token that is still fresh) never needs.
    let makeCognito: @Sendable () throws -> any CognitoClient
    /// The pool's OAuth 2.0 endpoints (a machine's tokens, a browser
    /// sign-in's refresh and revocation), made on first use like `makeCognito`.
    let makeOAuth: @Sendable () throws -> any OAuthClient
    let refreshMemory: any RefreshAPIMemory

    public init(
        stored: StoredSession, cognito: @escaping @Sendable () throws -> any CognitoClient,
        oauth: @escaping @Sendable () throws -> any OAuthClient, refreshMemory: any RefreshAPIMemory
    ) {
        self.stored = stored
        self.makeCognito = cognito
        self.makeOAuth = oauth
        self.refreshMemory = refreshMemory
    }

    public var profileName: String { stored.profileName }
    var profile: Profile { stored.profile }
    var store: any TokenStore { stored.store }
    var clock: any Clock { stored.clock }
    var lock: any RefreshLock { stored.lock }
    var warn: @Sendable (String) -> Void { stored.warn }

    public func status() throws(SecretServiceError) -> SessionStatus { try stored.status() }

    public func deleteItems(forgettingDevice: Bool) throws -> Int { try stored.deleteItems(forgettingDevice: forgettingDevice) }
}
