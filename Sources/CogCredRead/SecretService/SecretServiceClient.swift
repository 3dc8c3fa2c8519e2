import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// How secrets travel between the Secret Service and this process: the
/// spec's "plain" algorithm, or an encrypted session such as
/// `dh-ietf1024-sha256-aes128-cbc-pkcs7` (implemented in CogCredWrite with
/// OpenSSL, which the read-side library does not load).
public protocol SecretSessionAlgorithm: AnyObject {
    /// The algorithm's name in OpenSession.
    var name: String { get }
    /// OpenSession's input: this side's public key.
    var input: [UInt8] { get }
    /// Takes OpenSession's output (the service's public key); false if unusable.
    func agree(serverPublicKey: [UInt8]) -> Bool
    func encrypt(_ plaintext: [UInt8]) -> (parameters: [UInt8], value: [UInt8])?
    func decrypt(parameters: [UInt8], value: [UInt8]) -> [UInt8]?
}

/// One connection to the session bus and one Secret Service session, opened
/// on first use and kept for the life of the process: the Secret Service API
/// (org.freedesktop.secrets) called directly with libdbus-1. Every call has
/// a time limit, so a hung keyring daemon fails the command instead of
/// stalling it. All items live in the default collection: reads take only
/// its items, writes create items in it, so the two can never look at
/// different keyrings.
///
/// The default collection is found with `ReadAlias("default")` and then
/// addressed by its own path, never as `/aliases/default`: gnome-keyring
/// (42) rewrites alias paths on a worker thread while its main thread may be
/// replacing the alias table for a newly arrived client, and a call sent to
/// the alias path right behind a client's first message can reach a freed
/// name ("Object does not exist at path …/collection/<garbage>") or crash
/// the daemon. libsecret resolves the alias the same way.
final class SecretServiceClient: @unchecked Sendable {
    static let busName = "org.freedesktop.secrets"
    static let servicePath = "/org/freedesktop/secrets"
    static let serviceInterface = "org.freedesktop.Secret.Service"
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let itemInterface = "org.freedesktop.Secret.Item"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    /// How long one call may take before it is given up: a hung keyring
    /// daemon must fail a command, not stall it (libdbus's default is 25 s).
    static let callTimeoutMilliseconds: Int32 = 1500

    private static let clients = Mutex<[String: Result<SecretServiceClient, SecretServiceError>]>([:])

    /// The client for `address`, made once per process. `algorithm` is asked
    /// for only when the session must be encrypted.
    static func shared(address: BusAddress, algorithm: (() -> (any SecretSessionAlgorithm)?)) throws(SecretServiceError)
        -> SecretServiceClient
    {
        try clients.withLock { known in
            if let client = known[address.text] { return client }
            let made = Result { () throws(SecretServiceError) in
                try SecretServiceClient(address: address, algorithm: algorithm)
            }
            known[address.text] = made
            return made
        }.get()
    }

    private let bus: DBusConnection
    /// nil: the "plain" session.
    private let algorithm: (any SecretSessionAlgorithm)?
    /// ReadAlias, sent at connection, and OpenSession, sent with the first
    /// searches: each answer is read when it is first needed.
    private var openSession: PendingCall?
    private var openedSession: String?
    private var readAlias: PendingCall?
    private var aliasedCollection: String?

    private init(address: BusAddress, algorithm makeAlgorithm: () -> (any SecretSessionAlgorithm)?)
        throws(SecretServiceError)
    {
        // On a bus reached only through Unix sockets every party that could
        // see the traffic is a process of this user, which may as well ask
        // the Secret Service itself: the spec's "plain" session gives nothing
        // away there and saves a Diffie-Hellman exchange. Any other transport
        // (tcp:) crosses a network, so secrets are encrypted as libsecret does.
        if address.isLocalOnly {
            algorithm = nil
        } else {
            guard let algorithm = makeAlgorithm() else { throw .needsEncryptedSession }
            self.algorithm = algorithm
        }
        do {
            bus = try DBusConnection(address: address.text)
        } catch {
            throw .serviceUnavailable("cannot connect to the session bus: \(error.message)")
        }
        // The first call is ReadAlias, answered before anything else is sent
        // (see `defaultCollection`).
        readAlias = try send(Self.servicePath, Self.serviceInterface, "ReadAlias", operation: "find the default collection") {
            $0.string("default")
        }
        bus.flush(waitingAtMost: 1000)
    }

