import Synchronization

/// The agent's keyring: one process serving many connections at once, with
/// one D-Bus connection (SecretServiceClient's, which is not made for two
/// callers at a time). Each call takes its turn; a call is an exchange
/// with the keyring daemon (a patient write a few, bounded by its
/// timeouts), never a wait on Cognito or on a person. After a
/// failure the connection is let go, so that a keyring daemon restarted in
/// the meantime is found again by the next request.
public final class OneAtATimeStore: TokenStore {
    let inner: any TokenStore
    let turn = Mutex(())

    public init(_ inner: any TokenStore) {
        self.inner = inner
    }

    func taking<T: Sendable>(_ call: () throws(SecretServiceError) -> T) throws(SecretServiceError) -> T {
        try turn.withLock { _ -> Result<T, SecretServiceError> in
            do throws(SecretServiceError) {
                return .success(try call())
            } catch {
                SecretServiceStore.disconnect()
                return .failure(error)
            }
        }.get()
    }

    public func read(_ kinds: [SecretKind], profile: String, binding: ItemBinding?) throws(SecretServiceError)
        -> [SecretKind: StoredSecret]
    {
        try taking { () throws(SecretServiceError) in try inner.read(kinds, profile: profile, binding: binding) }
    }

    public func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        try taking { () throws(SecretServiceError) in try inner.write(kind, profile: profile, secret: secret, context: context) }
    }

    public func writePatiently(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        try taking { () throws(SecretServiceError) in try inner.writePatiently(kind, profile: profile, secret: secret, context: context) }
    }

    public func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
        try taking { () throws(SecretServiceError) in try inner.delete(kind, profile: profile) }
    }

    public func prepareWrites() { inner.prepareWrites() }
}
