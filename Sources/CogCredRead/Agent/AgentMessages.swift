// The agent's requests and answers as types, with their encoding: the one
// place the fields on its socket are named (AgentProtocol has the lines
// around them: "v", "op", "ok", "error", "note"). The front, cog-cred-cli's
// client and the agent all build and read them here.

/// A request, as a client sends it and the agent reads it.
public enum AgentRequest: Sendable, Equatable {
    /// Fresh tokens, refreshed by the agent when due.
    case tokens(Tokens)
    case refresh(profile: String)
    /// What is stored, without a secret in it (SessionStatus).
    case status(profile: String)
    /// Whether Cognito still honours the session (SessionCheck).
    case checkSession(profile: String)
    case signOut(profile: String, scope: SignOutScope, forgetDevice: Bool)
    /// Who is signed in (`whoami`), from what is stored: no network.
    case whoami(profile: String)
    /// A profile as the agent's machine configures it (no secret in it).
    case profile(String)
    /// Every profile the agent's machine configures, with its status.
    case profiles
    /// Items of the kinds a client may read (`AgentProtocol.readable`).
    case read(profile: String, kinds: [SecretKind], binding: ItemBinding?)
    case write(profile: String, kind: SecretKind, secret: String, context: ItemContext)
    case delete(profile: String, kind: SecretKind)
    /// SECRET_HASH for a username, made with the client secret the agent keeps.
    case secretHash(profile: String, username: String)
    /// The agent answers, then removes its socket and exits.
    case stop

    /// What `tokens` asks for: of the profile named, else of the one the
    /// agent's configuration maps a git target (or a registry) to.
    public struct Tokens: Sendable, Equatable {
        public var profile: String?
        public var git: GitTarget?
        public var registry: String?
        public var kinds: [SecretKind]
        public var minTTL: Int64?

        public init(profile: String? = nil, git: GitTarget? = nil, registry: String? = nil, kinds: [SecretKind], minTTL: Int64? = nil) {
            self.profile = profile
            self.git = git
            self.registry = registry
            self.kinds = kinds
            self.minTTL = minTTL
        }
    }

    /// The server a git request is for: its protocol, host and path.
    public struct GitTarget: Sendable, Equatable {
        public var scheme: String
        public var host: String
        public var path: String?

        public init(scheme: String, host: String, path: String?) {
            self.scheme = scheme
            self.host = host
            self.path = path
        }
    }

    /// The request's line, newline included.
    public var line: String { AgentProtocol.request(operation, fields) }

    var operation: AgentProtocol.Operation {
        switch self {
        case .tokens: return .tokens
        case .refresh: return .refresh
        case .status: return .status
        case .checkSession: return .checkSession
        case .signOut: return .signOut
        case .whoami: return .whoami
        case .profile: return .profile
        case .profiles: return .profiles
        case .read: return .read
        case .write: return .write
        case .delete: return .delete
        case .secretHash: return .secretHash
        case .stop: return .stop
        }
    }

    var fields: [String: JSONValue] {
        switch self {
        case .tokens(let asked):
            var fields: [String: JSONValue] = [Field.kinds: Self.kinds(asked.kinds)]
            if let profile = asked.profile { fields[Field.profile] = .string(profile) }
            if let git = asked.git {
                var target: [String: JSONValue] = [Field.protocolName: .string(git.scheme), Field.host: .string(git.host)]
                if let path = git.path { target[Field.path] = .string(path) }
                fields[Field.git] = .object(target)
            }
            if let registry = asked.registry { fields[Field.registry] = .string(registry) }
            if let minTTL = asked.minTTL { fields[Field.minTTL] = .int(minTTL) }
            return fields
        case .refresh(let profile), .status(let profile), .checkSession(let profile), .profile(let profile), .whoami(let profile):
            return [Field.profile: .string(profile)]
        case .signOut(let profile, let scope, let forgetDevice):
            return [Field.profile: .string(profile), Field.scope: .string(scope.rawValue), Field.forgetDevice: .bool(forgetDevice)]
        case .profiles, .stop:
            return [:]
        case .read(let profile, let kinds, let binding):
            return [Field.profile: .string(profile), Field.kinds: Self.kinds(kinds), Field.binding: Self.binding(binding)]
        case .write(let profile, let kind, let secret, let context):
            var bound: [String: JSONValue] = [Field.userPoolID: .string(context.userPoolID), Field.clientID: .string(context.clientID)]
            if let username = context.username { bound[Field.username] = .string(username) }
            return [
                Field.profile: .string(profile), Field.kind: .string(kind.rawValue), Field.secret: .string(secret),
                Field.context: .object(bound),
            ]
        case .delete(let profile, let kind):
            return [Field.profile: .string(profile), Field.kind: .string(kind.rawValue)]
        case .secretHash(let profile, let username):
            return [Field.profile: .string(profile), Field.username: .string(username)]
        }
    }

