import CSecret

#if canImport(Glibc)
import Glibc
#endif

/// cog-cred-cli's writes, deletes and unlocks, through libsecret: it follows
/// every prompt a provider returns (KeePassXC's create and delete
/// confirmations, KWallet's and gnome-keyring's unlock), as the providers
/// test their clients against it. Reads stay on SecretServiceStore's own
/// libdbus-1 client, which both binaries share.
///
/// Each call has a deadline: a prompt that nobody answers (a dialog on a
/// display nobody watches, none at all over SSH) fails the command instead
/// of holding it. A call that fails for its session (KWallet disagrees with
/// libsecret over the Diffie-Hellman key's length about once in a hundred
/// sessions: "Client public key size is invalid") is made once more on a
/// new connection and session.
public final class LibsecretWriter: SecretServiceWriter, @unchecked Sendable {
    /// The bus address SecretServiceStore checked (no autolaunch, no
    /// guessing); libsecret is told to use exactly it.
    let address: @Sendable () throws(SecretServiceError) -> BusAddress
    /// libsecret's objects are used from one thread at a time.
    var mutex = pthread_mutex_t()
    var service: UnsafeMutablePointer<SecretService>?
    /// The default collection's path.
    var collection: String?

    public init(environment: @escaping @Sendable (String) -> String?) {
        address = { () throws(SecretServiceError) in try BusAddress.session(environment: environment) }
        pthread_mutex_init(&mutex, nil)
        csecret_quiet()
    }

    public func createItem(label: String, attributes: [(String, String)], secret: String, timeout: Int32) throws(SecretServiceError)
        -> String
    {
        try call("store an item", timeout: timeout) { (service, collection, deadline, error) in
            let table = LibsecretWriter.table(attributes)
            defer { g_hash_table_unref(table) }
            guard let path = csecret_create(service, collection, table, label, secret, deadline, error) else { return nil }
            defer { g_free(path) }
            return String(cString: path)
        }
    }

    public func items(matching attributes: [(String, String)], timeout: Int32) throws(SecretServiceError)
        -> (unlocked: [String], locked: [String])
    {
        try call("find the items", timeout: timeout) { (service, collection, deadline, error) in
            let table = LibsecretWriter.table(attributes)
            defer { g_hash_table_unref(table) }
            var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>? = nil
            var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>? = nil
            guard csecret_search(service, table, &unlocked, &locked, deadline, error) != 0 else { return nil }
            defer {
                g_strfreev(unlocked)
                g_strfreev(locked)
            }
            // Items of other collections are not cog-cred's to touch.
            let inCollection = { (paths: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] in
                LibsecretWriter.strings(paths).filter { $0.hasPrefix(collection + "/") }
            }
            return (inCollection(unlocked), inCollection(locked))
        }
    }

    public func deleteItem(_ path: String, timeout: Int32) throws(SecretServiceError) {
        let _: Bool = try call("delete an item", timeout: timeout) { (service, _, deadline, error) in
            csecret_delete(service, path, deadline, error) != 0 ? true : nil
        }
    }

    public func unlock(matching attributes: [(String, String)], waitingAtMost seconds: Int32) throws(SecretServiceError) -> Bool {
        // The collection, and its items this connection may not read.
        let locked = try items(matching: attributes, timeout: 1500).locked
        return try call("unlock the keyring", timeout: seconds * 1000) { (service, collection, deadline, error) in
            let all = LibsecretWriter.withStrings([collection] + locked) { csecret_unlock(service, $0, deadline, error) != 0 }
            // A prompt dismissed, or not answered in time: still locked, not a failure.
            if let failure = error.pointee, LibsecretWriter.isCancelled(failure) {
                g_clear_error(error)
                return false
            }
            return error.pointee == nil ? all : nil
        }
    }

    /// Whether the default collection itself is locked now; nil when that
    /// cannot be told. (KeePassXC locks single items while its database is open.)
    public func defaultCollectionLocked() -> Bool? {
        let locked: Int32? = try? call("check the keyring", timeout: 1500) { service, collection, _, _ in
            csecret_collection_locked(service, collection)
        }
        return locked.flatMap { $0 < 0 ? nil : $0 == 1 }
    }

    public func reset() {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        forget()
    }

