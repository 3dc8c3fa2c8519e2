/// The agent COG_CRED_AGENT names: each call is one request on its socket
/// (AgentConnection), its request and answer the types of AgentMessages; a
/// profile's session through it is an AgentSession. What the agent says for
/// the person on the way (a warning) goes to `warn` as it comes.
public struct AgentClient: Sendable {
    public let connection: AgentConnection
    let warn: @Sendable (String) -> Void
    /// The debug trace's line for each request (nil: no trace).
    let trace: (@Sendable (String) -> Void)?

    public init(_ connection: AgentConnection, warn: @escaping @Sendable (String) -> Void, trace: (@Sendable (String) -> Void)? = nil) {
        self.connection = connection
        self.warn = warn
        self.trace = trace
    }

    func ask<Answer: AgentAnswer>(_ request: AgentRequest) throws(AgentFailure) -> Answer {
        guard let trace else { return try connection.ask(request, note: warn) }
        // Which machine's network a request goes out on: the agent's, for
        // what it sends to Cognito itself (docs/headless.md, whose network settings).
        let asked = "asked the agent at \(connection.path.printable): \(request.traced)"
        let whose = request.mayReachCognito ? "; any request to Cognito for it is the agent's, with the agent's own network settings" : ""
        let start = ContinuousClock.now
        func took() -> String {
            let elapsed = ContinuousClock.now - start
            return "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000) ms"
        }
        do {
            let answer: Answer = try connection.ask(request, note: warn)
            trace("\(asked): answered in \(took())\(whose)")
            return answer
        } catch {
            trace("\(asked): failed after \(took()): \(error.message.printable)\(whose)")
            throw error
        }
    }

    /// Fresh tokens of `kinds`, at most one refresh made by the agent; of a
    /// machine profile's, the access token alone.
    public func tokens(_ kinds: [SecretKind], profile: String, policy: RefreshPolicy) throws(AgentFailure) -> [SecretKind: IssuedToken] {
        let answer: TokensAnswer = try ask(.tokens(AgentRequest.Tokens(profile: profile, kinds: kinds, minTTL: policy.minTTL)))
        return answer.tokens
    }

    public func refresh(profile: String) throws(AgentFailure) -> RefreshedTokens {
        let answer: TokensAnswer = try ask(.refresh(profile: profile))
        let tokens = answer.tokens
        guard let access = tokens[.access] else { throw .broken(connection.path, "sent no access token") }
        return RefreshedTokens(access: access, id: tokens[.id])
    }

    public func status(profile: String) throws(AgentFailure) -> SessionStatus {
        let answer: StatusAnswer = try ask(.status(profile: profile))
        return answer.status
    }

    public func checkSession(profile: String) throws(AgentFailure) -> SessionCheck {
        let answer: CheckAnswer = try ask(.checkSession(profile: profile))
        return SessionCheck(answer.check)
    }

    public func signOut(profile: String, scope: SignOutScope, forgettingDevice: Bool) throws(AgentFailure) -> SignOutResult {
        let answer: SignOutAnswer = try ask(.signOut(profile: profile, scope: scope, forgetDevice: forgettingDevice))
        return answer.result
    }

    /// The profile as configured where the agent runs: a machine the
    /// socket is forwarded to has no configuration of its own.
    public func profile(_ name: String) throws(AgentFailure) -> Profile {
        let answer: ProfileAnswer = try ask(.profile(name))
        guard let profile = answer.file.profiles[name] else { throw .broken(connection.path, "sent another profile than the one asked for") }
        return profile
    }

    /// Every profile the agent's configuration has, each with its session's
    /// status (none for one its store could not tell).
    public func profiles() throws(AgentFailure) -> (config: ConfigFile, statuses: [String: SessionStatus]) {
        let answer: ProfilesAnswer = try ask(.profiles)
        return (answer.file, answer.statuses)
    }

    /// SECRET_HASH for `username`, made by the agent with the client secret it keeps.
    public func secretHash(profile: String, username: String) throws(AgentFailure) -> String {
        let answer: SecretHashAnswer = try ask(.secretHash(profile: profile, username: username))
        return answer.hash
    }

    /// Asks the agent to stop; its pid. It removes its socket as it exits.
    public func stop() throws(AgentFailure) -> Int64 {
        let answer: StopAnswer = try ask(.stop)
        return answer.pid
    }
}
