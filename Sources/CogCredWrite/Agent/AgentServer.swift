import CLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The agent's loop: one thread reads every connection's request (poll),
/// and each whole request is answered on a thread of its own
/// (`AgentWorkers`). A connection that sends nothing costs a descriptor and
/// a place in the loop, not a thread, so silent clients hold up no one:
/// whoever reaches the socket (a container, a forwarded host) is bounded in
/// what it can hold (`Bounds`), and the agent says on its log what it
/// dropped. Only this user's processes and root's (who can read the
/// agent's memory anyway) are answered, checked on every connection
/// whatever the socket's mode; any other is closed without a byte written,
/// and noted.
public struct AgentServer: Sendable {
    let socket: AgentSocket
    let service: AgentService
    /// The agent's own notes (stderr, a log file or nowhere); the
    /// executable names itself before each.
    let log: @Sendable (String) -> Void
    let bounds: Bounds
    /// Seconds after which the agent stops (`--lifetime`), as a request's
    /// stop does (AgentControl); nil: it runs until stopped.
    let lifetime: Double?

    public init(
        socket: AgentSocket, service: AgentService, bounds: Bounds, lifetime: Double? = nil, log: @escaping @Sendable (String) -> Void
    ) {
        self.socket = socket
        self.service = service
        self.bounds = bounds
        self.lifetime = lifetime
        self.log = log
    }

    /// What one agent holds at most, for everyone who reaches its socket together.
    public struct Bounds: Sendable, Equatable {
        /// Connections open at once, whatever their state. Past it the
        /// oldest connection still sending its request is closed, so that
        /// silent ones never shut out a client that asks at once.
        public var connections: Int
        /// Bytes of requests held at once, read or being answered. Past it
        /// the connection holding the most of what is still coming is dropped.
        public var requestBytes: Int
        /// Requests answered at once, each on a thread (of 1 MiB of stack).
        public var answering: Int
        /// Of those, for one profile (or git host, or registry) at once: the
        /// others wait for their turn without a thread, so that one
        /// profile whose endpoint never answers leaves the rest to others.
        public var answeringForOne: Int

        /// The agent's bounds, with the descriptors the process may open
        /// (raised towards the hard limit first): each answer may use a few
        /// of its own (Cognito's connection, the profile's lock, the config).
        public static func standard() -> Bounds {
            let answering = 64
            let descriptors = clinux_raise_descriptor_limit(4096)
            return Bounds(
                connections: max(16, min(2048, descriptors - 4 * answering - 32)), requestBytes: 16 << 20, answering: answering,
                answeringForOne: 8)
        }
    }

    /// A connection whose request is still coming.
    struct Reading {
        let fd: Int32
        /// When it was accepted: the oldest goes first when too many are open.
        let order: Int
        let deadline: Deadline
        var buffer: [UInt8] = []
    }