    // MARK: - Plumbing

    /// A libsecret call: the service, the default collection, the call's
    /// deadline, and where its GError goes.
    typealias Body<T> = (
        UnsafeMutablePointer<SecretService>, String, UnsafeMutablePointer<GCancellable>?, UnsafeMutablePointer<UnsafeMutablePointer<GError>?>
    ) -> T?

    /// Runs `body` with the service and default collection under a
    /// deadline of `timeout` ms; nil from `body` with the GError set is a
    /// failure. A failure of the session is tried once more on a new one.
    func call<T>(
        _ operation: String, timeout: Int32,
        _ body: Body<T>
    ) throws(SecretServiceError) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        do {
            return try once(operation, timeout: timeout, body)
        } catch {
            guard case .failed = error else { throw error }
            forget()  // a new connection and session, once
            return try once(operation, timeout: timeout, body)
        }
    }

    func once<T>(
        _ operation: String, timeout: Int32,
        _ body: Body<T>
    ) throws(SecretServiceError) -> T {
        let deadline = csecret_deadline(timeout)
        defer {
            g_cancellable_cancel(deadline)
            g_object_unref(deadline)
        }
        var error: UnsafeMutablePointer<GError>? = nil
        defer { if error != nil { g_error_free(error) } }
        if service == nil {
            // GLib would otherwise look for its own bus (and may autolaunch one).
            setenv("DBUS_SESSION_BUS_ADDRESS", try address().text, 1)
            service = csecret_service(deadline, &error)
            guard service != nil else { throw LibsecretWriter.translate(error, operation: "connect", timeout: timeout) }
        }
        if collection == nil {
            guard let path = csecret_default_collection(service, deadline, &error) else {
                if error == nil { throw .noDefaultCollection }
                throw LibsecretWriter.translate(error, operation: "find the default collection", timeout: timeout)
            }
            collection = String(cString: path)
            g_free(path)
        }
        guard let result = body(service!, collection!, deadline, &error), error == nil else {
            throw LibsecretWriter.translate(error, operation: operation, timeout: timeout)
        }
        return result
    }

    func forget() {
        collection = nil
        if let service {
            csecret_unref(service)
            secret_service_disconnect()
        }
        service = nil
    }

    static func strings(_ list: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
        var result: [String] = []
        var each = list
        while let string = each?.pointee {
            result.append(String(cString: string))
            each = each!.successor()
        }
        return result
    }

    /// `strings` as a NULL-terminated C array for the length of `body`.
    static func withStrings<R>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<gchar>?>) -> R) -> R {
        var copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        defer { for copy in copies { free(copy) } }
        return copies.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<gchar>?.self, capacity: buffer.count) { body($0) }
        }
    }

    static func table(_ attributes: [(String, String)]) -> OpaquePointer {
        let table = csecret_attributes_new()!
        for (name, value) in attributes { csecret_attributes_add(table, name, value) }
        return table
    }

    static func isCancelled(_ error: UnsafeMutablePointer<GError>) -> Bool {
        error.pointee.domain == g_io_error_quark() && error.pointee.code == Int32(G_IO_ERROR_CANCELLED.rawValue)
    }

    /// A GError as the store's errors: locked, no service, out of time, or
    /// the failure with libsecret's domain, code and message.
    static func translate(_ error: UnsafeMutablePointer<GError>?, operation: String, timeout: Int32) -> SecretServiceError {
        guard let error else { return .failed(operation: operation, domain: "libsecret", code: 0, detail: "no answer") }
        let domain = String(cString: g_quark_to_string(error.pointee.domain))
        let message = error.pointee.message.map { String(cString: $0) } ?? ""
        if isCancelled(error) { return .notResponding(seconds: Double(timeout) / 1000) }
        if error.pointee.domain == secret_error_get_quark() && error.pointee.code == Int32(SECRET_ERROR_IS_LOCKED.rawValue) {
            return .locked
        }
        if message.contains("org.freedesktop.Secret.Error.IsLocked") { return .locked }
        if message.contains("ServiceUnknown") || message.contains("was not provided by any .service files") {
            return .serviceUnavailable(message)
        }
        return .failed(operation: operation, domain: domain, code: error.pointee.code, detail: message)
    }
}