    /// The request on `line`, or why it cannot be read (the failure the agent answers with).
    public static func read(_ line: [UInt8]) -> Result<AgentRequest, AgentFailure> {
        guard let request = JSONValue.parse(line), let version = request[AgentProtocol.versionField] else {
            return .failure(AgentFailure(.protocolViolation, "the agent reads one JSON object a line, with \"v\": \(AgentProtocol.version)"))
        }
        guard version == .int(AgentProtocol.version) else {
            return .failure(.versionMismatch(theirs: AgentProtocol.version(of: version), ours: AgentProtocol.version, side: "client"))
        }
        guard let name = request[AgentProtocol.operationField]?.stringValue, let operation = AgentProtocol.Operation(rawValue: name) else {
            let op = request[AgentProtocol.operationField]?.compactText ?? "null"
            return .failure(AgentFailure(.protocolViolation, "the agent does not know the operation \(op)"))
        }
        func text(_ field: String) throws(AgentFailure) -> String {
            guard let value = request[field]?.stringValue else { throw malformed(field) }
            return value
        }
        func kind() throws(AgentFailure) -> SecretKind {
            guard let kind = SecretKind(rawValue: try text(Field.kind)) else { throw malformed(Field.kind) }
            return kind
        }
        do throws(AgentFailure) {
            switch operation {
            case .tokens:
                // Tokens are the access and ID tokens: nothing else is handed out.
                guard let kinds = kinds(request[Field.kinds]), !kinds.isEmpty, kinds.allSatisfy({ $0 == .access || $0 == .id }) else {
                    throw malformed(Field.kinds)
                }
                var asked = Tokens(kinds: kinds, minTTL: nil)
                asked.profile = request[Field.profile]?.stringValue
                if let git = request[Field.git] {
                    guard let scheme = git[Field.protocolName]?.stringValue, let host = git[Field.host]?.stringValue else { throw malformed(Field.git) }
                    asked.git = GitTarget(scheme: scheme, host: host, path: git[Field.path]?.stringValue)
                }
                asked.registry = request[Field.registry]?.stringValue
                if let minTTL = request[Field.minTTL] {
                    // Within the bounds the command lines take it in.
                    guard case .int(let seconds) = minTTL, ReadRequest.tokenMinTTL.contains(seconds) else { throw malformed(Field.minTTL) }
                    asked.minTTL = seconds
                }
                guard asked.profile != nil || asked.git != nil || asked.registry != nil else { throw malformed(Field.profile) }
                return .success(.tokens(asked))
            case .refresh: return .success(.refresh(profile: try text(Field.profile)))
            case .status: return .success(.status(profile: try text(Field.profile)))
            case .checkSession: return .success(.checkSession(profile: try text(Field.profile)))
            case .signOut:
                guard let scope = SignOutScope(rawValue: request[Field.scope]?.stringValue ?? SignOutScope.local.rawValue) else {
                    throw malformed(Field.scope)
                }
                return .success(.signOut(profile: try text(Field.profile), scope: scope, forgetDevice: request[Field.forgetDevice] == .bool(true)))
            case .whoami: return .success(.whoami(profile: try text(Field.profile)))
            case .profile: return .success(.profile(try text(Field.profile)))
            case .profiles: return .success(.profiles)
            case .read:
                guard let kinds = kinds(request[Field.kinds]) else { throw malformed(Field.kinds) }
                return .success(.read(profile: try text(Field.profile), kinds: kinds, binding: binding(request[Field.binding])))
            case .write:
                guard let bound = binding(request[Field.context]) else { throw malformed(Field.context) }
                let context = ItemContext(userPoolID: bound.userPoolID, clientID: bound.clientID, username: request[Field.context]?[Field.username]?.stringValue)
                return .success(.write(profile: try text(Field.profile), kind: try kind(), secret: try text(Field.secret), context: context))
            case .delete: return .success(.delete(profile: try text(Field.profile), kind: try kind()))
            case .secretHash: return .success(.secretHash(profile: try text(Field.profile), username: try text(Field.username)))
            case .stop: return .success(.stop)
            }
        } catch {
            return .failure(error)
        }
    }