    public func serve() -> Never {
        let workers = AgentWorkers(bounds: bounds, service: service)
        var reading: [Int32: Reading] = [:]
        var accepted = 0
        var said = RateLimitedLog(log)
        var end = lifetime.map { Deadline(secondsFromNow: $0) }
        _ = clinux_set_blocking(socket.fd, 0)

        func drop(_ fd: Int32, saying note: String? = nil, answer: String? = nil) {
            guard let connection = reading.removeValue(forKey: fd) else { return }
            workers.hold(-connection.buffer.count)
            if let answer { _ = sendAll(fd, answer) }
            close(fd)
            if let note { said.note(note) }
        }

        func acceptAll() {
            while true {
                let client = clinux_accept(socket.fd)
                guard client >= 0 else {
                    // EAGAIN: none left. Out of descriptors or memory: the next round.
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    if errno != EAGAIN && errno != EWOULDBLOCK { said.note("cannot accept a connection: \(String(cString: strerror(errno)))") }
                    return
                }
                var uid: UInt32 = 0
                var pid: Int32 = 0
                guard clinux_peer(client, &uid, &pid) == 0 else {
                    said.note("refused a connection whose process cannot be known (\(String(cString: strerror(errno))))")
                    close(client)
                    continue
                }
                guard uid == getuid() || uid == 0 else {
                    log("refused a connection from uid \(uid) (pid \(pid)): only uid \(getuid()) and root may use this agent")
                    close(client)
                    continue
                }
                if reading.count + workers.connections >= bounds.connections {
                    guard let oldest = reading.values.min(by: { $0.order < $1.order }) else {
                        said.note("refused a connection: \(bounds.connections) are open, each with a request being answered or waiting its turn")
                        close(client)
                        continue
                    }
                    drop(oldest.fd, saying: "closed the oldest connection still sending its request: \(bounds.connections) are open, the most the agent keeps")
                }
                accepted += 1
                reading[client] = Reading(fd: client, order: accepted, deadline: Deadline(secondsFromNow: Double(AgentProtocol.silenceLimit)))
            }
        }

        func receive(_ fd: Int32) {
            guard var connection = reading[fd] else { return }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let room = AgentProtocol.requestLimit + 1 - connection.buffer.count
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min($0.count, room)) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { return }
                drop(fd)
                return
            }
            guard n > 0 else {
                // A client that only checked who the agent is (AgentConnection.check) sent nothing and left.
                drop(fd, saying: connection.buffer.isEmpty ? nil : "dropped a client that closed the connection before its whole request")
                return
            }
            let start = connection.buffer.count
            connection.buffer += chunk[..<n]
            workers.hold(n)
            if let end = connection.buffer[start...].firstIndex(of: 0x0A) {
                reading[fd] = nil
                let line = Array(connection.buffer[..<end])
                workers.hold(line.count - connection.buffer.count)
                workers.answer(fd, line)
                return
            }
            reading[fd] = connection
            if connection.buffer.count > AgentProtocol.requestLimit {
                drop(
                    fd, saying: "refused a request over \(AgentProtocol.requestLimit) bytes",
                    answer: AgentProtocol.error(AgentFailure(.protocolViolation, "the agent takes requests of at most \(AgentProtocol.requestLimit) bytes")))
                return
            }
            if workers.held > bounds.requestBytes, let largest = reading.values.max(by: { $0.buffer.count < $1.buffer.count }) {
                drop(
                    largest.fd, saying: "dropped the client sending the largest request: the requests held passed \(bounds.requestBytes >> 20) MiB",
                    answer: AgentProtocol.error(AgentFailure(.temporary, "the agent holds too much at once; send the request again")))
            }
        }

        while true {
            var polled = [pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)]
            polled += reading.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let soonest = min(reading.values.map(\.deadline.remaining).min() ?? 60, end?.remaining ?? 60)
            let ready = poll(&polled, nfds_t(polled.count), Int32(min(60_000, Int((soonest * 1000).rounded(.up)) + 1)))
            if ready < 0 && errno != EINTR {
                // Out of memory for the poll set: a moment, then go on serving.
                usleep(100_000)
                continue
            }
            for entry in polled.dropFirst() where entry.revents != 0 {
                receive(entry.fd)
            }
            if polled[0].revents != 0 { acceptAll() }
            for connection in reading.values where connection.deadline.remaining == 0 {
                drop(connection.fd, saying: "dropped a client that sent no whole request within \(AgentProtocol.silenceLimit) s")
            }
            if let ending = end, ending.remaining == 0 {
                end = nil
                log("its lifetime has run out: stopping")
                service.control.stop()
            }
        }
    }
}

/// The agent's notes of what it dropped, at most one of a kind a second:
/// a flood of connections must not become a flood of lines.
struct RateLimitedLog {
    let log: @Sendable (String) -> Void
    var last: [String: ContinuousClock.Instant] = [:]

    init(_ log: @escaping @Sendable (String) -> Void) { self.log = log }

    mutating func note(_ text: String) {
        let now = ContinuousClock.now
        if let previous = last[text], now - previous < .seconds(1) { return }
        last[text] = now
        log(text)
    }
}
