/// The agent as a command's store (COG_CRED_AGENT): a sign-in's tokens, a
/// configured client secret and a new device are written into it; what a
/// client may read (`AgentProtocol.readable`) is read from it. The refresh
/// token, the client secret and a device's keys read as withheld here
/// without asking: the agent never hands them out, and what needs them is
/// asked of it whole (AgentSession).
public struct AgentTokenStore: TokenStore {
    let agent: AgentClient

    public init(_ agent: AgentClient) {
        self.agent = agent
    }

    public func read(_ kinds: [SecretKind], profile: String, binding: ItemBinding?) throws(SecretServiceError)
        -> [SecretKind: StoredSecret]
    {
        var result = kinds.reduce(into: [SecretKind: StoredSecret]()) { $0[$1] = AgentProtocol.readable.contains($1) ? .absent : .withheld }
        let asked = kinds.filter { AgentProtocol.readable.contains($0) }
        if asked.isEmpty { return result }
        let answer: ItemsAnswer = try ask(.read(profile: profile, kinds: asked, binding: binding))
        for kind in asked {
            guard let stored = answer.items[kind] else { throw .agent(.broken(agent.connection.path, "sent items that cannot be read")) }
            result[kind] = stored
        }
        return result
    }

    public func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        let _: DoneAnswer = try ask(.write(profile: profile, kind: kind, secret: secret, context: context))
    }

    /// The agent writes a refresh token patiently itself.
    public func writePatiently(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        try write(kind, profile: profile, secret: secret, context: context)
    }

    public func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
        let answer: DeletedAnswer = try ask(.delete(profile: profile, kind: kind))
        return answer.existed
    }

    public func prepareWrites() {}

    func ask<Answer: AgentAnswer>(_ request: AgentRequest) throws(SecretServiceError) -> Answer {
        do {
            return try agent.ask(request)
        } catch {
            throw .agent(error)
        }
    }
}
