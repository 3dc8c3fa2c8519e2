import CGio
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One connection to the session bus and one Secret Service session, opened
/// on first use and kept for the life of the process: the Secret Service API
/// (org.freedesktop.secrets) called directly with GLib's gio. Every call
/// has a time limit, so a hung keyring daemon fails the command instead of
/// stalling it.
final class SecretServiceConnection: @unchecked Sendable {
    static let busName = "org.freedesktop.secrets"
    static let servicePath = "/org/freedesktop/secrets"
    static let defaultCollection = "/org/freedesktop/secrets/aliases/default"

    /// How long one call may take before it is given up: a hung keyring
    /// daemon must fail a command, not stall it (GLib's default is 25 s).
    static let callTimeoutMilliseconds: Int32 = 1500

    private static let connections = Mutex<[String: Result<SecretServiceConnection, SecretServiceError>]>([:])

    static func shared(address: String) throws(SecretServiceError) -> SecretServiceConnection {
        try connections.withLock { cache in
            if let known = cache[address] { return known }
            let made = Result { () throws(SecretServiceError) in try SecretServiceConnection(address: address) }
            cache[address] = made
            return made
        }.get()
    }

    private let connection: OpaquePointer
    /// nil: the "plain" session (see `init`).
    private let cipher: SecretServiceCipher?
    private var session = "/"

