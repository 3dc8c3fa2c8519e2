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
        let fields: [String: JSONValue] = [
            "profile": .string(profile), "kinds": .array(asked.map { .string($0.rawValue) }), "binding": AgentWire.binding(binding),
        ]
        let items = try ask(.read, fields)["items"]
        for kind in asked {
            guard let stored = AgentWire.stored(items?[kind.rawValue]) else {
                throw .agent(.broken(agent.connection.path, "sent items that cannot be read"))
            }
            result[kind] = stored
        }
        return result
    }

    public func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        let fields: [String: JSONValue] = [
            "profile": .string(profile), "kind": .string(kind.rawValue), "secret": .string(secret), "context": AgentWire.context(context),
        ]
        _ = try ask(.write, fields)
    }

    /// The agent writes a refresh token patiently itself.
    public func writePatiently(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        try write(kind, profile: profile, secret: secret, context: context)
    }

    public func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
        try ask(.delete, ["profile": .string(profile), "kind": .string(kind.rawValue)])["existed"] == .bool(true)
    }

    public func prepareWrites() {}

    func ask(_ operation: AgentProtocol.Operation, _ fields: [String: JSONValue]) throws(SecretServiceError) -> [String: JSONValue] {
        do {
            return try agent.ask(operation, fields)
        } catch {
            throw .agent(error)
        }
    }
}
