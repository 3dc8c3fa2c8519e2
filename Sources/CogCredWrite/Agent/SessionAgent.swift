/// A session kept by an agent (`cog-cred agent`, named by COG_CRED_AGENT):
/// what needs the refresh token is asked of the agent, which makes the call
/// to Cognito with its own configuration, its store and the profile's lock,
/// and answers with tokens and facts only. TokenManager's use cases turn to
/// it when one is set (CurrentToken, Refresh, SessionStatus, SessionCheck,
/// SignOut); everything else reads and writes through the store, which with
/// an agent is the agent too (AgentTokenStore).
public protocol SessionAgent: Sendable {
    /// Fresh tokens of `kinds`, at most one refresh made by the agent; of a
    /// machine profile's, the access token alone.
    func tokens(_ kinds: [SecretKind], profile: String, policy: RefreshPolicy) throws -> [SecretKind: IssuedToken]
    func refresh(profile: String) throws -> TokenManager.RefreshedTokens
    func status(profile: String) throws(AgentFailure) -> SessionStatus
    func checkSession(profile: String) throws -> SessionCheck
    func signOut(profile: String, scope: TokenManager.SignOutScope, forgettingDevice: Bool) throws -> TokenManager.SignOutResult
}
