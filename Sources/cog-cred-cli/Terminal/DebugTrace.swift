import CogCredWrite
import Synchronization

/// `--debug` or COG_CRED_DEBUG=1: a trace on stderr of each call to
/// Cognito (NetworkReport) and each keyring step (TracedTokenStore): what
/// was asked, where, the answer's status and the time it took. Never a
/// secret, a token or a part of one: only kinds, profiles, URLs without
/// queries, statuses and the services' error texts.
enum DebugTrace {
    private static let on = Atomic<Bool>(false)

    static var enabled: Bool { on.load(ordering: .relaxed) }

    /// Takes `--debug` out of `arguments` (before any `--`: exec's command
    /// keeps its own), and turns the trace on for it or for a
    /// COG_CRED_DEBUG that is set and not 0.
    static func start(_ arguments: [String], variable: String?) -> [String] {
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        if arguments[..<end].contains("--debug") || DebugSwitch.isOn(variable) { on.store(true, ordering: .relaxed) }
        return arguments[..<end].filter { $0 != "--debug" } + arguments[end...]
    }

    static func line(_ text: @autoclosure () -> String) {
        guard enabled else { return }
        Output.note("cog-cred: debug: \(text())")
    }

    static func milliseconds(_ seconds: Double) -> String { "\(Int((seconds * 1000).rounded())) ms" }
}

/// A token store that traces each step: which kinds of which profile,
/// found or not, how long; never a value.
struct TracedTokenStore: TokenStore {
    let inner: any TokenStore

    func read(_ kinds: [SecretKind], profile: String, binding: ItemBinding?) throws(SecretServiceError) -> [SecretKind: StoredSecret] {
        try traced("read \(names(kinds)) of profile '\(profile.printable)'") { () throws(SecretServiceError) in
            let found = try inner.read(kinds, profile: profile, binding: binding)
            let each = kinds.map { kind -> String in
                switch found[kind] ?? .absent {
                case .found: "\(kind.rawValue) found"
                case .absent: "\(kind.rawValue) absent"
                case .boundElsewhere: "\(kind.rawValue) bound to another pool or client"
                case .withheld: "\(kind.rawValue) kept by the agent"
                }
            }
            return (found, each.joined(separator: ", "))
        }
    }

    func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        try traced("write \(kind.rawValue) of profile '\(profile.printable)'") { () throws(SecretServiceError) in
            try inner.write(kind, profile: profile, secret: secret, context: context)
            return ((), "stored")
        }
    }

    func writePatiently(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        try traced("write \(kind.rawValue) of profile '\(profile.printable)', patiently") { () throws(SecretServiceError) in
            try inner.writePatiently(kind, profile: profile, secret: secret, context: context)
            return ((), "stored")
        }
    }

    @discardableResult
    func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
        try traced("delete \(kind.rawValue) of profile '\(profile.printable)'") { () throws(SecretServiceError) in
            let deleted = try inner.delete(kind, profile: profile)
            return (deleted, deleted ? "deleted" : "none there")
        }
    }

    func prepareWrites() { inner.prepareWrites() }

    private func names(_ kinds: [SecretKind]) -> String { kinds.map(\.rawValue).joined(separator: ",") }

    private func traced<T>(_ step: String, _ body: () throws(SecretServiceError) -> (T, String)) throws(SecretServiceError) -> T {
        let start = ContinuousClock.now
        func took() -> String { DebugTrace.milliseconds(seconds(since: start)) }
        do {
            let (result, said) = try body()
            DebugTrace.line("keyring: \(step): \(said) in \(took())")
            return result
        } catch {
            DebugTrace.line("keyring: \(step): failed (\(ErrorWording.line(error).oneLine(limit: 200))) in \(took())")
            throw error
        }
    }
}