    /// The profile a request names, if it names one.
    public var profile: String? {
        switch self {
        case .tokens(let asked): return asked.profile
        case .refresh(let profile), .status(let profile), .checkSession(let profile), .profile(let profile), .signOut(let profile, _, _),
            .whoami(let profile), .read(let profile, _, _), .write(let profile, _, _, _), .delete(let profile, _), .secretHash(let profile, _):
            return profile
        case .profiles, .stop: return nil
        }
    }

    /// The request in a debug trace's words: its operation and whose turn
    /// (`refresh (profile work)`); never a value it carries.
    public var traced: String { turn.isEmpty ? operation.rawValue : "\(operation.rawValue) (\(turn))" }

    /// The agent may send requests to Cognito to answer it (a refresh, the
    /// session check, a revocation): with its own network settings.
    public var mayReachCognito: Bool {
        switch self {
        case .tokens, .refresh, .checkSession, .signOut: return true
        case .status, .whoami, .profile, .profiles, .read, .write, .delete, .secretHash, .stop: return false
        }
    }

    /// Whose turn a request takes in the agent (AgentWorkers): the profile
    /// it names, else its git host or registry.
    public var turn: String {
        if let profile { return "profile " + profile }
        if case .tokens(let asked) = self {
            if let git = asked.git { return "git " + git.host }
            if let registry = asked.registry { return "registry " + registry }
        }
        return ""
    }

    static func malformed(_ field: String) -> AgentFailure {
        AgentFailure(.protocolViolation, "the agent got a request whose \(field) cannot be read")
    }

    static func kinds(_ kinds: [SecretKind]) -> JSONValue { .array(kinds.map { .string($0.rawValue) }) }

    static func kinds(_ value: JSONValue?) -> [SecretKind]? {
        guard let list = value?.arrayValue else { return nil }
        let kinds = list.compactMap { $0.stringValue.flatMap(SecretKind.init(rawValue:)) }
        return kinds.count == list.count ? kinds : nil
    }

    static func binding(_ binding: ItemBinding?) -> JSONValue {
        guard let binding else { return .null }
        return .object([Field.userPoolID: .string(binding.userPoolID), Field.clientID: .string(binding.clientID)])
    }

    static func binding(_ value: JSONValue?) -> ItemBinding? {
        guard let pool = value?[Field.userPoolID]?.stringValue, let client = value?[Field.clientID]?.stringValue else { return nil }
        return ItemBinding(userPoolID: pool, clientID: client)
    }
}

/// What the agent answers, each with its fields: built by the agent
/// (`fields`), read by the client (`init?(fields:)`; nil: the agent's
/// answer cannot be read).
public protocol AgentAnswer: Sendable {
    var fields: [String: JSONValue] { get }
    init?(fields: [String: JSONValue])
}

/// `tokens` and `refresh`: tokens by kind. None (and no profile) for a
/// git target or registry no profile of the agent's answers.
public struct TokensAnswer: AgentAnswer, Equatable {
    public var profile: String?
    public var tokens: [SecretKind: IssuedToken]

    public init(profile: String?, tokens: [SecretKind: IssuedToken]) {
        self.profile = profile
        self.tokens = tokens
    }

    public var fields: [String: JSONValue] {
        guard let profile else { return [:] }
        return [Field.profile: .string(profile), Field.tokens: .object(tokens.reduce(into: [:]) { $0[$1.key.rawValue] = .string($1.value.value) })]
    }

    /// nil, and the answer cannot be read, when a token is not a readable JWT.
    public init?(fields: [String: JSONValue]) {
        guard let given = fields[Field.tokens] else {
            self.init(profile: nil, tokens: [:])
            return
        }
        var tokens: [SecretKind: IssuedToken] = [:]
        for (key, value) in given.objectValue ?? [:] {
            guard let kind = SecretKind(rawValue: key), let token = value.stringValue.flatMap(IssuedToken.init) else { return nil }
            tokens[kind] = token
        }
        self.init(profile: fields[Field.profile]?.stringValue, tokens: tokens)
    }
}

/// `status`: the session's status, in `status --json`'s shape.
public struct StatusAnswer: AgentAnswer {
    public var status: SessionStatus

    public init(_ status: SessionStatus) { self.status = status }

    public var fields: [String: JSONValue] { [Field.status: .object(status.json)] }

    public init?(fields: [String: JSONValue]) {
        guard let status = SessionStatus(json: fields[Field.status]) else { return nil }
        self.init(status)
    }
}

/// `check-session`: what Cognito said, a failure as the agent words it.
public struct CheckAnswer: AgentAnswer {
    public var check: CheckOutcome

    public init(_ check: CheckOutcome) { self.check = check }