    /// Sends OpenSession; its answer is read when a secret is first needed.
    private func sendOpenSession() throws(SecretServiceError) {
        let algorithm = self.algorithm
        openSession = try send(Self.servicePath, Self.serviceInterface, "OpenSession", operation: "connect") { args in
            if let algorithm {
                args.string(algorithm.name)
                args.container(DBusType.variant, "ay") { $0.bytes(algorithm.input) }
            } else {
                args.string("plain")
                args.container(DBusType.variant, "s") { $0.string("") }
            }
        }
    }

    /// The default collection's own path; `.noDefaultCollection` when the alias points nowhere.
    func defaultCollection() throws(SecretServiceError) -> String {
        if let aliasedCollection { return aliasedCollection }
        guard let pending = readAlias else { throw .noDefaultCollection }
        let operation = "find the default collection"
        let reply = try wait(pending, operation: operation)
        var path = try read(reply, operation: operation) { r throws(BusCallFailure) in try r.objectPath() }
        readAlias = nil
        // Only now OpenSession: gnome-keyring (42) records a client when its
        // first call is handled and opens its PKCS#11 session for it in
        // OpenSession; with OpenSession as the first call, under load (a burst
        // of clients while another writes) it can find no client record and
        // the whole daemon aborts (`gkd_secret_service_get_pkcs11_session:
        // assertion 'client' failed`). An answered ReadAlias proves the
        // record exists. The searches that follow go out with it.
        try sendOpenSession()
        if path == "/" { path = try readAliasAgain(operation: operation) }
        guard path != "/" else { throw .noDefaultCollection }
        aliasedCollection = path
        return path
    }

    /// ReadAlias("default") once more, up to three times while it answers
    /// "/". gnome-keyring (42) replaces its whole alias table whenever a new
    /// client connects (its `update_default`), and a ReadAlias that lands in
    /// between answers "/" for a moment: under a stream of new clients that
    /// write (the soak's refreshes), about once in twenty thousand calls.
    /// A keyring truly without a default answers "/" every time, and only
    /// then is it "no default keyring". Asked only on that answer, so the
    /// usual read pays nothing for it.
    private func readAliasAgain(operation: String) throws(SecretServiceError) -> String {
        var path = "/"
        for attempt in 1...3 where path == "/" {
            usleep(UInt32(2000 * attempt))
            let alias = try call(Self.servicePath, Self.serviceInterface, "ReadAlias", operation: operation) { $0.string("default") }
            path = try read(alias, operation: operation) { r throws(BusCallFailure) in try r.objectPath() }
        }
        return path
    }

    /// Forgets this process's connection to `address` (closing it), so the
    /// next call opens a new connection and session: for a caller that must
    /// outlast a restart of the keyring daemon. Calls in flight are settled
    /// first, as on exit.
    static func discard(address: BusAddress) {
        let old = clients.withLock { $0.removeValue(forKey: address.text) }
        if case .success(let client)? = old { client.settle() }
    }

    /// Waits for the answers to the calls still in flight, whatever they
    /// are, so a client never leaves the bus with a call of its unanswered.
    func settle() {
        _ = try? readAlias?.wait()
        _ = try? openSession?.wait()
    }

    /// Settles every connection this process made (see `settle`) and
    /// closes them: the next call would open a new one.
    static func disconnectAll() {
        let made = clients.withLock { known in
            defer { known.removeAll() }
            return Array(known.values)
        }
        // Each connection closes when its client goes, at the end of this function.
        for case .success(let client) in made { client.settle() }
    }

