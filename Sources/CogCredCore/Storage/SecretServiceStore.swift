import CSecret
#if canImport(Glibc)
import Glibc
#endif

/// Tokens in the Secret Service (gnome-keyring, KeePassXC, KWallet) through
/// libsecret.
///
/// Storage contract, relied on by other tools: one item per token in the
/// default collection, found by exactly the attributes `service=cog-cred`,
/// `profile=<name>`, `kind=access|id|refresh`. The attributes are the item's
/// identity, so they hold only those stable, non-secret keys; who the tokens
/// belong to goes in the label, which a person sees in a keyring browser.
public struct SecretServiceStore: TokenStore {
    public static let serviceName = "cog-cred"
    let environment: [String: String]

    /// `environment` decides which session bus is used; the process's own by default.
    public init(environment: [String: String]) {
        self.environment = environment
    }

    public func read(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> String? {
        try checkSessionBus()
        let attributes = SecretServiceStore.attributes(kind, profile)
        defer { csecret_hash_table_unref(attributes) }
        var error: UnsafeMutablePointer<GError>? = nil
        let value = SecretServiceStore.guarded { secret_password_lookupv_sync(SecretServiceStore.schema, attributes, $0, &error) }
        if let error { throw SecretServiceStore.consume(error, operation: "read the \(kind.displayName)") }
        guard let value else {
            // libsecret answers a locked collection with "nothing", exactly as
            // it answers a missing item: ask the collection before saying
            // "not signed in".
            try checkDefaultCollectionUnlocked()
            return nil
        }
        defer { secret_password_free(value) }
        return String(cString: value)
    }

    public func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
        try checkSessionBus()
        let attributes = SecretServiceStore.attributes(kind, profile)
        defer { csecret_hash_table_unref(attributes) }
        let who = context.username.map { ": \($0)" } ?? ""
        let label = "cog-cred \(kind.displayName) (\(profile)\(who))"
        var error: UnsafeMutablePointer<GError>? = nil
        // Same attributes: the Secret Service replaces the existing item in place.
        let stored = SecretServiceStore.guarded {
            secret_password_storev_sync(SecretServiceStore.schema, attributes, SECRET_COLLECTION_DEFAULT, label, secret, $0, &error)
        }
        if let error { throw SecretServiceStore.consume(error, operation: "store the \(kind.displayName)") }
        if stored == 0 {
            throw .failed(operation: "store the \(kind.displayName)", domain: "libsecret", code: 0, detail: "no reason given")
        }
    }

