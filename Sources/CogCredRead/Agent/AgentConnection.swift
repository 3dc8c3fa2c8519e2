import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// One request to the agent at `path` (COG_CRED_AGENT's value): used by the
/// front for its reads and by cog-cred-cli for everything else (AgentClient).
public struct AgentConnection: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The agent named by COG_CRED_AGENT, nil when it is unset or empty.
    public static func configured(_ environment: (String) -> String?) -> AgentConnection? {
        guard let path = environment(AgentProtocol.variable), !path.isEmpty else { return nil }
        return AgentConnection(path: path)
    }

    /// Sends one request and returns the `ok` object of the answer. The
    /// agent's notes are passed to `note` as they arrive. The agent must run
    /// as this process's user or as root: one of another user (a squatted
    /// path, an `ssh -R` that could not bind) is sent nothing.
    public func ask(_ operation: AgentProtocol.Operation, _ fields: [String: JSONValue], note: (String) -> Void)
        throws(AgentFailure) -> [String: JSONValue]
    {
        let fd = try connect()
        defer { close(fd) }
        guard writeAll(fd, AgentProtocol.request(operation, fields)) else {
            throw .broken(path, "closed the connection before the request was sent (\(String(cString: strerror(errno))))")
        }
        var reader = LineReader(fd: fd, limit: AgentProtocol.answerLimit)
        while true {
            guard let line = reader.next() else { throw .broken(path, "closed the connection without an answer") }
            guard let answer = JSONValue.parse(line), let version = answer["v"] else {
                throw .broken(path, "sent an answer that is not one JSON object a line")
            }
            guard version == .int(AgentProtocol.version) else {
                throw .versionMismatch(theirs: version.doubleValue.map { Int64($0) } ?? 0, ours: AgentProtocol.version, side: "agent at \(path)")
            }
            if let text = answer["note"]?.stringValue {
                note(text)
            } else if let ok = answer["ok"]?.objectValue {
                return ok
            } else if let error = answer["error"], let message = error["message"]?.stringValue {
                throw AgentFailure(FailureCategory(wireName: error["category"]?.stringValue ?? ""), message)
            } else {
                throw .broken(path, "sent an answer that cannot be read")
            }
        }
    }

    /// Whether an agent of this user's or root's answers, asking nothing:
    /// for a command that must know before it talks to Cognito (a sign-in
    /// whose tokens would have nowhere to go).
    public func check() throws(AgentFailure) {
        close(try connect())
    }

    /// A connection to the agent, once its process is known to be this user's or root's.
    func connect() throws(AgentFailure) -> Int32 {
        let fd = clinux_unix_connect(path)
        guard fd >= 0 else {
            let reason = clinux_errno() == ENAMETOOLONG
                ? "the path is longer than a socket's \(clinux_socket_path_capacity()) bytes" : String(cString: strerror(clinux_errno()))
            throw .unreachable(path, reason: reason)
        }
        var uid: UInt32 = 0
        var pid: Int32 = 0
        guard clinux_peer(fd, &uid, &pid) == 0 else {
            close(fd)
            throw .unreachable(path, reason: String(cString: strerror(clinux_errno())))
        }
        guard uid == getuid() || uid == 0 else {
            close(fd)
            throw .foreignOwner(path, uid: uid, ownUID: getuid())
        }
        return fd
    }
}

/// Lines from a descriptor, each without its newline; nil at the end, on an
/// error, or past `limit` bytes in all. The agent reads its requests with it too.
public struct LineReader {
    let fd: Int32
    let limit: Int
    var buffer: [UInt8] = []
    /// Bytes read so far.
    public private(set) var total = 0

    public init(fd: Int32, limit: Int) {
        self.fd = fd
        self.limit = limit
    }

    public mutating func next() -> [UInt8]? {
        var scanned = 0
        while true {
            if let end = buffer[scanned...].firstIndex(of: 0x0A) {
                let line = Array(buffer[..<end])
                buffer.removeFirst(end + 1)
                return line
            }
            scanned = buffer.count
            guard total < limit else { return nil }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, min($0.count, limit - total)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            total += n
            buffer += chunk[..<n]
        }
    }
}