    /// The session's path, once OpenSession has been answered.
    private func session() throws(SecretServiceError) -> String {
        if let openedSession { return openedSession }
        if openSession == nil { _ = try defaultCollection() }
        guard let pending = openSession else {
            throw .failed(operation: "connect", domain: "cog-cred", code: 0, detail: "no session")
        }
        let algorithm = self.algorithm
        let reply = try wait(pending, operation: "connect")
        let path = try read(reply, operation: "connect") { r throws(BusCallFailure) in
            let output = try r.variant { v throws(BusCallFailure) in algorithm == nil ? [] : try v.bytes() }
            if let algorithm, !algorithm.agree(serverPublicKey: output) {
                throw BusCallFailure(name: "cog-cred.BadKey", message: "the Secret Service sent an unusable key for the encrypted session")
            }
            return try r.objectPath()
        }
        openedSession = path
        openSession = nil
        return path
    }

    /// For each attribute set, the items of the default collection whose
    /// attributes include it, unlocked and locked: every search is sent
    /// (with OpenSession, on a new connection) before any answer is read.
    /// Items of other collections are left out.
    func search(_ queries: [[(String, String)]], operation: String, timeout: Int32 = callTimeoutMilliseconds)
        throws(SecretServiceError) -> [(unlocked: [String], locked: [String])]
    {
        let collection = try defaultCollection() + "/"
        var pending: [PendingCall] = []
        for attributes in queries {
            pending.append(
                try send(Self.servicePath, Self.serviceInterface, "SearchItems", operation: operation, timeout: timeout) {
                    $0.stringDictionary(attributes)
                })
        }
        var results: [(unlocked: [String], locked: [String])] = []
        for call in pending {
            let reply = try wait(call, operation: operation, timeout: timeout)
            let (unlocked, locked) = try read(reply, operation: operation) { r throws(BusCallFailure) in
                (try r.objectPaths(), try r.objectPaths())
            }
            results.append((unlocked.filter { $0.hasPrefix(collection) }, locked.filter { $0.hasPrefix(collection) }))
        }
        return results
    }

    /// The secrets of `items` as text, by item path. An item missing from
    /// the answer is locked or went away meanwhile.
    func secrets(of items: [String], operation: String) throws(SecretServiceError) -> [String: String] {
        guard !items.isEmpty else { return [:] }
        let session = try session()
        let reply = try call(Self.servicePath, Self.serviceInterface, "GetSecrets", operation: operation) { args in
            args.objectPaths(items)
            args.objectPath(session)
        }
        let sealed = try read(reply, operation: operation) { r throws(BusCallFailure) in
            try r.dictionary({ k throws(BusCallFailure) in try k.objectPath() }) { v throws(BusCallFailure) in
                try v.structure { s throws(BusCallFailure) in
                    _ = try s.objectPath()
                    return (parameters: try s.bytes(), value: try s.bytes())
                }
            }
        }
        var result: [String: String] = [:]
        for (item, secret) in sealed {
            var plain = secret.value
            if let algorithm {
                guard let decrypted = algorithm.decrypt(parameters: secret.parameters, value: plain) else {
                    throw .failed(operation: operation, domain: "cog-cred", code: 0, detail: "the secret could not be decrypted")
                }
                Self.wipe(&plain)
                plain = decrypted
            }
            result[item] = String(decoding: plain, as: UTF8.self)
            Self.wipe(&plain)
        }
        return result
    }

    /// An item's attributes.
    func attributes(of item: String, operation: String) throws(SecretServiceError) -> [String: String] {
        let reply = try call(item, Self.propertiesInterface, "Get", operation: operation) { args in
            args.string(Self.itemInterface)
            args.string("Attributes")
        }
        return try read(reply, operation: operation) { r throws(BusCallFailure) in
            try r.variant { v throws(BusCallFailure) in try v.stringDictionary() }
        }
    }

