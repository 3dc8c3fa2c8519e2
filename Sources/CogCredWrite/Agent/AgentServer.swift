import CLinux

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
    /// The agent's own notes (stderr, --log or nowhere).
    let log: @Sendable (String) -> Void

    public init(socket: AgentSocket, service: AgentService, log: @escaping @Sendable (String) -> Void) {
        self.socket = socket
        self.service = service
        self.log = log
    }

    public func serve() -> Never {
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
            guard clinux_peer(client, &uid, &pid) == 0, uid == getuid() || uid == 0 else {
                log("cog-cred agent: refused a connection from uid \(uid) (pid \(pid)): only uid \(getuid()) and root may use this agent")
                close(client)
                continue
            }
            let service = self.service
            let log = self.log
            Self.onThread {
                Self.serve(client, service, log)
                close(client)
            }
        }
    }

    static func serve(_ fd: Int32, _ service: AgentService, _ log: @Sendable (String) -> Void) {
        _ = clinux_receive_timeout(fd, AgentProtocol.silenceLimit)
        var reader = LineReader(fd: fd, limit: AgentProtocol.requestLimit + 1)
        guard let line = reader.next() else {
            // A client that only checked who the agent is (AgentConnection.check) sent nothing and left.
            if reader.total == 0 && errno != EAGAIN && errno != EWOULDBLOCK { return }
            log("cog-cred agent: dropped a client that sent no request within \(AgentProtocol.silenceLimit) s, or one over \(AgentProtocol.requestLimit) bytes")
            return
        }
        let answer = service.answer(line) { note in _ = writeAll(fd, AgentProtocol.note(note)) }
        _ = writeAll(fd, answer)
    }

    /// A plain detached thread (Foundation's Thread costs more, and is not needed).
    static func onThread(_ body: @escaping @Sendable () -> Void) {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let started = pthread_create(&thread, nil, { box in
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
