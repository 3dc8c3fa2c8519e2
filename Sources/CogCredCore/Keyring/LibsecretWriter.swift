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
    var collection: UnsafeMutablePointer<SecretCollection>?

    public init(environment: @escaping @Sendable (String) -> String?) {
        address = { () throws(SecretServiceError) in try BusAddress.session(environment: environment) }
        pthread_mutex_init(&mutex, nil)
        csecret_quiet()
    }

    public func createItem(label: String, attributes: [(String, String)], secret: String, timeout: Int32) throws(SecretServiceError)
        -> String
    {
        try call("store an item", timeout: timeout) { (_, collection, deadline, error) in
            let table = LibsecretWriter.table(attributes)
            defer { g_hash_table_unref(table) }
            guard let path = csecret_create(collection, table, label, secret, deadline, error) else { return nil }
            defer { g_free(path) }
            return String(cString: path)
        }
    }

    public func items(matching attributes: [(String, String)], timeout: Int32) throws(SecretServiceError)
        -> (unlocked: [String], locked: [String])
    {
        try call("find the items", timeout: timeout) { (_, collection, deadline, error) in
            let table = LibsecretWriter.table(attributes)
            defer { g_hash_table_unref(table) }
            let found = csecret_search(collection, table, deadline, error)
            if error.pointee != nil { return nil }
            defer { g_list_free_full(found) { csecret_unref($0) } }
            var result: (unlocked: [String], locked: [String]) = ([], [])
            var each = found
            while let node = each {
                let path = String(cString: csecret_path(node.pointee.data))
                if csecret_is_locked(node.pointee.data) != 0 { result.locked.append(path) } else { result.unlocked.append(path) }
                each = node.pointee.next
            }
            return result
        }
    }

    public func deleteItem(_ path: String, timeout: Int32) throws(SecretServiceError) {
        let _: Bool = try call("delete an item", timeout: timeout) { (service, _, deadline, error) in
            csecret_delete(service, path, deadline, error) != 0 ? true : nil
        }
    }

    public func unlock(matching attributes: [(String, String)], waitingAtMost seconds: Int32) throws(SecretServiceError) -> Bool {
        try call("unlock the keyring", timeout: seconds * 1000) { (service, collection, deadline, error) in
            let table = LibsecretWriter.table(attributes)
            defer { g_hash_table_unref(table) }
            let all = csecret_unlock(service, collection, table, deadline, error) != 0
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
        let locked: Int32? = try? call("check the keyring", timeout: 1500) { service, _, _, _ in
            csecret_default_collection_locked(service)
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
        UnsafeMutablePointer<SecretService>, UnsafeMutablePointer<SecretCollection>, UnsafeMutablePointer<GCancellable>?,
        UnsafeMutablePointer<UnsafeMutablePointer<GError>?>
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
            collection = csecret_default_collection(service, deadline, &error)
            if collection == nil {
                if error == nil { throw .noDefaultCollection }
                throw LibsecretWriter.translate(error, operation: "find the default collection", timeout: timeout)
            }
        }
        guard let result = body(service!, collection!, deadline, &error), error == nil else {
            throw LibsecretWriter.translate(error, operation: operation, timeout: timeout)
        }
        return result
    }

    func forget() {
        if let collection { csecret_unref(collection) }
        collection = nil
        if let service {
            csecret_unref(service)
            secret_service_disconnect()
        }
        service = nil
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