    /// Throws `.noDefaultCollection` or `.locked` when the default collection
    /// cannot hold or show items. One round trip, asked only when a search
    /// found nothing, a secret was withheld or a write failed.
    func checkDefaultCollectionUnlocked() throws(SecretServiceError) {
        if try isLocked(try defaultCollection()) { throw .locked }
    }

    /// The collection's Locked property. A collection the service says does
    /// not exist is asked about once more through a fresh ReadAlias: under
    /// load gnome-keyring (42) has been seen to deny a collection for a
    /// moment, and "no default keyring" must not stand in for "locked".
    private func isLocked(_ collection: String, again: Bool = true) throws(SecretServiceError) -> Bool {
        let operation = "open the default collection"
        let reply: Reply
        do throws(SecretServiceError) {
            reply = try call(collection, Self.propertiesInterface, "Get", operation: operation) { args in
                args.string(Self.collectionInterface)
                args.string("Locked")
            }
        } catch .failed(_, let domain, _, _) where Self.missingObjectErrors.contains(domain) {
            guard again else { throw .noDefaultCollection }
            let path = try readAliasAgain(operation: operation)
            guard path != "/" else { throw .noDefaultCollection }
            return try isLocked(path, again: false)
        }
        return try read(reply, operation: operation) { r throws(BusCallFailure) in
            try r.variant { v throws(BusCallFailure) in try v.bool() }
        }
    }

    /// What services answer for an object that does not exist: here, a
    /// default collection deleted since the alias was read.
    static let missingObjectErrors: Set<String> = [
        "org.freedesktop.Secret.Error.NoSuchObject", "org.freedesktop.DBus.Error.UnknownObject",
        "org.freedesktop.DBus.Error.UnknownMethod",
    ]

    // MARK: - Plumbing

    private func call(
        _ path: String, _ interface: String, _ method: String, operation: String,
        timeout: Int32 = callTimeoutMilliseconds, _ arguments: (MessageWriter) -> Void = { _ in }
    ) throws(SecretServiceError) -> Reply {
        let pending = try send(path, interface, method, operation: operation, timeout: timeout, arguments)
        return try wait(pending, operation: operation, timeout: timeout)
    }

    private func send(
        _ path: String, _ interface: String, _ method: String, operation: String,
        timeout: Int32 = callTimeoutMilliseconds, _ arguments: (MessageWriter) -> Void = { _ in }
    ) throws(SecretServiceError) -> PendingCall {
        do {
            return try bus.send(Self.busName, path, interface, method, timeoutMilliseconds: timeout, arguments)
        } catch {
            throw Self.translate(error, operation: operation, timeout: timeout)
        }
    }

    private func wait(_ call: PendingCall, operation: String, timeout: Int32 = callTimeoutMilliseconds)
        throws(SecretServiceError) -> Reply
    {
        do {
            return try call.wait()
        } catch {
            throw Self.translate(error, operation: operation, timeout: timeout)
        }
    }

    private func read<T>(_ reply: Reply, operation: String, _ body: (MessageReader) throws(BusCallFailure) -> T)
        throws(SecretServiceError) -> T
    {
        do {
            return try body(reply.reader())
        } catch {
            throw Self.translate(error, operation: operation)
        }
    }

    static func translate(_ failure: BusCallFailure, operation: String, timeout: Int32 = callTimeoutMilliseconds)
        -> SecretServiceError
    {
        switch failure.name {
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
            return .notResponding(seconds: Double(timeout) / 1000)
        case "org.freedesktop.Secret.Error.IsLocked":
            return .locked
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return .serviceUnavailable(failure.message)
        case "org.freedesktop.DBus.Error.Disconnected", "org.freedesktop.DBus.Error.NoServer":
            return .serviceUnavailable("the session bus went away: \(failure.message)")
        default:
            return .failed(operation: operation, domain: failure.name, code: 0, detail: failure.message)
        }
    }

    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }
}
