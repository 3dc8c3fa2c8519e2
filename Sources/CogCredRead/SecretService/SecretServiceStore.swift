#if canImport(Glibc)
import Glibc
#endif

/// Tokens in the Secret Service (gnome-keyring, KeePassXC, KWallet), spoken
/// to directly over D-Bus with libdbus-1.
///
/// Storage contract, relied on by other tools: one item per token in the
/// default collection, found by the attributes `service=cog-cred`,
/// `profile=<name>`, `kind=access|id|refresh|client-secret|identity-id|aws-credentials|device`, and bound by
/// two more, `user-pool-id` and `client-id`, to the pool and app client that
/// issued it (plus libsecret's `xdg:schema`, so `secret-tool` and Seahorse
/// show the schema). Attributes hold only stable, non-secret keys; who the
/// tokens belong to goes in the label.
///
/// Every read asks the Secret Service; nothing is kept between processes.
/// The D-Bus calls themselves are in `SecretServiceClient`: libsecret spends
/// most of a lookup on per-process set-up (type registration, libgcrypt, an
/// encrypted session, proxies), the same calls made directly cost a fraction
/// of it (docs/performance.md).
public struct SecretServiceStore: TokenStore {
    public static let serviceName = "cog-cred"
    static let schemaName = "io.github.cog_cred.Token"
    let environment: @Sendable (String) -> String?
    /// Makes the encrypted session's algorithm, for a bus that is not
    /// reached through Unix sockets only; nil where it is not available.
    let encryption: (@Sendable () -> any SecretSessionAlgorithm)?

    /// Whether a locked keyring may be unlocked through the Secret Service's
    /// own password prompt (see `unlockingOnce`). Never in the front binary,
    /// whose reads must not wait on a person; cog-cred-cli decides per command.
    let unlockPrompt: UnlockPrompt
    /// Writes, deletes and unlocks (cog-cred-cli: libsecret); nil in the
    /// front, which only reads.
    let writer: (any SecretServiceWriter)?

    /// `environment` decides which session bus is used.
    public init(
        environment: @escaping @Sendable (String) -> String?,
        encryption: (@Sendable () -> any SecretSessionAlgorithm)? = nil,
        unlockPrompt: UnlockPrompt = .never, writer: (any SecretServiceWriter)? = nil
    ) {
        self.environment = environment
        self.encryption = encryption
        self.unlockPrompt = unlockPrompt
        self.writer = writer
    }

    public init(
        environment: [String: String], encryption: (@Sendable () -> any SecretSessionAlgorithm)? = nil,
        unlockPrompt: UnlockPrompt = .never, writer: (any SecretServiceWriter)? = nil
    ) {
        self.init(environment: { environment[$0] }, encryption: encryption, unlockPrompt: unlockPrompt, writer: writer)
    }

    /// When a locked keyring is unlocked by prompting.
    public enum UnlockPrompt: Sendable, Equatable {
        /// Never: a locked keyring is `.locked` at once.
        case never
        /// Ask the Secret Service to show its prompt, waiting this long for the person.
        case waitingAtMost(seconds: Int32)
    }

    /// Runs `body`; when it finds the keyring locked and this store may
    /// prompt, asks the Secret Service to unlock it and runs `body` once more.
    func unlockingOnce<T>(_ body: () throws(SecretServiceError) -> T) throws(SecretServiceError) -> T {
        do {
            return try body()
        } catch .locked {
            guard case .waitingAtMost(let seconds) = unlockPrompt, let writer else { throw .locked }
            // The items too: KeePassXC (ConfirmAccessItem) locks each item until its client is let in.
            guard try writer.unlock(matching: [("service", Self.serviceName)], waitingAtMost: seconds) else {
                throw .unlockDeclined
            }
            return try body()
        }
    }

    /// Connects to the Secret Service and opens the session now, without
    /// waiting for the answers: the keyring daemon works on them while this
    /// process does other things (the front reads its config meanwhile).
    /// A failure is kept and thrown by the first real call.
    public func connect() {
        _ = try? client()
    }

