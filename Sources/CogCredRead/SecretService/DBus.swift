import CDBus

#if canImport(Glibc)
import Glibc
#endif

/// The D-Bus type codes this client reads and writes.
enum DBusType {
    static let invalid: Int32 = 0
    static let string = Int32(UInt8(ascii: "s"))
    static let objectPath = Int32(UInt8(ascii: "o"))
    static let boolean = Int32(UInt8(ascii: "b"))
    static let byte = Int32(UInt8(ascii: "y"))
    static let array = Int32(UInt8(ascii: "a"))
    static let variant = Int32(UInt8(ascii: "v"))
    static let structure = Int32(UInt8(ascii: "r"))
    static let dictEntry = Int32(UInt8(ascii: "e"))

    static func name(_ code: Int32) -> String {
        code == invalid ? "nothing" : "'\(Character(Unicode.Scalar(UInt8(truncatingIfNeeded: code))))'"
    }
}

/// A failed D-Bus call: the error name the bus or the service gave (such as
/// `org.freedesktop.DBus.Error.NoReply`) and its message, or one of ours.
struct BusCallFailure: Error, Equatable {
    /// Our name for a reply whose types are not what the Secret Service API says.
    static let unexpectedReply = "cog-cred.UnexpectedReply"

    var name: String
    var message: String
}

/// A private connection to one message bus, over libdbus-1.
///
/// Private (not libdbus's shared per-process bus connection) so nothing else
/// in the process can close it or change its settings, and so a test can
/// talk to two buses from one process. Calls can be sent before the replies
/// to earlier ones are read, so that independent calls cost one round trip
/// together rather than one each.
final class DBusConnection {
    private let raw: OpaquePointer
    /// The bus's Hello, which must be the first message; its answer is
    /// checked before any other answer is read.
    private var hello: PendingCall?

    init(address: String) throws(BusCallFailure) {
        // libdbus would set SIGPIPE to "ignore" for the whole process, and
        // `exec` would pass that on to the command it runs (`yes | head` would
        // then never end). Its own socket writes use MSG_NOSIGNAL anyway.
        dbus_connection_set_change_sigpipe(0)
        var error = DBusError()
        dbus_error_init(&error)
        guard let connection = dbus_connection_open_private(address, &error) else { throw Self.consume(&error) }
        raw = connection
        // dbus_bus_register would wait for the answer; sent like any call,
        // it travels with the first real ones.
        hello = try send("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello", timeoutMilliseconds: 5000, isHello: true)
    }

    deinit {
        dbus_connection_close(raw)
        dbus_connection_unref(raw)
    }

    /// Sends one method call; its reply is read with `PendingCall.wait()`,
    /// which fails once `timeoutMilliseconds` have passed.
    func send(
        _ destination: String, _ path: String, _ interface: String, _ method: String, timeoutMilliseconds: Int32,
        isHello: Bool = false, _ arguments: (MessageWriter) -> Void = { _ in }
    ) throws(BusCallFailure) -> PendingCall {
        guard let message = dbus_message_new_method_call(destination, path, interface, method) else {
            throw BusCallFailure(name: "cog-cred.NoMemory", message: "cannot build the request to \(method)")
        }
        defer { dbus_message_unref(message) }
        let writer = MessageWriter(message: message)
        arguments(writer)
        guard writer.succeeded else {
            throw BusCallFailure(name: "cog-cred.BadRequest", message: "cannot build the request to \(method)")
        }
        var pending: OpaquePointer? = nil
        guard dbus_connection_send_with_reply(raw, message, &pending, timeoutMilliseconds) != 0, let pending else {
            throw BusCallFailure(name: "org.freedesktop.DBus.Error.Disconnected", message: "the session bus closed the connection")
        }
        // The Hello's own call does not hold the connection that holds it.
        return PendingCall(pending, connection: isHello ? nil : self)
    }

    /// Writes out the messages queued so far, waiting at most
    /// `milliseconds`. A new connection sends only the start of its
    /// authentication when opened; the rest of the handshake, and the calls
    /// queued behind it, go out when something drives the connection.
    /// Flushing right after the first call lets the service work on it while
    /// this process does other things. Bounded (libdbus's own flush is not):
    /// on a bus that stalls, what is still queued goes out with the first
    /// wait for an answer, which has its own limit.
    func flush(waitingAtMost milliseconds: Int32) {
        let deadline = Self.now() + Int64(milliseconds)
        while dbus_connection_has_messages_to_send(raw) != 0 {
            let left = deadline - Self.now()
            guard left > 0, dbus_connection_read_write(raw, Int32(left)) != 0 else { return }
        }
    }

