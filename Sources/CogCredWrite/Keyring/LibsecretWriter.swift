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
    var service: OpaquePointer?
    /// The default collection's path.
    var collection: String?
    /// The program that answers, learnt at connection: its quirks
    /// (SecretServiceProvider.replacesInPlace, .listsLockedItems).
    var provider: SecretServiceProvider?

    public init(environment: @escaping @Sendable (String) -> String?) {
        address = { () throws(SecretServiceError) in try BusAddress.session(environment: environment) }
        pthread_mutex_init(&mutex, nil)
    }

    public func createItem(label: String, attributes: [(String, String)], secret: String, timeout: Int32) throws(SecretServiceError)
        -> String
    {
        try call("store an item", timeout: timeout) { (service, collection, deadline, failure) in
            let table = LibsecretWriter.table(attributes)
            defer { csecret_attributes_free(table) }
            guard let path = csecret_create(
                service, collection, table, label, secret, provider?.replacesInPlace == true ? 1 : 0, deadline, failure) else {
                return nil
            }
            defer { csecret_free(path) }
            return String(cString: path)
        }
    }

    public func items(matching attributes: [(String, String)], timeout: Int32) throws(SecretServiceError)
        -> (unlocked: [String], locked: [String])
    {
        try call("find the items", timeout: timeout) { (service, collection, deadline, failure) in
            let table = LibsecretWriter.table(attributes)
            defer { csecret_attributes_free(table) }
            var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = nil
            var locked: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = nil
            guard csecret_search(service, table, &unlocked, &locked, deadline, failure) != 0 else { return nil }
            defer {
                csecret_strfreev(unlocked)
                csecret_strfreev(locked)
            }
            // Items of other collections are not cog-cred's to touch.
            let inCollection = { (paths: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> [String] in
                LibsecretWriter.strings(paths).filter { $0.hasPrefix(collection + "/") }
            }
            return (inCollection(unlocked), inCollection(locked))
        }
    }

    public func deleteItem(_ path: String, timeout: Int32) throws(SecretServiceError) {
        let _: Bool = try call("delete an item", timeout: timeout) { (service, _, deadline, failure) in
            csecret_delete(service, path, deadline, failure) != 0 ? true : nil
        }
    }

    public func unlock(matching attributes: [(String, String)], waitingAtMost seconds: Int32) throws(SecretServiceError) -> Bool {
        // The collection, and its items this connection may not read.
        let locked = try items(matching: attributes, timeout: 1500).locked
        return try call("unlock the keyring", timeout: seconds * 1000) { (service, collection, deadline, failure) in
            let all = LibsecretWriter.withStrings([collection] + locked) { csecret_unlock(service, $0, deadline, failure) != 0 }
            // A prompt dismissed, or not answered in time: still locked, not a failure.
            if failure.pointee.cancelled != 0 {
                csecret_failure_clear(failure)
                return false
            }
            return failure.pointee.set == 0 ? all : nil
        }
    }

    public func prepare() {
        // A plain thread: Foundation's first Thread costs milliseconds more.
        var thread = pthread_t()
        let writer = Unmanaged.passRetained(self).toOpaque()
        let started = pthread_create(&thread, nil, { writer in
            Unmanaged<LibsecretWriter>.fromOpaque(writer!).takeRetainedValue().connect()
            return nil
        }, writer)
        if started == 0 { pthread_detach(thread) } else { Unmanaged<LibsecretWriter>.fromOpaque(writer).release() }
    }

    /// Loads libsecret, connects and opens the session now, if not yet done.
    func connect() {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        guard service == nil || collection == nil else { return }
        let _: Bool? = try? once("connect", timeout: 1500) { _, _, _, _ in true }
    }

    public var listsLockedItems: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return provider?.listsLockedItems == true
    }

    /// (KeePassXC locks single items while its database is open.)
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
    /// deadline, and where its failure goes.
    typealias Body<T> = (OpaquePointer, String, OpaquePointer, UnsafeMutablePointer<csecret_failure>) -> T?

    /// Runs `body` with the service and default collection under a
    /// deadline of `timeout` ms; nil from `body` with the failure set is a
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
        guard csecret_load() != 0 else {
            let why = csecret_load_failure().map { String(cString: $0) } ?? "unknown"
            throw .failed(operation: operation, domain: "libsecret", code: 0, detail: "cannot be loaded (\(why)); install libsecret-1-0")
        }
        let deadline = csecret_deadline_start(timeout)!
        defer { csecret_deadline_end(deadline) }
        var failure = csecret_failure()
        defer { csecret_failure_clear(&failure) }
        if service == nil {
            // GLib would otherwise look for its own bus (and may autolaunch one).
            setenv("DBUS_SESSION_BUS_ADDRESS", try address().text, 1)
            service = csecret_service_open(deadline, &failure)
            guard service != nil else { throw LibsecretWriter.translate(failure, operation: "connect", timeout: timeout) }
            provider = SecretServiceProvider.onGLibBus()
        }
        if collection == nil {
            guard let path = csecret_default_collection(service, deadline, &failure) else {
                if failure.set == 0 { throw .noDefaultCollection }
                throw LibsecretWriter.translate(failure, operation: "find the default collection", timeout: timeout)
            }
            collection = String(cString: path)
            csecret_free(path)
        }
        guard let result = body(service!, collection!, deadline, &failure), failure.set == 0 else {
            throw LibsecretWriter.translate(failure, operation: operation, timeout: timeout)
        }
        return result
    }

    func forget() {
        collection = nil
        provider = nil
        if service != nil { csecret_service_close(service) }
        service = nil
    }

    static func strings(_ list: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> [String] {
        var result: [String] = []
        var each = list
        while let string = each?.pointee {
            result.append(String(cString: string))
            each = each!.successor()
        }
        return result
    }

    /// `strings` as a NULL-terminated C array for the length of `body`.
    static func withStrings<R>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) -> R) -> R {
        var copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        defer { for copy in copies { free(copy) } }
        return copies.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { body($0) }
        }
    }

    static func table(_ attributes: [(String, String)]) -> OpaquePointer {
        let table = csecret_attributes_new()!
        for (name, value) in attributes { csecret_attributes_add(table, name, value) }
        return table
    }

    /// A failed call as the store's errors: locked, no service, out of
    /// time, or the failure with libsecret's domain, code and message.
    static func translate(_ failure: csecret_failure, operation: String, timeout: Int32) -> SecretServiceError {
        guard failure.set != 0 else { return .failed(operation: operation, domain: "libsecret", code: 0, detail: "no answer") }
        let domain = failure.domain.map { String(cString: $0) } ?? ""
        let message = failure.message.map { String(cString: $0) } ?? ""
        if failure.cancelled != 0 { return .notResponding(seconds: Double(timeout) / 1000) }
        if failure.locked != 0 || message.contains("org.freedesktop.Secret.Error.IsLocked") { return .locked }
        if message.contains("ServiceUnknown") || message.contains("was not provided by any .service files") {
            return .serviceUnavailable(message)
        }
        return .failed(operation: operation, domain: domain, code: failure.code, detail: message)
    }
}

extension LibsecretWriter: KeyringPasswordUnlocking {
    public func defaultCollectionIsLocked() throws(SecretServiceError) -> Bool {
        let locked: Int32 = try call("check the keyring", timeout: 1500) { service, collection, _, _ in
            csecret_collection_locked(service, collection)
        }
        guard locked >= 0 else {
            throw .failed(operation: "check the keyring", domain: "cog-cred", code: 0,
                          detail: "the Secret Service did not say whether the default collection is locked")
        }
        return locked == 1
    }

    /// Through libsecret's session: encrypted where the service offers it,
    /// as every secret cog-cred-cli sends (CSecret.h).
    public func unlockDefaultCollection(password: [UInt8]) throws(SecretServiceError) -> PasswordUnlock {
        let outcome: Int32 = try call("unlock the keyring", timeout: 10_000) { service, collection, deadline, failure in
            let answer = password.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) {
                    csecret_unlock_with_password(service, collection, $0.baseAddress, $0.count, deadline, failure)
                }
            }
            return answer == 0 ? nil : answer
        }
        switch outcome {
        case CSECRET_PASSWORD_DENIED: return .denied
        case CSECRET_PASSWORD_NOT_SUPPORTED: return .notSupported
        default: return .unlocked
        }
    }
}
