// What `cog-cred agent` answers: each request on its socket, run here as
// the command it stands for would run it, with this machine's configuration
// (read at each request: a CI job starts the agent first and configures
// after), its environment and its store, under the profile's lock. The
// answer carries tokens and facts, never the refresh token, the client
// secret or a device's keys (AgentProtocol.readable).

import Synchronization

#if canImport(Glibc)
import Glibc
#endif

public struct AgentService: Sendable {
    /// This machine's configuration, read now.
    let config: @Sendable () throws -> ConfigFile
    /// The profile's session on this machine; the use case's warnings go to `warn`.
    let manager: @Sendable (_ profile: String, _ warn: @escaping @Sendable (String) -> Void) throws -> TokenManager
    /// The store the sessions are kept in: the Secret Service, or this process's memory.
    let store: any TokenStore
    /// A failure as the command line words it.
    let describe: @Sendable (any Error) -> AgentFailure
    /// What a request may ask of the agent itself.
    let control: AgentControl

    public init(
        config: @escaping @Sendable () throws -> ConfigFile,
        manager: @escaping @Sendable (String, @escaping @Sendable (String) -> Void) throws -> TokenManager,
        store: any TokenStore, describe: @escaping @Sendable (any Error) -> AgentFailure, control: AgentControl = AgentControl(stop: {})
    ) {
        self.config = config
        self.manager = manager
        self.store = store
        self.describe = describe
        self.control = control
    }

    /// The answer's last line to one request line; `note` says what comes before it.
    public func answer(_ line: [UInt8], note: @escaping @Sendable (String) -> Void) -> String {
        guard let request = JSONValue.parse(line), let version = request["v"] else {
            return AgentProtocol.error(.protocolViolation, "the agent reads one JSON object a line, with \"v\": \(AgentProtocol.version)")
        }
        guard version == .int(AgentProtocol.version) else {
            let failure = AgentFailure.versionMismatch(theirs: AgentProtocol.version(of: version), ours: AgentProtocol.version, side: "client")
            return AgentProtocol.error(failure.category, failure.message)
        }
        guard let name = request["op"]?.stringValue, let operation = AgentProtocol.Operation(rawValue: name) else {
            return AgentProtocol.error(.protocolViolation, "the agent does not know the operation \(request["op"]?.compactText ?? "null")")
        }
        do {
            return AgentProtocol.ok(try run(operation, request, note: note))
        } catch {
            let failure = describe(error)
            return AgentProtocol.error(failure.category, failure.message)
        }
    }

    func run(_ operation: AgentProtocol.Operation, _ request: JSONValue, note: @escaping @Sendable (String) -> Void) throws
        -> [String: JSONValue]
    {
        switch operation {
        case .tokens:
            // Tokens are the access and ID tokens: nothing else is handed out.
            guard let kinds = AgentProtocol.kinds(request["kinds"]), let first = kinds.first, kinds.allSatisfy({ $0 == .access || $0 == .id })
            else { throw Self.malformed("kinds") }
            guard let name = try profile(of: request, note: note) else { return [:] }
            let session = try manager(name, note)
            let minTTL = AgentWire.int(request["min-ttl"])
            // The bounds the command lines take it within.
            if let minTTL, !ReadRequest.tokenMinTTL.contains(minTTL) { throw Self.malformed("min-ttl") }
            let policy = RefreshPolicy(minTTL: minTTL)
            if kinds.count == 1 {
                let token = try session.currentToken(first == .id ? .id : .access, policy: policy)
                return ["profile": .string(name), "tokens": AgentProtocol.tokens([first: token.value])]
            }
            return ["profile": .string(name), "tokens": Self.tokens(try session.currentTokens(policy: policy))]
        case .refresh:
            return ["tokens": Self.tokens(try manager(try named(request), note).refresh())]
        case .status:
            return ["status": AgentWire.status(try manager(try named(request), note).status())]
        case .checkSession:
            return ["check": AgentWire.check(try manager(try named(request), note).checkSession(), describe)]
        case .signOut:
            let scope = AgentWire.scopes.first { $0.1 == request["scope"]?.stringValue }?.0 ?? .local
            let result = try manager(try named(request), note).signOut(scope, forgettingDevice: request["forget-device"] == .bool(true))
            return ["removed": .int(Int64(result.removed)), "at-cognito": .string(result.atCognito.rawValue)]
        case .profile:
            let name = try named(request)
            let file = try config()
            guard let profile = file.profiles[name] else { throw file.notFound(name, path: "the agent's configuration") }
            guard let config = JSONValue.parse(ConfigFile(profiles: [name: profile]).encoded()) else { throw Self.malformed("profile") }
            return ["config": config]
        case .read:
            guard let kinds = AgentProtocol.kinds(request["kinds"]) else { throw Self.malformed("kinds") }
            // Never the refresh token, the client secret or a device's keys.
            let readable = kinds.filter { AgentProtocol.readable.contains($0) }
            let found = try store.read(readable, profile: try named(request), binding: AgentWire.binding(request["binding"]))
            return ["items": .object(found.reduce(into: [:]) { $0[$1.key.rawValue] = AgentWire.stored($1.value) })]
        case .write:
            guard let kind = request["kind"]?.stringValue.flatMap(SecretKind.init(rawValue:)), let secret = request["secret"]?.stringValue,
                let context = AgentWire.context(request["context"])
            else { throw Self.malformed("write") }
            let name = try named(request)
            try admit(secret, for: name, context: context)
            try store.writePatiently(kind, profile: name, secret: secret, context: context)
            return [:]
        case .delete:
            guard let kind = request["kind"]?.stringValue.flatMap(SecretKind.init(rawValue:)) else { throw Self.malformed("kind") }
            return ["existed": .bool(try store.delete(kind, profile: try named(request)))]
        case .secretHash:
            let name = try named(request)
            guard let username = request["username"]?.stringValue else { throw Self.malformed("username") }
            let session = try manager(name, note)
            guard session.profile.clientSecretInKeyring == true,
                let secret = try store.read(.clientSecret, profile: name, binding: session.profile.binding)
            else { throw ConfigError.clientSecretMissing(profile: name) }
            return ["hash": .string(SecretHash.compute(username: username, clientID: session.profile.clientID, clientSecret: secret))]
        case .stop:
            // Once this answer is sent (AgentWorkers).
            control.stopAsked.withLock { $0 = true }
            return ["pid": .int(Int64(getpid()))]
        }
    }

