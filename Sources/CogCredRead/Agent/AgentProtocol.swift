// What `cog-cred agent` and its clients say to each other on the agent's
// UNIX socket: plain text, one JSON object a line, one request and one
// answer a connection. Both sides build and read the lines here.
//
// A request: {"v": 1, "op": "tokens", ...the operation's fields}, its
// fields and the answers' named in AgentMessages.
// The answer: any number of notes, {"v": 1, "note": "..."}, lines for the
// person the agent's work produced (a still-valid token handed out after a
// failed refresh), said as they happen; then {"v": 1, "ok": {...}} or
// {"v": 1, "error": {"category": "...", "message": "..."}}.
//
// Tokens cross the socket as they are, like everything on a local socket.
// The refresh token, the client secret and a device's keys never do: no
// operation answers with them (AgentService).

public enum AgentProtocol {
    /// Said in every line; a side that reads another version says so
    /// rather than guess (AgentFailure.versionMismatch).
    public static let version: Int64 = 1
    /// The variable that names the agent's socket for every command.
    public static let variable = "COG_CRED_AGENT"
    /// The most a request line may hold: a sign-in's three tokens fit many times over.
    public static let requestLimit = 1 << 20
    /// The most one item the agent keeps may hold: a token, a device, a
    /// client secret are a few KiB.
    public static let itemLimit = 256 << 10
    /// The most an answer may hold, notes included.
    public static let answerLimit = 16 << 20
    /// A client that sends nothing for this long is dropped.
    public static let silenceLimit = 10

    /// The operation a request names (AgentRequest says what each asks).
    enum Operation: String, Sendable {
        case tokens, refresh, status, profile, profiles, read, write, delete, stop
        case whoami
        case checkSession = "check-session"
        case signOut = "sign-out"
        case secretHash = "secret-hash"
    }

    /// The version a line says, for a message: 0 when it is not a whole number.
    public static func version(of value: JSONValue) -> Int64 {
        if case .int(let number) = value { return number }
        return 0
    }

    /// The kinds a client may read or be given: never the refresh token,
    /// the client secret or a remembered device's keys.
    public static let readable: [SecretKind] = [.access, .id, .identityID, .awsCredentials]

    /// The lines' own fields.
    static let versionField = "v"
    static let operationField = "op"
    static let noteField = "note"
    static let okField = "ok"
    static let errorField = "error"

    /// A request's line, newline included (AgentRequest.line).
    static func request(_ operation: Operation, _ fields: [String: JSONValue]) -> String {
        var members = fields
        members[versionField] = .int(version)
        members[operationField] = .string(operation.rawValue)
        return JSONValue.object(members).compactText + "\n"
    }

    public static func note(_ text: String) -> String {
        JSONValue.object([versionField: .int(version), noteField: .string(text)]).compactText + "\n"
    }

    public static func ok<Answer: AgentAnswer>(_ answer: Answer) -> String {
        JSONValue.object([versionField: .int(version), okField: .object(answer.fields)]).compactText + "\n"
    }

    public static func error(_ failure: AgentFailure) -> String {
        JSONValue.object([versionField: .int(version), errorField: CheckAnswer.failure(failure)]).compactText + "\n"
    }
}

extension FailureCategory {
    /// The category's name on the agent's socket.
    public var wireName: String {
        switch self {
        case .usage: return "usage"
        case .dataError: return "data"
        case .secretServiceUnavailable: return "secret-service-unavailable"
        case .temporary: return "temporary"
        case .notAuthenticated: return "not-authenticated"
        case .configuration: return "configuration"
        case .programUnavailable: return "program-unavailable"
        case .authenticatorUnavailable: return "authenticator-unavailable"
        case .protocolViolation: return "protocol"
        case .other: return "other"
        }
    }

    public init(wireName: String) {
        self = Self.allCases.first { $0.wireName == wireName } ?? .other
    }
}

/// A failure the agent reported, or one in reaching it. Its message is the
/// whole line (the agent words its own failures as cog-cred-cli would).
public struct AgentFailure: CogCredFailure, Equatable {
    public let category: FailureCategory
    public let message: String

    public init(_ category: FailureCategory, _ message: String) {
        self.category = category
        self.message = message
    }

    public static func named(_ path: String) -> String { "the agent at \(path) (\(AgentProtocol.variable))" }

    /// 69: no agent answers there. Never a reason to use the keyring instead.
    /// The way out is one that works where the command runs: with no
    /// session bus, a memory agent (a keyring agent would start, and fail at
    /// every sign-in); at a path an agent started here would not use, also
    /// the forward that should provide it.
    public static func unreachable(_ path: String, reason: String, place: AgentConnection.Place) -> AgentFailure {
        let start = place.hasBus
            ? "eval \"$(cog-cred agent --daemon)\""
            : "eval \"$(cog-cred agent --memory --daemon)\" (no session bus here, so no keyring for an agent)"
        let forward = place.providedFromElsewhere ? ", or reconnect the forward that provides it" : ""
        let unset = place.hasBus ? ", or unset \(AgentProtocol.variable)" : ""
        return AgentFailure(.secretServiceUnavailable, "cannot reach \(named(path)): \(reason); start one with: \(start)\(forward)\(unset)")
    }

    /// 69: the process at the socket is another user's (root's too: it serves root only).
    public static func foreignOwner(_ path: String, uid: UInt32, ownUID: UInt32) -> AgentFailure {
        AgentFailure(
            .secretServiceUnavailable,
            "\(named(path)) belongs to uid \(uid) and serves its own user only, not you (uid \(ownUID)): nothing was sent to it; start your own with cog-cred agent")
    }

    /// 69: the socket file is another user's, placed where the user's agent was meant to be.
    public static func foreignSocket(_ path: String, uid: UInt32, ownUID: UInt32) -> AgentFailure {
        AgentFailure(
            .secretServiceUnavailable,
            "\(named(path)) is a socket of uid \(uid), not yours (uid \(ownUID)): nothing was sent to it; start your own with cog-cred agent")
    }

    public static func broken(_ path: String, _ what: String) -> AgentFailure {
        AgentFailure(.protocolViolation, "\(named(path)) \(what)")
    }

    public static func versionMismatch(theirs: Int64, ours: Int64, side: String) -> AgentFailure {
        AgentFailure(
            .protocolViolation,
            "the \(side) speaks protocol \(theirs) and this cog-cred \(ours): run the same version of cog-cred on both sides")
    }
}