    @discardableResult
    public func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
        try checkSessionBus()
        let attributes = SecretServiceStore.attributes(kind, profile)
        defer { csecret_hash_table_unref(attributes) }
        var error: UnsafeMutablePointer<GError>? = nil
        let removed = SecretServiceStore.guarded { secret_password_clearv_sync(SecretServiceStore.schema, attributes, $0, &error) }
        if let error { throw SecretServiceStore.consume(error, operation: "delete the \(kind.displayName)") }
        if removed == 0 {
            // Nothing deleted: either there was nothing, or the collection is locked.
            try checkDefaultCollectionUnlocked()
        }
        return removed != 0
    }

    // MARK: - Guards

    /// GLib, given no session bus address, may try to spawn one
    /// (`dbus-launch --autolaunch`), which hangs or litters headless machines.
    /// Refuse before libsecret is ever called unless a real bus is there.
    func checkSessionBus() throws(SecretServiceError) {
        try checkBusAddress()
        if let failure = SecretServiceStore.connection { throw failure }
    }

    /// Connects once per process (libsecret keeps the connection).
    static let connection: SecretServiceError? = {
        var error: UnsafeMutablePointer<GError>? = nil
        let service = guarded { cancellable in secret_service_get_sync(SECRET_SERVICE_NONE, cancellable, &error) }
        if let error { return consume(error, operation: "connect") }
        guard let service else { return .serviceUnavailable("no answer") }
        csecret_object_unref(service)
        return nil
    }()

    /// How long one call to the Secret Service may take before it is given
    /// up: a hung keyring daemon must fail a command, not stall it.
    static let callTimeoutMilliseconds: Int32 = 1500

    /// Runs a libsecret call with a cancellable that a watchdog cancels
    /// after `callTimeoutMilliseconds`; the call then fails with
    /// G_IO_ERROR_CANCELLED, which `consume` reports as a timeout.
    static func guarded<T>(_ call: (UnsafeMutablePointer<GCancellable>?) -> T) -> T {
        let watchdog = csecret_watchdog_start(callTimeoutMilliseconds)
        defer { csecret_watchdog_stop(watchdog) }
        return call(csecret_watchdog_cancellable(watchdog))
    }

    func checkBusAddress() throws(SecretServiceError) {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            if address.hasPrefix("autolaunch:") { throw .noSessionBus }
            return
        }
        // GLib's own default when the variable is unset: the user bus socket.
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            var info = stat()
            if stat(runtime + "/bus", &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK {
                return
            }
        }
        throw .noSessionBus
    }

    /// Throws `.locked` or `.noDefaultCollection` when the default collection
    /// cannot hold or show items. Costs a round trip, so only asked after a
    /// lookup found nothing.
    func checkDefaultCollectionUnlocked() throws(SecretServiceError) {
        var error: UnsafeMutablePointer<GError>? = nil
        let service = SecretServiceStore.guarded { secret_service_get_sync(SECRET_SERVICE_NONE, $0, &error) }
        if let error { throw SecretServiceStore.consume(error, operation: "connect") }
        guard let service else { throw .serviceUnavailable("no answer") }
        defer { csecret_object_unref(service) }
        let collection = SecretServiceStore.guarded {
            secret_collection_for_alias_sync(service, SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_NONE, $0, &error)
        }
        if let error { throw SecretServiceStore.consume(error, operation: "open the default collection") }
        guard let collection else { throw .noDefaultCollection }
        defer { csecret_object_unref(collection) }
        if secret_collection_get_locked(collection) != 0 { throw .locked }
    }

    // MARK: - libsecret plumbing

    /// Built once: the schema names the attribute types for libsecret.
    /// DONT_MATCH_NAME lets items written by other tools with the same
    /// attributes (such as `secret-tool store`) be found too.
    nonisolated(unsafe) static let schema: UnsafeMutablePointer<SecretSchema> = {
        let types = csecret_schema_types_new()
        defer { csecret_hash_table_unref(types) }
        for name in ["service", "profile", "kind"] { csecret_schema_types_add_string(types, name) }
        return secret_schema_newv("io.github.cog_cred.Token", SECRET_SCHEMA_DONT_MATCH_NAME, types)
    }()

    static func attributes(_ kind: SecretKind, _ profile: String) -> OpaquePointer {
        let table = csecret_attributes_new()!
        csecret_attributes_insert(table, "service", serviceName)
        csecret_attributes_insert(table, "profile", profile)
        csecret_attributes_insert(table, "kind", kind.rawValue)
        return table
    }

    /// Turns a GError into a Swift error and frees it: the one place GErrors end.
    static func consume(_ error: UnsafeMutablePointer<GError>, operation: String) -> SecretServiceError {
        defer { g_error_free(error) }
        let domain = String(cString: csecret_error_domain(error))
        let code = error.pointee.code
        let detail = error.pointee.message.map { String(cString: $0) } ?? ""
        switch (domain, code) {
        case ("g-io-error-quark", 19):  // G_IO_ERROR_CANCELLED: our watchdog fired
            return .notResponding(seconds: Double(callTimeoutMilliseconds) / 1000)
        case ("secret-error-quark", 2):  // SECRET_ERROR_IS_LOCKED
            return .locked
        case ("g-dbus-error-quark", 2), ("g-dbus-error-quark", 3):  // SERVICE_UNKNOWN, NAME_HAS_NO_OWNER
            return .serviceUnavailable(detail)
        case ("g-dbus-error-quark", 19) where detail.contains("/collection/"):  // UNKNOWN_OBJECT
            return .noDefaultCollection
        case ("g-io-error-quark", _) where detail.contains("connect") || detail.contains("autolaunch"):
            return .serviceUnavailable("cannot connect to the session bus: \(detail)")
        default:
            return .failed(operation: operation, domain: domain, code: code, detail: detail)
        }
    }
}