    /// Waits for what the connections of this process still have in flight
    /// (the keyring daemon must not see a client leave with a call
    /// unanswered: SecretServiceClient.settle says why), then closes them.
    /// Called before the process writes its answer and exits, or execs: the
    /// bus's and the keyring daemon's clean-up of a client that leaves then
    /// runs while this process finishes, instead of starting at the close
    /// that exit or exec would make, where the caller (or the exec'd
    /// command) waits for it (docs/performance.md).
    public static func disconnect() {
        SecretServiceClient.disconnectAll()
    }

    func client() throws(SecretServiceError) -> SecretServiceClient {
        let encryption = self.encryption
        return try SecretServiceClient.shared(address: try BusAddress.session(environment: environment)) { encryption?() }
    }

    public func read(_ kinds: [SecretKind], profile: String, binding: ItemBinding?) throws(SecretServiceError)
        -> [SecretKind: StoredSecret]
    {
        try unlockingOnce { () throws(SecretServiceError) in try readUnlocked(kinds, profile: profile, binding: binding) }
    }

    func readUnlocked(_ kinds: [SecretKind], profile: String, binding: ItemBinding?) throws(SecretServiceError)
        -> [SecretKind: StoredSecret]
    {
        let service = try client()
        // Not `joined(separator:)`: unspecialized, it looks its types up at
        // run time, which costs a read more than the rest of this function.
        var operation = "read the "
        for (index, kind) in kinds.enumerated() { operation += (index == 0 ? "" : " and ") + kind.displayName }
        var paths: [SecretKind: String] = [:]
        let found = try service.search(kinds.map { Self.attributes($0, profile, binding) }, operation: operation)
        for (kind, items) in zip(kinds, found) {
            // Only locked items: gnome-keyring shows them, without secrets.
            if items.unlocked.isEmpty && !items.locked.isEmpty { throw .locked }
            paths[kind] = try preferred(items.unlocked, service, operation)
        }
        let secrets = try service.secrets(of: Array(paths.values), operation: operation)
        // A missing item, or one whose secret is withheld, is asked about
        // once: a locked collection shows its items but not their secrets
        // (gnome-keyring), or hides them (KeePassXC). Say "locked" then,
        // never "not signed in".
        var collectionChecked = false
        func absent() throws(SecretServiceError) -> StoredSecret {
            if !collectionChecked {
                try service.checkDefaultCollectionUnlocked()
                collectionChecked = true
            }
            return .absent
        }
        var result: [SecretKind: StoredSecret] = [:]
        for kind in kinds {
            if let item = paths[kind] {
                if let secret = secrets[item] { result[kind] = .found(secret) } else { result[kind] = try absent() }
            } else if binding != nil,
                let other = try service.search([Self.attributes(kind, profile, nil)], operation: operation)[0].unlocked.first
            {
                let attributes = try service.attributes(of: other, operation: operation)
                result[kind] = .boundElsewhere(unbound: attributes["user-pool-id"] == nil)
            } else {
                result[kind] = try absent()
            }
        }
        return result
    }

