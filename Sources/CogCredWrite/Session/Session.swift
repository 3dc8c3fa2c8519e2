// Where a profile's session lives: this machine's store, with Cognito
// reached from here (LocalSession), or an agent, which reaches Cognito
// itself and hands out tokens and facts only (AgentSession). One protocol,
// chosen once where the program is wired (TokenManager's `session`): no use
// case asks which.

/// What is stored of a profile's session, and forgetting it, with no
/// service reached: what the use cases about profiles need (the list,
/// configure's change and delete).
public protocol SessionItems: Sendable {
    /// What is stored, without any secret in it.
    func status() throws(SecretServiceError) -> SessionStatus
    /// Deletes the session's items under the profile's lock (this machine
    /// as a device too, with `forgettingDevice`): a refresh running
    /// meanwhile cannot write them back. How many existed.
    func deleteItems(forgettingDevice: Bool) throws -> Int
}

/// A profile's session: what needs its refresh token.
public protocol Session: SessionItems {
    var profileName: String { get }
    /// A token with more than the policy's margin of life left, refreshed
    /// (at most once) when the stored one has less.
    func currentToken(_ choice: TokenChoice, policy: RefreshPolicy) throws -> IssuedToken
    /// The access and ID tokens (a machine: the access token alone), as
    /// fresh as `currentToken`'s; `authorizing .id` refuses a machine.
    func currentTokens(policy: RefreshPolicy, authorizing choice: TokenChoice) throws -> RefreshedTokens
    /// Refreshes now and stores the result.
    @discardableResult func refresh() throws -> RefreshedTokens
    /// Whether Cognito still honours the session (call it only when signed in).
    func checkSession() throws -> SessionCheck
    /// Ends the session at Cognito (unless `.local`), then deletes its items.
    @discardableResult func signOut(_ scope: SignOutScope, forgettingDevice: Bool) throws -> SignOutResult
}

extension Session {
    public func currentToken(_ choice: TokenChoice) throws -> IssuedToken {
        try currentToken(choice, policy: RefreshPolicy())
    }

    public func currentTokens(policy: RefreshPolicy = RefreshPolicy()) throws -> RefreshedTokens {
        try currentTokens(policy: policy, authorizing: .access)
    }

    @discardableResult
    public func signOut(_ scope: SignOutScope = .local) throws -> SignOutResult {
        try signOut(scope, forgettingDevice: false)
    }
}

/// The tokens a refresh or a sign-in stored.
public struct RefreshedTokens: Sendable, Equatable {
    public var access: IssuedToken
    public var id: IssuedToken?
    /// A sign-in's: what became of this machine as the user's device.
    public var device: DeviceOutcome? = nil

    public init(access: IssuedToken, id: IssuedToken?, device: DeviceOutcome? = nil) {
        self.access = access
        self.id = id
        self.device = device
    }
}