    private init(address: String) throws(SecretServiceError) {
        var error: UnsafeMutablePointer<GError>? = nil
        let flags = GDBusConnectionFlags(rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
            | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
            let detail = error.map { String(cString: $0.pointee.message) } ?? "no reason given"
            if let error { g_error_free(error) }
            throw .serviceUnavailable("cannot connect to the session bus: \(detail)")
        }
        self.connection = connection
        // On a Unix-socket bus every party that could see the traffic is a
        // process of this user, which may as well ask the Secret Service
        // itself: the spec's "plain" session gives nothing away there, and
        // saves the Diffie-Hellman exchange (about 5 ms, most of it in the
        // keyring daemon). Any other transport (tcp:) crosses a network, so
        // secrets are encrypted as libsecret does.
        cipher = address.hasPrefix("unix:") ? nil : SecretServiceCipher()
        try openSession()
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(connection)) }

    private func openSession() throws(SecretServiceError) {
        let args = cipher.map { cipher in
            cipher.publicKey.withUnsafeBufferPointer {
                cgio_open_session_args(SecretServiceCipher.algorithm, $0.baseAddress, $0.count)
            }
        } ?? cgio_open_plain_session_args()
        let reply = try call(Self.servicePath, "org.freedesktop.Secret.Service", "OpenSession", args, operation: "connect")
        defer { g_variant_unref(reply) }
        if let cipher {
            let output = cgio_child(reply, 0)!
            defer { g_variant_unref(output) }
            guard cipher.agree(serverPublicKey: Self.bytes(output)) else {
                throw .failed(operation: "connect", domain: "cog-cred", code: 0,
                              detail: "the Secret Service sent an unusable key for the encrypted session")
            }
        }
        session = Self.path(reply, 1)
    }

    /// Items matching `attributes`, unlocked and locked.
    func search(_ attributes: [(String, String)], operation: String) throws(SecretServiceError)
        -> (unlocked: [String], locked: [String])
    {
        let reply = try call(Self.servicePath, "org.freedesktop.Secret.Service", "SearchItems",
                             cgio_search_args(Self.variant(attributes)), operation: operation)
        defer { g_variant_unref(reply) }
        return (Self.paths(reply, 0), Self.paths(reply, 1))
    }

    /// The secret of `item` as text; nil if the item went away meanwhile.
    func secret(of item: String, operation: String) throws(SecretServiceError) -> String? {
        let reply = try call(Self.servicePath, "org.freedesktop.Secret.Service", "GetSecrets",
                             cgio_get_secrets_args(item, session), operation: operation)
        defer { g_variant_unref(reply) }
        let secrets = cgio_child(reply, 0)!
        defer { g_variant_unref(secrets) }
        var parameters: OpaquePointer? = nil, value: OpaquePointer? = nil
        guard cgio_secret_of(secrets, item, &parameters, &value) != 0, let parameters, let value else { return nil }
        defer { g_variant_unref(parameters); g_variant_unref(value) }
        var plain = Self.bytes(value)
        if let cipher {
            guard let decrypted = cipher.decrypt(parameters: Self.bytes(parameters), value: plain) else {
                throw .failed(operation: operation, domain: "cog-cred", code: 0, detail: "the secret could not be decrypted")
            }
            plain.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
            plain = decrypted
        }
        defer { plain.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        return String(decoding: plain, as: UTF8.self)
    }

    func createItem(label: String, attributes: [(String, String)], secret: String, operation: String) throws(SecretServiceError) {
        var sealed = (parameters: [UInt8](), value: Array(secret.utf8))
        if let cipher {
            guard let encrypted = cipher.encrypt(sealed.value) else {
                throw .failed(operation: operation, domain: "cog-cred", code: 0, detail: "the secret could not be encrypted")
            }
            sealed = encrypted
        }
        let args = sealed.parameters.withUnsafeBufferPointer { iv in
            sealed.value.withUnsafeBufferPointer { value in
                cgio_create_item_args(label, Self.variant(attributes), session, iv.baseAddress, iv.count,
                                      value.baseAddress, value.count, "text/plain")
            }
        }
        let reply: OpaquePointer
        do throws(SecretServiceError) {
            reply = try call(Self.defaultCollection, "org.freedesktop.Secret.Collection", "CreateItem", args,
                             operation: operation)
        } catch {
            // No default collection, or a locked one, has its own message.
            try checkDefaultCollectionUnlocked()
            throw error
        }
        defer { g_variant_unref(reply) }
        // A prompt instead of an item: the collection must be unlocked first.
        if Self.path(reply, 1) != "/" || Self.path(reply, 0) == "/" { throw .locked }
    }

    func deleteItem(_ item: String, operation: String) throws(SecretServiceError) {
        let reply = try call(item, "org.freedesktop.Secret.Item", "Delete", nil, operation: operation)
        defer { g_variant_unref(reply) }
        if Self.path(reply, 0) != "/" { throw .locked }
    }

    /// Throws `.noDefaultCollection` or `.locked` when the default collection
    /// cannot hold or show items. Costs two round trips, so asked only after
    /// a search found nothing or a write failed.
    func checkDefaultCollectionUnlocked() throws(SecretServiceError) {
        let alias = try call(Self.servicePath, "org.freedesktop.Secret.Service", "ReadAlias", cgio_string_args("default"),
                             operation: "open the default collection")
        let collection = Self.path(alias, 0)
        g_variant_unref(alias)
        guard collection != "/" else { throw .noDefaultCollection }
        let locked = try call(collection, "org.freedesktop.DBus.Properties", "Get",
                              cgio_two_strings_args("org.freedesktop.Secret.Collection", "Locked"),
                              operation: "open the default collection")
        defer { g_variant_unref(locked) }
        let value = cgio_child(locked, 0)!
        defer { g_variant_unref(value) }
        if cgio_variant_boolean(value) != 0 { throw .locked }
    }

    // MARK: - D-Bus plumbing

    /// One method call to the Secret Service; `args` (floating) is consumed.
    private func call(_ path: String, _ interface: String, _ method: String, _ args: OpaquePointer?,
                      operation: String) throws(SecretServiceError) -> OpaquePointer
    {
        var error: UnsafeMutablePointer<GError>? = nil
        let reply = g_dbus_connection_call_sync(connection, Self.busName, path, interface, method, args, nil,
                                                G_DBUS_CALL_FLAGS_NONE, Self.callTimeoutMilliseconds, nil, &error)
        if let error { throw Self.consume(error, operation: operation) }
        guard let reply else {
            throw .failed(operation: operation, domain: "gio", code: 0, detail: "no reply")
        }
        return reply
    }

    /// Turns a GError into a Swift error and frees it: the one place GErrors end.
    static func consume(_ error: UnsafeMutablePointer<GError>, operation: String) -> SecretServiceError {
        defer { g_error_free(error) }
        let domain = String(cString: cgio_error_domain(error))
        let code = error.pointee.code
        let remote = cgio_remote_error(error).map { name in
            defer { g_free(name) }
            return String(cString: name)
        }
        let detail = error.pointee.message.map { String(cString: $0) } ?? ""
        switch (domain, code, remote) {
        case ("g-io-error-quark", 24, _):  // G_IO_ERROR_TIMED_OUT
            return .notResponding(seconds: Double(callTimeoutMilliseconds) / 1000)
        case (_, _, "org.freedesktop.Secret.Error.IsLocked"):
            return .locked
        case ("g-dbus-error-quark", 2, _), ("g-dbus-error-quark", 3, _):  // SERVICE_UNKNOWN, NAME_HAS_NO_OWNER
            return .serviceUnavailable(detail)
        case ("g-io-error-quark", _, _) where detail.contains("connect"):
            return .serviceUnavailable("cannot connect to the session bus: \(detail)")
        default:
            return .failed(operation: operation, domain: remote ?? domain, code: code, detail: detail)
        }
    }

    static func variant(_ attributes: [(String, String)]) -> OpaquePointer {
        let keys = attributes.map { strdup($0.0) }, values = attributes.map { strdup($0.1) }
        defer { (keys + values).forEach { free($0) } }
        return keys.map { UnsafePointer($0) }.withUnsafeBufferPointer { k in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { v in
                cgio_attributes(k.baseAddress, v.baseAddress, attributes.count)!
            }
        }
    }

    static func bytes(_ value: OpaquePointer) -> [UInt8] {
        var length = 0
        guard let data = cgio_bytes(value, &length) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }

    /// The object path at `index` of a reply tuple.
    static func path(_ reply: OpaquePointer, _ index: Int) -> String {
        let child = cgio_child(reply, index)!
        defer { g_variant_unref(child) }
        return String(cString: cgio_string(child))
    }

    /// The object paths of the `ao` at `index` of a reply tuple.
    static func paths(_ reply: OpaquePointer, _ index: Int) -> [String] {
        let array = cgio_child(reply, index)!
        defer { g_variant_unref(array) }
        return (0..<cgio_count(array)).map { i in
            let child = cgio_child(array, i)!
            defer { g_variant_unref(child) }
            return String(cString: cgio_string(child))
        }
    }
}
