#if canImport(Glibc)
import Glibc
#endif

/// Tokens in the Secret Service (gnome-keyring, KeePassXC, KWallet), spoken
/// to directly over D-Bus with GLib's gio.
///
/// Storage contract, relied on by other tools: one item per token in the
/// default collection, found by exactly the attributes `service=cog-cred`,
/// `profile=<name>`, `kind=access|id|refresh` (plus libsecret's
/// `xdg:schema`, so `secret-tool` and Seahorse show the schema). The
/// attributes are the item's identity, so they hold only those stable,
/// non-secret keys; who the tokens belong to goes in the label.
///
/// The D-Bus calls themselves are in `SecretServiceConnection`: libsecret
/// spent about 20 ms per process on set-up (type registration, libgcrypt,
/// an encrypted session, proxies for every collection) before its first
/// answer; the same work as direct Secret Service calls costs a few
/// milliseconds (docs/performance.md).
public struct SecretServiceStore: TokenStore {
    public static let serviceName = "cog-cred"
    static let schemaName = "io.github.cog_cred.Token"
    let environment: [String: String]

    /// `environment` decides which session bus is used; the process's own by default.
    public init(environment: [String: String]) {
        self.environment = environment
    }

    public func read(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> String? {
        let service = try SecretServiceConnection.shared(address: try busAddress())
        let operation = "read the \(kind.displayName)"
        let found = try service.search(SecretServiceStore.attributes(kind, profile), operation: operation)
        guard let item = found.unlocked.first else {
            // A locked collection shows its items as locked (or hides them):
            // say so rather than "not signed in".
            if !found.locked.isEmpty { throw .locked }
            try service.checkDefaultCollectionUnlocked()
            return nil
        }
        return try service.secret(of: item, operation: operation)
    }

    public func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        let service = try SecretServiceConnection.shared(address: try busAddress())
        let who = context.username.map { ": \($0)" } ?? ""
        var attributes = SecretServiceStore.attributes(kind, profile)
        attributes.append(("xdg:schema", SecretServiceStore.schemaName))
        // replace=true: an item with the same attributes is updated in place.
        try service.createItem(label: "cog-cred \(kind.displayName) (\(profile)\(who))", attributes: attributes,
                               secret: secret, operation: "store the \(kind.displayName)")
    }

    @discardableResult
    public func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
        let service = try SecretServiceConnection.shared(address: try busAddress())
        let operation = "delete the \(kind.displayName)"
        let found = try service.search(SecretServiceStore.attributes(kind, profile), operation: operation)
        if !found.locked.isEmpty { throw .locked }
        for item in found.unlocked { try service.deleteItem(item, operation: operation) }
        if found.unlocked.isEmpty { try service.checkDefaultCollectionUnlocked() }
        return !found.unlocked.isEmpty
    }

    static func attributes(_ kind: SecretKind, _ profile: String) -> [(String, String)] {
        [("service", serviceName), ("profile", profile), ("kind", kind.rawValue)]
    }

    /// The session bus's address. GLib, given none, may try to spawn a bus
    /// (`dbus-launch --autolaunch`), which hangs or litters headless
    /// machines: refuse unless a real bus is there.
    func busAddress() throws(SecretServiceError) -> String {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            if address.hasPrefix("autolaunch:") { throw .noSessionBus }
            return address
        }
        // GLib's own default when the variable is unset: the user bus socket.
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            var info = stat()
            if stat(runtime + "/bus", &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK {
                return "unix:path=" + runtime + "/bus"
            }
        }
        throw .noSessionBus
    }
}