    /// The request's profile: named, or the one this machine's
    /// configuration maps a git URL or a registry host to (nil: none does).
    /// A git request's target is held to the git helper's rules
    /// (GitCredential.refusal), with the profile's git URLs as configured
    /// here: nil, and `note` says why, when it may not have a token.
    func profile(of request: JSONValue, note: (String) -> Void) throws -> String? {
        let named = request["profile"] == nil ? nil : try named(request)
        if let git = request["git"], let scheme = git["protocol"]?.stringValue, let host = git["host"]?.stringValue {
            let file = try config()
            let target = GitCredential.Request(
                attributes: [("protocol", scheme), ("host", host)] + (git["path"]?.stringValue.map { [("path", $0)] } ?? []))
            guard let name = GitCredential.profile(for: target, named: named, in: file) else { return nil }
            if let refusal = GitCredential.refusal(of: target, profile: name, patterns: file.profiles[name]?.gitURLs) {
                note(refusal.message)
                return nil
            }
            return name
        }
        if let named { return named }
        if let registry = request["registry"]?.stringValue { return try config().profile(forRegistry: registry) }
        throw Self.malformed("profile")
    }

    /// What the agent keeps is bounded for whoever reaches its socket: the
    /// items of the profiles this machine configures, for the pool and
    /// client each names (what a refresh here can use), of at most
    /// `AgentProtocol.itemLimit` bytes each. So its memory (with --memory)
    /// or the keyring holds at most a few items a configured profile,
    /// whatever a client sends.
    func admit(_ secret: String, for name: String, context: ItemContext) throws {
        let file = try config()
        guard let profile = file.profiles[name] else {
            throw AgentFailure(
                .configuration,
                "the agent keeps sessions only for the profiles its machine configures, and there is no profile \(name) there: nothing was stored; configure it on the agent's machine (cog-cred configure --profile \(name) ...)")
        }
        guard profile.binding == context.binding else {
            throw AgentFailure(
                .configuration,
                "the agent's profile \(name) names user pool \(profile.userPoolID) and app client \(profile.clientID), not these: nothing was stored; configure the profile alike on both machines")
        }
        guard secret.utf8.count <= AgentProtocol.itemLimit else {
            throw AgentFailure(
                .dataError,
                "the agent keeps items of at most \(AgentProtocol.itemLimit >> 10) KiB, and this one is \(secret.utf8.count) bytes: nothing was stored")
        }
    }

    func named(_ request: JSONValue) throws -> String {
        guard let name = request["profile"]?.stringValue else { throw Self.malformed("profile") }
        if let problem = ProfileValidation.profileNameProblem(name) { throw InputError("invalid profile name: \(problem)", category: .usage) }
        return name
    }

    static func tokens(_ tokens: RefreshedTokens) -> JSONValue {
        var values = [SecretKind.access: tokens.access.value]
        values[.id] = tokens.id?.value
        return AgentProtocol.tokens(values)
    }

    static func malformed(_ field: String) -> AgentFailure {
        AgentFailure(.protocolViolation, "the agent got a request whose \(field) cannot be read")
    }
}

/// What a request may ask of the agent itself: to stop, once its answer is
/// sent (`cog-cred agent --stop`, as `ssh-agent -k`). Whoever may connect
/// may stop it, as they may sign its sessions out.
public final class AgentControl: Sendable {
    let stopAsked = Mutex(false)
    /// Ends the agent, its socket removed (the executable's SIGTERM).
    let stop: @Sendable () -> Void

    public init(stop: @escaping @Sendable () -> Void) {
        self.stop = stop
    }

    /// Stops the agent if a request asked it to.
    func stopIfAsked() {
        if stopAsked.withLock({ $0 }) { stop() }
    }
}
