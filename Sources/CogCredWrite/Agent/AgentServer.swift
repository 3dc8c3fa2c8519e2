import CLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The agent's accept loop: each connection on a thread of its own, so that
/// a client that stalls or sends garbage holds up no one else. Only this
/// user's processes and root's (who can read the agent's memory anyway) are
/// answered, checked on every connection whatever the socket's mode; any
/// other is closed without a byte written, and noted.
public struct AgentServer: Sendable {
    let socket: AgentSocket
    let service: AgentService
    /// The agent's own notes (stderr, a log file or nowhere); the
    /// executable names itself before each.
    let log: @Sendable (String) -> Void

    public init(socket: AgentSocket, service: AgentService, log: @escaping @Sendable (String) -> Void) {
        self.socket = socket
        self.service = service
        self.log = log
    }

    public func serve() -> Never {
        let open = Mutex(0)
        while true {
            let client = clinux_accept(socket.fd)
            guard client >= 0 else {
                if errno == EINTR || errno == ECONNABORTED { continue }
                // Out of descriptors or memory: a moment, then go on serving.
                usleep(100_000)
                continue
            }
            var uid: UInt32 = 0
            var pid: Int32 = 0
            guard clinux_peer(client, &uid, &pid) == 0 else {
                log("refused a connection whose process cannot be known (\(String(cString: strerror(errno))))")
                close(client)
                continue
            }
            guard uid == getuid() || uid == 0 else {
                log("refused a connection from uid \(uid) (pid \(pid)): only uid \(getuid()) and root may use this agent")
                close(client)
                continue
            }
            // Each connection holds a thread until it is answered or dropped.
            let admitted = open.withLock { count in
                guard count < Self.connectionLimit else { return false }
                count += 1
                return true
            }
            guard admitted else {
                log("refused a connection: \(Self.connectionLimit) are being served already")
                close(client)
                continue
            }
            let service = self.service
            let log = self.log
            Self.onThread {
                Self.serve(client, service, log)
                close(client)
                open.withLock { $0 -= 1 }
            }
        }
    }

    /// Connections served at once, at most.
    static let connectionLimit = 256

    static func serve(_ fd: Int32, _ service: AgentService, _ log: @Sendable (String) -> Void) {
        // The whole request within the silence limit, however it trickles in;
        // the receive timeout only paces the checks.
        _ = clinux_receive_timeout(fd, 1)
        var reader = LineReader(fd: fd, limit: AgentProtocol.requestLimit + 1, deadline: Deadline(secondsFromNow: Double(AgentProtocol.silenceLimit)))
        guard let line = reader.next() else {
            // A client that only checked who the agent is (AgentConnection.check) sent nothing and left.
            if reader.total == 0 && !reader.timedOut { return }
            log("dropped a client that sent no whole request within \(AgentProtocol.silenceLimit) s, or one over \(AgentProtocol.requestLimit) bytes")
            return
        }
        let answer = service.answer(line) { note in _ = sendAll(fd, AgentProtocol.note(note)) }
        _ = sendAll(fd, answer)
    }

    /// A plain detached thread (Foundation's Thread costs more, and is not
    /// needed), with a stack of 1 MiB rather than 8: many connections at
    /// once, and with --memory every page used is locked.
    static func onThread(_ body: @escaping @Sendable () -> Void) {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 1 << 20)
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let started = pthread_create(&thread, &attributes, { box in
            Unmanaged<Box>.fromOpaque(box!).takeRetainedValue().body()
            return nil
        }, box)
        if started == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Box>.fromOpaque(box).takeRetainedValue().body()
        }
    }
}