    public var fields: [String: JSONValue] {
        switch check {
        case .stands(let way): return [Field.stands: .string(way.rawValue)]
        case .refused(let failure): return [Field.refused: Self.failure(failure)]
        case .couldNotCheck(let failure): return [Field.couldNotCheck: Self.failure(failure)]
        case .noSession: return [Field.noSession: .bool(true)]
        }
    }

    public init?(fields: [String: JSONValue]) {
        if let way = fields[Field.stands]?.stringValue {
            guard let way = SessionCheckWay(rawValue: way) else { return nil }
            self.init(.stands(way: way))
        } else if let failure = Self.failure(fields[Field.refused]) {
            self.init(.refused(failure))
        } else if let failure = Self.failure(fields[Field.couldNotCheck]) {
            self.init(.couldNotCheck(failure))
        } else if fields[Field.noSession] == .bool(true) {
            self.init(.noSession)
        } else {
            return nil
        }
    }

    static func failure(_ failure: AgentFailure) -> JSONValue {
        .object([Field.category: .string(failure.category.wireName), Field.message: .string(failure.message)])
    }

    static func failure(_ value: JSONValue?) -> AgentFailure? {
        guard let message = value?[Field.message]?.stringValue else { return nil }
        return AgentFailure(FailureCategory(wireName: value?[Field.category]?.stringValue ?? ""), message)
    }
}

/// `sign-out`: what it did (SignOutResult).
public struct SignOutAnswer: AgentAnswer, Equatable {
    public var result: SignOutResult

    public init(_ result: SignOutResult) { self.result = result }

    public var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = [Field.removed: .int(Int64(result.removed)), Field.atCognito: .string(result.atCognito.rawValue)]
        if let failure = result.failure { fields[Field.message] = .string(failure) }
        if let logout = result.logout { fields[Field.logout] = .string(logout) }
        return fields
    }

    public init?(fields: [String: JSONValue]) {
        guard case .int(let removed)? = fields[Field.removed] else { return nil }
        // An agent that does not say what Cognito was asked is not taken to have asked.
        let atCognito = fields[Field.atCognito]?.stringValue.flatMap(SignOutResult.AtCognito.init(rawValue:)) ?? .notAsked
        self.init(
            SignOutResult(
                removed: Int(removed), atCognito: atCognito, failure: fields[Field.message]?.stringValue,
                logout: fields[Field.logout]?.stringValue))
    }
}

/// `whoami`: the signed-in user's name (a machine's: its app client), and
/// the profile's grant.
public struct NameAnswer: AgentAnswer, Equatable {
    public var name: String
    public var grant: String

    public init(name: String, grant: String) {
        self.name = name
        self.grant = grant
    }

    public var fields: [String: JSONValue] { [Field.name: .string(name), Field.grant: .string(grant)] }

    public init?(fields: [String: JSONValue]) {
        guard let name = fields[Field.name]?.stringValue, let grant = fields[Field.grant]?.stringValue else { return nil }
        self.init(name: name, grant: grant)
    }
}

/// `profile`: the profile as the agent's configuration has it, in the
/// config file's own shape (a file of that one profile).
public struct ProfileAnswer: AgentAnswer {
    public var file: ConfigFile

    public init(_ file: ConfigFile) { self.file = file }

    public var fields: [String: JSONValue] { [Field.config: Field.config(file)] }

    public init?(fields: [String: JSONValue]) {
        guard let file = Field.config(fields[Field.config]) else { return nil }
        self.init(file)
    }
}

/// `profiles`: the agent's configuration, and each profile's status (none
/// where its store could not be asked).
public struct ProfilesAnswer: AgentAnswer {
    public var file: ConfigFile
    public var statuses: [String: SessionStatus]

    public init(_ file: ConfigFile, statuses: [String: SessionStatus]) {
        self.file = file
        self.statuses = statuses
    }

    public var fields: [String: JSONValue] {
        [Field.config: Field.config(file), Field.statuses: .object(statuses.reduce(into: [:]) { $0[$1.key] = .object($1.value.json) })]
    }

    public init?(fields: [String: JSONValue]) {
        guard let file = Field.config(fields[Field.config]) else { return nil }
        var statuses: [String: SessionStatus] = [:]
        for (name, value) in fields[Field.statuses]?.objectValue ?? [:] {
            guard let status = SessionStatus(json: value) else { return nil }
            statuses[name] = status
        }
        self.init(file, statuses: statuses)
    }
}

/// `read`: what is stored of each kind asked.
public struct ItemsAnswer: AgentAnswer, Equatable {
    public var items: [SecretKind: StoredSecret]

