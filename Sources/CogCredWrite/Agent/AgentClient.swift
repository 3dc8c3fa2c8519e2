/// The agent COG_CRED_AGENT names: each call is one request on its socket
/// (AgentConnection); a profile's session through it is an AgentSession.
/// What the agent says for the person on the way (a warning) goes to `warn`
/// as it comes.
public struct AgentClient: Sendable {
    public let connection: AgentConnection
    let warn: @Sendable (String) -> Void

    public init(_ connection: AgentConnection, warn: @escaping @Sendable (String) -> Void) {
        self.connection = connection
        self.warn = warn
    }

    func ask(_ operation: AgentProtocol.Operation, _ fields: [String: JSONValue]) throws(AgentFailure) -> [String: JSONValue] {
        try connection.ask(operation, fields, note: warn)
    }

    public func tokens(_ kinds: [SecretKind], profile: String, policy: RefreshPolicy) throws -> [SecretKind: IssuedToken] {
        var fields: [String: JSONValue] = ["profile": .string(profile), "kinds": .array(kinds.map { .string($0.rawValue) })]
        if let minTTL = policy.minTTL { fields["min-ttl"] = .int(minTTL) }
        return try tokens(in: try ask(.tokens, fields))
    }

    public func refresh(profile: String) throws -> RefreshedTokens {
        let tokens = try tokens(in: try ask(.refresh, ["profile": .string(profile)]))
        guard let access = tokens[.access] else { throw AgentFailure.broken(connection.path, "sent no access token") }
        return RefreshedTokens(access: access, id: tokens[.id])
    }

    public func status(profile: String) throws(AgentFailure) -> SessionStatus {
        guard let status = AgentWire.status(try ask(.status, ["profile": .string(profile)])["status"]) else {
            throw .broken(connection.path, "sent a status that cannot be read")
        }
        return status
    }

    public func checkSession(profile: String) throws -> SessionCheck {
        guard let check = AgentWire.check(try ask(.checkSession, ["profile": .string(profile)])["check"]) else {
            throw AgentFailure.broken(connection.path, "sent a session check that cannot be read")
        }
        return check
    }

    public func signOut(profile: String, scope: SignOutScope, forgettingDevice: Bool) throws -> SignOutResult {
        let fields: [String: JSONValue] = [
            "profile": .string(profile), "scope": .string(AgentWire.scopes.first { $0.0 == scope }!.1), "forget-device": .bool(forgettingDevice),
        ]
        let answer = try ask(.signOut, fields)
        // An agent that does not say what Cognito was asked is not taken to have asked.
        let atCognito = answer["at-cognito"]?.stringValue.flatMap(SignOutResult.AtCognito.init(rawValue:)) ?? .notAsked
        return SignOutResult(removed: Int(AgentWire.int(answer["removed"]) ?? 0), atCognito: atCognito)
    }

    /// The profile as configured where the agent runs: a machine the
    /// socket is forwarded to has no configuration of its own.
    public func profile(_ name: String) throws -> Profile {
        let answer = try ask(.profile, ["profile": .string(name)])
        guard let config = answer["config"], let file = try? ConfigFile.decode(Array(config.compactText.utf8), path: connection.path),
            let profile = file.profiles[name]
        else { throw AgentFailure.broken(connection.path, "sent a profile that cannot be read") }
        return profile
    }

    /// Asks the agent to stop; its pid. It removes its socket as it exits.
    public func stop() throws(AgentFailure) -> Int64 {
        guard case .int(let pid)? = try ask(.stop, [:])["pid"] else { throw .broken(connection.path, "did not say it stops") }
        return pid
    }

    /// SECRET_HASH for `username`, made by the agent with the client secret it keeps.
    public func secretHash(profile: String, username: String) throws(AgentFailure) -> String {
        guard let hash = try ask(.secretHash, ["profile": .string(profile), "username": .string(username)])["hash"]?.stringValue else {
            throw .broken(connection.path, "sent no SECRET_HASH")
        }
        return hash
    }

    func tokens(in answer: [String: JSONValue]) throws(AgentFailure) -> [SecretKind: IssuedToken] {
        var tokens: [SecretKind: IssuedToken] = [:]
        for (key, value) in answer["tokens"]?.objectValue ?? [:] {
            guard let kind = SecretKind(rawValue: key), let token = value.stringValue.flatMap(IssuedToken.init) else {
                throw .broken(connection.path, "sent a token that cannot be read")
            }
            tokens[kind] = token
        }
        return tokens
    }
}