    public func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        try write(kind, profile: profile, secret: secret, context: context, timeout: SecretServiceClient.callTimeoutMilliseconds)
    }

    /// For the one write that must not be lost (a rotated refresh token is
    /// the only copy of the session): tried for up to 10 seconds, each time
    /// on a new connection and session. gnome-keyring rewrites its whole
    /// keyring file on every change, which on a busy disk can take longer
    /// than the usual limit; and a keyring daemon that restarts meanwhile
    /// (a crash, a restart by D-Bus activation or by the user) invalidates
    /// the session this process opened, so only a new one reaches it once
    /// it is back.
    public func writePatiently(_ kind: SecretKind, profile: String, secret: String, context: ItemContext)
        throws(SecretServiceError)
    {
        let deadline = Deadline(secondsFromNow: 10)
        var pause = 0.05
        while true {
            let left = deadline.remaining
            do {
                return try write(
                    kind, profile: profile, secret: secret, context: context, timeout: Int32(max(0.1, left) * 1000))
            } catch .unlockDeclined {
                throw .unlockDeclined  // the person said no: asking again would be a nuisance
            } catch {
                guard left > pause else { throw error }
                if let address = try? BusAddress.session(environment: environment) {
                    SecretServiceClient.discard(address: address)
                }
                writer?.reset()
                sleep(seconds: pause)
                pause = min(pause * 2, 1)
            }
        }
    }

    func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext, timeout: Int32)
        throws(SecretServiceError)
    {
        try unlockingOnce { () throws(SecretServiceError) in
            try writeUnlocked(kind, profile: profile, secret: secret, context: context, timeout: timeout)
        }
    }

    func writeUnlocked(_ kind: SecretKind, profile: String, secret: String, context: ItemContext, timeout: Int32)
        throws(SecretServiceError)
    {
        let operation = "store the \(kind.displayName)"
        let who = context.username.map { ": \($0)" } ?? ""
        let label = "cog-cred \(kind.displayName) (\(profile)\(who))"
        var attributes = Self.attributes(kind, profile, context.binding)
        attributes.append(("xdg:schema", Self.schemaName))
        // The profile's items of this kind (the old value, and any bound to
        // another pool or client, or to none: cog-cred 0.1) are replaced by
        // the new one: created first and pruned after, so a reader never
        // finds none meanwhile.
        let writer = try self.writer(operation)
        let item = try writer.createItem(label: label, attributes: attributes, secret: secret, timeout: timeout)
        let found = try writer.items(matching: Self.attributes(kind, profile, nil), timeout: timeout)
        // An old value this connection may not touch (KeePassXC's access
        // confirmation) would be read again later: unlock first (unlockingOnce), then write again.
        if !found.locked.isEmpty { throw .locked }
        for other in found.unlocked where other != item {
            try writer.deleteItem(other, timeout: timeout)
        }
    }

    /// The writer, which only cog-cred-cli has.
    func writer(_ operation: String) throws(SecretServiceError) -> any SecretServiceWriter {
        guard let writer else { throw .failed(operation: operation, domain: "cog-cred", code: 0, detail: "this program only reads") }
        return writer
    }

    @discardableResult
    public func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
        try unlockingOnce { () throws(SecretServiceError) in try deleteUnlocked(kind, profile: profile) }
    }

    func deleteUnlocked(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
        let operation = "delete the \(kind.displayName)"
        let writer = try self.writer(operation)
        let timeout = SecretServiceClient.callTimeoutMilliseconds
        let found = try writer.items(matching: Self.attributes(kind, profile, nil), timeout: timeout)
        if !found.locked.isEmpty { throw .locked }
        for item in found.unlocked { try writer.deleteItem(item, timeout: timeout) }
        // Nothing found may mean a locked provider that hides its items
        // (KeePassXC): asked on the writer's connection, not a new one,
        // unless the provider lists a locked collection's items (gnome-keyring).
        if found.unlocked.isEmpty && !writer.listsLockedItems && writer.defaultCollectionLocked() == true { throw .locked }
        return !found.unlocked.isEmpty
    }

    public func prepareWrites() {
        writer?.prepare()
    }

    /// Of several items with the attributes asked for, cog-cred's own (its
    /// `xdg:schema`): the service lists them in no set order, and another
    /// program's item with the same attributes must not win by chance. The
    /// next write deletes the others (it prunes every other item of its kind).
    func preferred(_ items: [String], _ service: SecretServiceClient, _ operation: String) throws(SecretServiceError)
        -> String?
    {
        guard items.count > 1 else { return items.first }  // the usual case: no call more
        for item in items where try service.attributes(of: item, operation: operation)["xdg:schema"] == Self.schemaName {
            return item
        }
        return items.first
    }

    static func attributes(_ kind: SecretKind, _ profile: String, _ binding: ItemBinding?) -> [(String, String)] {
        var attributes = [("service", serviceName), ("profile", profile), ("kind", kind.rawValue)]
        if let binding {
            attributes += [("user-pool-id", binding.userPoolID), ("client-id", binding.clientID)]
        }
        return attributes
    }
}