    public init(_ items: [SecretKind: StoredSecret]) { self.items = items }

    public var fields: [String: JSONValue] {
        [Field.items: .object(items.reduce(into: [:]) { $0[$1.key.rawValue] = Self.stored($1.value) })]
    }

    public init?(fields: [String: JSONValue]) {
        var items: [SecretKind: StoredSecret] = [:]
        for (key, value) in fields[Field.items]?.objectValue ?? [:] {
            guard let kind = SecretKind(rawValue: key), let stored = Self.stored(value) else { return nil }
            items[kind] = stored
        }
        self.init(items)
    }

    static func stored(_ stored: StoredSecret) -> JSONValue {
        switch stored {
        case .found(let value): return .object([Field.found: .string(value)])
        case .absent: return .object([Field.absent: .bool(true)])
        case .boundElsewhere(let unbound): return .object([Field.boundElsewhere: .bool(true), Field.unbound: .bool(unbound)])
        case .withheld: return .object([Field.withheld: .bool(true)])
        }
    }

    static func stored(_ value: JSONValue) -> StoredSecret? {
        if let found = value[Field.found]?.stringValue { return .found(found) }
        if value[Field.absent] == .bool(true) { return .absent }
        if value[Field.boundElsewhere] == .bool(true) { return .boundElsewhere(unbound: value[Field.unbound]?.boolValue ?? false) }
        if value[Field.withheld] == .bool(true) { return .withheld }
        return nil
    }
}

/// `write`: nothing to say but that it was done.
public struct DoneAnswer: AgentAnswer {
    public init() {}
    public var fields: [String: JSONValue] { [:] }
    public init?(fields: [String: JSONValue]) {}
}

/// `delete`: whether there was one.
public struct DeletedAnswer: AgentAnswer {
    public var existed: Bool

    public init(existed: Bool) { self.existed = existed }

    public var fields: [String: JSONValue] { [Field.existed: .bool(existed)] }

    public init?(fields: [String: JSONValue]) { self.init(existed: fields[Field.existed] == .bool(true)) }
}

/// `secret-hash`.
public struct SecretHashAnswer: AgentAnswer {
    public var hash: String

    public init(hash: String) { self.hash = hash }

    public var fields: [String: JSONValue] { [Field.hash: .string(hash)] }

    public init?(fields: [String: JSONValue]) {
        guard let hash = fields[Field.hash]?.stringValue else { return nil }
        self.init(hash: hash)
    }
}

/// `stop`: the agent's pid, as it goes.
public struct StopAnswer: AgentAnswer {
    public var pid: Int64

    public init(pid: Int64) { self.pid = pid }

    public var fields: [String: JSONValue] { [Field.pid: .int(pid)] }

    public init?(fields: [String: JSONValue]) {
        guard case .int(let pid)? = fields[Field.pid] else { return nil }
        self.init(pid: pid)
    }
}

/// The fields' names on the socket.
enum Field {
    static let profile = "profile"
    static let kinds = "kinds"
    static let kind = "kind"
    static let git = "git"
    static let protocolName = "protocol"
    static let host = "host"
    static let path = "path"
    static let registry = "registry"
    static let minTTL = "min-ttl"
    static let scope = "scope"
    static let forgetDevice = "forget-device"
    static let binding = "binding"
    static let context = "context"
    static let userPoolID = "user-pool-id"
    static let clientID = "client-id"
    static let username = "username"
    static let secret = "secret"
    static let tokens = "tokens"
    static let status = "status"
    static let statuses = "statuses"
    static let stands = "stands"
    static let refused = "refused"
    static let couldNotCheck = "could-not-check"
    static let noSession = "no-session"
    static let category = "category"
    static let message = "message"
    static let removed = "removed"
    static let atCognito = "at-cognito"
    static let logout = "logout"
    static let name = "name"
    static let grant = "grant"
    static let config = "config"
    static let items = "items"
    static let found = "found"
    static let absent = "absent"
    static let boundElsewhere = "bound-elsewhere"
    static let unbound = "unbound"
    static let withheld = "withheld"
    static let existed = "existed"
    static let hash = "hash"
    static let pid = "pid"

    /// A configuration on the wire: the config file's own JSON.
    static func config(_ file: ConfigFile) -> JSONValue { JSONValue.parse(file.encoded()) ?? .null }

    static func config(_ value: JSONValue?) -> ConfigFile? {
        guard let value, case .object = value else { return nil }
        return try? ConfigFile.decode(Array(value.compactText.utf8), path: "the agent's configuration")
    }
}
