import Synchronization

/// A token store in memory, for tests and for composing fakes.
public final class InMemoryTokenStore: TokenStore {
    private let items = Mutex<[String: (secret: String, binding: ItemBinding?)]>([:])
    /// Every write, in order, as "profile/kind": lets tests check write order.
    private let log = Mutex<[String]>([])
    /// When set, every call throws it: simulates an unavailable keyring.
    private let failure = Mutex<SecretServiceError?>(nil)

    public init() {}

    public func read(_ kinds: [SecretKind], profile: String, binding: ItemBinding?) throws(SecretServiceError)
        -> [SecretKind: StoredSecret]
    {
        if let error = failure.withLock({ $0 }) { throw error }
        var result: [SecretKind: StoredSecret] = [:]
        for kind in kinds {
            guard let item = items.withLock({ $0[key(kind, profile)] }) else {
                result[kind] = .absent
                continue
            }
            if let binding, item.binding != binding {
                result[kind] = .boundElsewhere(unbound: item.binding == nil)
            } else {
                result[kind] = .found(item.secret)
            }
        }
        return result
    }

    public func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        if let error = failure.withLock({ $0 }) { throw error }
        items.withLock { $0[key(kind, profile)] = (secret, context.binding) }
        log.withLock { $0.append(key(kind, profile)) }
    }

    public func prepareWrites() {}

    /// Memory is never slow and never restarts: one more try is the same write.
    public func writePatiently(_ kind: SecretKind, profile: String, secret: String, context: ItemContext)
        throws(SecretServiceError)
    {
        try write(kind, profile: profile, secret: secret, context: context)
    }

    /// Stores an item with no binding, as cog-cred 0.1 did.
    public func writeUnbound(_ kind: SecretKind, profile: String, secret: String) {
        items.withLock { $0[key(kind, profile)] = (secret, nil) }
    }

    public func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
        if let error = failure.withLock({ $0 }) { throw error }
        return items.withLock { $0.removeValue(forKey: key(kind, profile)) != nil }
    }

    public var writes: [String] { log.withLock { $0 } }

    public func failAll(with error: SecretServiceError?) {
        failure.withLock { $0 = error }
    }

    private func key(_ kind: SecretKind, _ profile: String) -> String { "\(profile)/\(kind.rawValue)" }
}
