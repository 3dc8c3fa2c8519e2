/// A session an agent keeps (`cog-cred agent`, named by COG_CRED_AGENT):
/// what needs the refresh token is asked of the agent, which makes the call
/// to Cognito with its own configuration, its store and the profile's lock,
/// and answers with tokens and facts only.
public struct AgentSession: Session {
    let agent: AgentClient
    public let profileName: String

    public init(_ agent: AgentClient, profile: String) {
        self.agent = agent
        self.profileName = profile
    }

    public func currentToken(_ choice: TokenChoice, policy: RefreshPolicy) throws -> IssuedToken {
        guard let token = try agent.tokens([choice.kind], profile: profileName, policy: policy)[choice.kind] else {
            throw AuthError.malformedToken(choice.kind)
        }
        return token
    }

    public func currentTokens(policy: RefreshPolicy, authorizing choice: TokenChoice) throws -> RefreshedTokens {
        let both = try agent.tokens([.access, .id], profile: profileName, policy: policy)
        guard let access = both[.access] else { throw AuthError.malformedToken(.access) }
        if choice == .id && both[.id] == nil { throw AuthError.malformedToken(.id) }
        return RefreshedTokens(access: access, id: both[.id])
    }

    @discardableResult
    public func refresh() throws -> RefreshedTokens { try agent.refresh(profile: profileName) }

    public func status() throws(SecretServiceError) -> SessionStatus {
        do { return try agent.status(profile: profileName) } catch { throw .agent(error) }
    }

    public func checkSession() throws -> SessionCheck { try agent.checkSession(profile: profileName) }

    @discardableResult
    public func signOut(_ scope: SignOutScope, forgettingDevice: Bool) throws -> SignOutResult {
        try agent.signOut(profile: profileName, scope: scope, forgettingDevice: forgettingDevice)
    }

    public func deleteItems(forgettingDevice: Bool) throws -> Int {
        try signOut(.local, forgettingDevice: forgettingDevice).removed
    }
}
