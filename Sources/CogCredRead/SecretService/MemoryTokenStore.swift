import Synchronization

/// Items kept in this process's memory only: a `cog-cred agent --memory`'s
/// sessions (which bounds what it takes: AgentService), and the unit tests'
/// store (InMemoryTokenStore wraps it with what tests look at). Nothing of
/// it is written anywhere; it ends with the process.
public final class MemoryTokenStore: TokenStore {
    private let items = Mutex<[String: (secret: String, binding: ItemBinding?)]>([:])

    public init() {}

    public func read(_ kinds: [SecretKind], profile: String, binding: ItemBinding?) throws(SecretServiceError)
        -> [SecretKind: StoredSecret]
    {
        items.withLock { items in
            kinds.reduce(into: [:]) { result, kind in
                guard let item = items[Self.key(kind, profile)] else {
                    result[kind] = .absent
                    return
                }
                if let binding, item.binding != binding {
                    result[kind] = .boundElsewhere(unbound: item.binding == nil)
                } else {
                    result[kind] = .found(item.secret)
                }
            }
        }
    }

    public func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        store(kind, profile: profile, secret: secret, binding: context.binding)
    }

    /// An item with `binding`, or none (as cog-cred 0.1 stored them).
    public func store(_ kind: SecretKind, profile: String, secret: String, binding: ItemBinding?) {
        items.withLock { $0[Self.key(kind, profile)] = (secret, binding) }
    }

    public func prepareWrites() {}

    /// Memory is never slow and never restarts: one more try is the same write.
    public func writePatiently(_ kind: SecretKind, profile: String, secret: String, context: ItemContext)
        throws(SecretServiceError)
    {
        try write(kind, profile: profile, secret: secret, context: context)
    }

    public func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
        items.withLock { $0.removeValue(forKey: Self.key(kind, profile)) != nil }
    }

    static func key(_ kind: SecretKind, _ profile: String) -> String { "\(profile)/\(kind.rawValue)" }
}