    private static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// One method call, waiting at most `timeoutMilliseconds` for the reply.
    func call(
        _ destination: String, _ path: String, _ interface: String, _ method: String, timeoutMilliseconds: Int32,
        _ arguments: (MessageWriter) -> Void = { _ in }
    ) throws(BusCallFailure) -> Reply {
        try send(destination, path, interface, method, timeoutMilliseconds: timeoutMilliseconds, arguments).wait()
    }

    /// Fails if the bus refused the Hello; asked before any other reply is used.
    fileprivate func checkHello() throws(BusCallFailure) {
        guard let hello else { return }
        self.hello = nil
        _ = try hello.wait()
    }

    /// Turns a libdbus error into a Swift one and frees it: the one place they end.
    fileprivate static func consume(_ error: inout DBusError) -> BusCallFailure {
        defer { dbus_error_free(&error) }
        return BusCallFailure(
            name: error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed",
            message: error.message.map { String(cString: $0) } ?? "")
    }
}

/// A call sent and not yet answered.
final class PendingCall {
    private let raw: OpaquePointer
    /// Whose Hello must have been answered first (checking it clears it,
    /// so the Hello's own wait does not recurse); nil for the Hello itself.
    private let connection: DBusConnection?
    /// The answer once read: libdbus hands a reply over only once, and
    /// asking again aborts the process.
    private var answer: Result<Reply, BusCallFailure>?

    fileprivate init(_ raw: OpaquePointer, connection: DBusConnection?) {
        self.raw = raw
        self.connection = connection
    }

    deinit { dbus_pending_call_unref(raw) }

    /// The reply, or the error the service (or libdbus, on a timeout or a
    /// lost connection) answered with; the same each time it is asked.
    func wait() throws(BusCallFailure) -> Reply {
        if let answer { return try answer.get() }
        let result = Result { () throws(BusCallFailure) -> Reply in try receive() }
        answer = result
        return try result.get()
    }

    private func receive() throws(BusCallFailure) -> Reply {
        try connection?.checkHello()
        dbus_pending_call_block(raw)
        guard let reply = dbus_pending_call_steal_reply(raw) else {
            throw BusCallFailure(name: "org.freedesktop.DBus.Error.NoReply", message: "no reply")
        }
        var error = DBusError()
        dbus_error_init(&error)
        if dbus_set_error_from_message(&error, reply) != 0 {
            dbus_message_unref(reply)
            throw DBusConnection.consume(&error)
        }
        return Reply(reply)
    }
}

/// A method reply; its values are read, type-checked, through `reader()`.
final class Reply {
    fileprivate let message: OpaquePointer

    fileprivate init(_ message: OpaquePointer) { self.message = message }

    deinit { dbus_message_unref(message) }

    /// A reader positioned on the reply's first value.
    func reader() -> MessageReader {
        let reader = MessageReader(owner: self)
        if dbus_message_iter_init(message, reader.iter) == 0 { reader.atEnd = true }
        return reader
    }
}

/// Appends the arguments of a call. A failed append (out of memory, a value
/// libdbus refuses) marks the whole message failed rather than crash.
final class MessageWriter {
    fileprivate let iter = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
    private let parent: MessageWriter?
    private var failed = false

    fileprivate init(message: OpaquePointer) {
        parent = nil
        iter.initialize(to: DBusMessageIter())
        dbus_message_iter_init_append(message, iter)
    }

    private init(parent: MessageWriter) {
        self.parent = parent
        iter.initialize(to: DBusMessageIter())
    }

    deinit { iter.deallocate() }

    var succeeded: Bool { !failed }

    private func check(_ result: dbus_bool_t) {
        if result == 0 {
            failed = true
            parent?.markFailed()
        }
    }

    private func markFailed() {
        failed = true
        parent?.markFailed()
    }

    func string(_ value: String) { check(cdbus_append_string(iter, DBusType.string, value)) }
    func objectPath(_ value: String) { check(cdbus_append_string(iter, DBusType.objectPath, value)) }
    func bool(_ value: Bool) { check(cdbus_append_bool(iter, value ? 1 : 0)) }

    /// `ay`.
    func bytes(_ value: [UInt8]) {
        container(DBusType.array, "y") { array in
            array.check(value.withUnsafeBufferPointer { cdbus_append_bytes(array.iter, $0.baseAddress, Int32($0.count)) })
        }
    }

    /// `ao`.
    func objectPaths(_ values: [String]) {
        container(DBusType.array, "o") { array in values.forEach(array.objectPath) }
    }

    /// `a{ss}`.
    func stringDictionary(_ pairs: [(String, String)]) {
        container(DBusType.array, "{ss}") { array in
            for (key, value) in pairs {
                array.container(DBusType.dictEntry, nil) { entry in
                    entry.string(key)
                    entry.string(value)
                }
            }
        }
    }

