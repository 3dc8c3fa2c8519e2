import CogCredRead
import Synchronization

/// The unit tests' store: a MemoryTokenStore, with a log of every write (to
/// check their order) and a failure every call can be made to throw (an
/// unavailable keyring). Tests only: the agent keeps no log.
public final class InMemoryTokenStore: TokenStore {
    private let memory = MemoryTokenStore()
    /// Every write, in order, as "profile/kind".
    private let log = Mutex<[String]>([])
    private let failure = Mutex<SecretServiceError?>(nil)

    public init() {}

    public func read(_ kinds: [SecretKind], profile: String, binding: ItemBinding?) throws(SecretServiceError)
        -> [SecretKind: StoredSecret]
    {
        try failIfAsked()
        return try memory.read(kinds, profile: profile, binding: binding)
    }

    public func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        try failIfAsked()
        try memory.write(kind, profile: profile, secret: secret, context: context)
        log.withLock { $0.append("\(profile)/\(kind.rawValue)") }
    }

    public func prepareWrites() {}

    public func writePatiently(_ kind: SecretKind, profile: String, secret: String, context: ItemContext)
        throws(SecretServiceError)
    {
        try write(kind, profile: profile, secret: secret, context: context)
    }

    /// Stores an item with no binding, as cog-cred 0.1 did.
    public func writeUnbound(_ kind: SecretKind, profile: String, secret: String) {
        memory.store(kind, profile: profile, secret: secret, binding: nil)
    }

    public func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
        try failIfAsked()
        return try memory.delete(kind, profile: profile)
    }

    public var writes: [String] { log.withLock { $0 } }

    public func failAll(with error: SecretServiceError?) {
        failure.withLock { $0 = error }
    }

    private func failIfAsked() throws(SecretServiceError) {
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