    /// A container (array, struct, dict entry, variant); `signature` is the
    /// element's for arrays and the content's for variants, nil otherwise.
    func container(_ type: Int32, _ signature: String?, _ body: (MessageWriter) -> Void) {
        let child = MessageWriter(parent: self)
        guard dbus_message_iter_open_container(iter, type, signature, child.iter) != 0 else {
            markFailed()
            return
        }
        body(child)
        if dbus_message_iter_close_container(iter, child.iter) == 0 { markFailed() }
    }
}

/// Reads a reply's values in order, checking each one's type: a service that
/// answers with other types than the Secret Service API names (a broken or
/// hostile owner of the bus name) gets an error, never a crash.
final class MessageReader {
    fileprivate let iter = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
    /// Keeps the message, which owns every value read, alive.
    private let owner: Reply
    fileprivate var atEnd = false

    fileprivate init(owner: Reply) {
        self.owner = owner
        iter.initialize(to: DBusMessageIter())
    }

    deinit { iter.deallocate() }

    private var currentType: Int32 { atEnd ? DBusType.invalid : dbus_message_iter_get_arg_type(iter) }

    private func expect(_ type: Int32, _ what: String) throws(BusCallFailure) {
        let found = currentType
        guard found == type else {
            throw BusCallFailure(
                name: BusCallFailure.unexpectedReply,
                message: "expected \(what) (\(DBusType.name(type))), found \(DBusType.name(found))")
        }
    }

    private func advance() {
        if dbus_message_iter_next(iter) == 0 { atEnd = true }
    }

    func string() throws(BusCallFailure) -> String {
        try expect(DBusType.string, "a string")
        defer { advance() }
        return String(cString: cdbus_get_string(iter))
    }

    func objectPath() throws(BusCallFailure) -> String {
        try expect(DBusType.objectPath, "an object path")
        defer { advance() }
        return String(cString: cdbus_get_string(iter))
    }

    func bool() throws(BusCallFailure) -> Bool {
        try expect(DBusType.boolean, "a boolean")
        defer { advance() }
        return cdbus_get_bool(iter) != 0
    }

    /// `ay`.
    func bytes() throws(BusCallFailure) -> [UInt8] {
        try expect(DBusType.array, "a byte array")
        guard dbus_message_iter_get_element_type(iter) == DBusType.byte else {
            throw BusCallFailure(name: BusCallFailure.unexpectedReply, message: "expected a byte array")
        }
        let elements = enter()
        defer { advance() }
        var count: Int32 = 0
        guard !elements.atEnd, let data = cdbus_get_bytes(elements.iter, &count), count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(count)))
    }

    /// `ao`.
    func objectPaths() throws(BusCallFailure) -> [String] {
        try array { reader throws(BusCallFailure) in try reader.objectPath() }
    }

    /// `a{ss}`.
    func stringDictionary() throws(BusCallFailure) -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in try dictionary({ reader throws(BusCallFailure) in try reader.string() },
                                           { reader throws(BusCallFailure) in try reader.string() }) {
            result[key] = value
        }
        return result
    }

    /// The elements of an array, each read by `element`.
    func array<T>(_ element: (MessageReader) throws(BusCallFailure) -> T) throws(BusCallFailure) -> [T] {
        try expect(DBusType.array, "an array")
        let elements = enter()
        defer { advance() }
        var result: [T] = []
        while !elements.atEnd { result.append(try element(elements)) }
        return result
    }

    /// The entries of an `a{..}`, each key and value read by the given readers.
    func dictionary<K, V>(
        _ key: (MessageReader) throws(BusCallFailure) -> K, _ value: (MessageReader) throws(BusCallFailure) -> V
    ) throws(BusCallFailure) -> [(K, V)] {
        try array { entries throws(BusCallFailure) in
            try entries.expect(DBusType.dictEntry, "a dictionary entry")
            let entry = entries.enter()
            entries.advance()
            return (try key(entry), try value(entry))
        }
    }

    /// The values of a struct, read by `body`.
    func structure<T>(_ body: (MessageReader) throws(BusCallFailure) -> T) throws(BusCallFailure) -> T {
        try expect(DBusType.structure, "a struct")
        let fields = enter()
        defer { advance() }
        return try body(fields)
    }

    /// The value inside a variant, read by `body`.
    func variant<T>(_ body: (MessageReader) throws(BusCallFailure) -> T) throws(BusCallFailure) -> T {
        try expect(DBusType.variant, "a variant")
        let inner = enter()
        defer { advance() }
        return try body(inner)
    }

    /// Skips one value of any type.
    func skip() throws(BusCallFailure) {
        guard !atEnd else { throw BusCallFailure(name: BusCallFailure.unexpectedReply, message: "the reply ended early") }
        advance()
    }

    private func enter() -> MessageReader {
        let child = MessageReader(owner: owner)
        dbus_message_iter_recurse(iter, child.iter)
        child.atEnd = dbus_message_iter_get_arg_type(child.iter) == DBusType.invalid
        return child
    }
}
