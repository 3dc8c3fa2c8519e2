import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// One request to the agent at `path` (COG_CRED_AGENT's value): used by the
/// front for its reads and by cog-cred-cli for everything else (AgentClient).
public struct AgentConnection: Sendable {
    public let path: String
    /// Where this command runs, for the advice when no agent answers.
    let place: Place

    /// What the advice to start an agent depends on.
    public struct Place: Sendable, Equatable {
        /// There is a session bus here, for a keyring agent.
        public var hasBus = true
        /// The path is not where an agent started here listens by default:
        /// most likely a forward (ssh -R) or a mount.
        public var providedFromElsewhere = false

        public init(hasBus: Bool = true, providedFromElsewhere: Bool = false) {
            self.hasBus = hasBus
            self.providedFromElsewhere = providedFromElsewhere
        }
    }

    public init(path: String, place: Place = Place()) {
        self.path = path
        self.place = place
    }

    /// The agent named by COG_CRED_AGENT, nil when it is unset or empty.
    public static func configured(_ environment: (String) -> String?) -> AgentConnection? {
        guard let path = environment(AgentProtocol.variable), !path.isEmpty else { return nil }
        let hasBus = (try? BusAddress.session(environment: environment)) != nil
        return AgentConnection(path: path, place: Place(hasBus: hasBus, providedFromElsewhere: !isDefaultPlace(path, environment)))
    }

    /// Where `cog-cred agent` listens by default (AgentSocket):
    /// `$XDG_RUNTIME_DIR/cog-cred/agent`, or `agent` in a `cog-cred-XXXXXX`
    /// directory of `$TMPDIR` (else /tmp).
    static func isDefaultPlace(_ path: String, _ environment: (String) -> String?) -> Bool {
        if let runtime = environment("XDG_RUNTIME_DIR"), !runtime.isEmpty, path == runtime + "/cog-cred/agent" { return true }
        let temporary = environment("TMPDIR").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        let prefix = temporary + "/cog-cred-"
        guard path.hasPrefix(prefix), path.hasSuffix("/agent") else { return false }
        return path.utf8.count == prefix.utf8.count + 6 + "/agent".utf8.count
    }

    /// "cannot reach the agent …: `reason`", with the way out that works here.
    func unreachable(_ reason: String) -> AgentFailure {
        .unreachable(path, reason: reason, place: place)
    }

    /// Sends one request and returns its answer. The agent's notes are
    /// passed to `note` as they arrive. The agent must run as this
    /// process's user: one of another user (a squatted path, an `ssh -R`
    /// that could not bind, root's, which serves root only) is sent nothing.
    /// Where a session through it is kept, in a message's words.
    public var described: String { "the agent at \(path)" }

    public func ask<Answer: AgentAnswer>(_ request: AgentRequest, note: (String) -> Void) throws(AgentFailure) -> Answer {
        let fd = try connect()
        defer { close(fd) }
        _ = clinux_receive_timeout(fd, Self.quietSeconds)
        guard sendAll(fd, request.line) else {
            throw unreachable("it closed the connection (\(String(cString: strerror(errno)))); is the agent behind this socket still running?")
        }
        var reader = LineReader(fd: fd, limit: AgentProtocol.answerLimit)
        var waited = 0
        while true {
            guard let line = reader.next() else {
                if reader.timedOut {
                    // Said once, then waited for: a refresh in flight, a keyring that is slow.
                    waited += Self.quietSeconds
                    if waited == Self.quietSeconds { note("cog-cred: waiting for the agent at \(path) to answer") }
                    if waited < Self.answerSeconds { continue }
                    throw AgentFailure(.temporary, "\(AgentFailure.named(path)) did not answer within \(Self.answerSeconds) s")
                }
                // Nothing at all: sshd or a relay took the connection for an agent that is gone.
                if reader.total == 0 { throw unreachable("it closed the connection without an answer; is the agent behind this socket still running?") }
                throw .broken(path, "closed the connection in the middle of its answer")
            }
            guard let answer = JSONValue.parse(line), let version = answer[AgentProtocol.versionField] else {
                throw .broken(path, "sent an answer that is not one JSON object a line")
            }
            guard version == .int(AgentProtocol.version) else {
                throw .versionMismatch(theirs: AgentProtocol.version(of: version), ours: AgentProtocol.version, side: "agent at \(path)")
            }
            if let text = answer[AgentProtocol.noteField]?.stringValue {
                note(text)
            } else if let ok = answer[AgentProtocol.okField]?.objectValue {
                guard let read = Answer(fields: ok) else { throw .broken(path, "sent an answer that cannot be read") }
                return read
            } else if let failure = CheckAnswer.failure(answer[AgentProtocol.errorField]) {
                throw failure
            } else {
                throw .broken(path, "sent an answer that cannot be read")
            }
        }
    }

    /// Seconds without a word from the agent before the person is told it is awaited.
    static let quietSeconds = 5
    /// The longest a request waits for its answer: past any refresh's
    /// deadline (a command's default is 30 s) and lock wait.
    static let answerSeconds = 120

    /// Whether an agent of this user's or root's answers, asking nothing:
    /// for a command that must know before it talks to Cognito (a sign-in
    /// whose tokens would have nowhere to go).
    public func check() throws(AgentFailure) {
        close(try connect())
    }

    /// A connection to the agent, once its socket and its process are known
    /// to be this user's or root's.
    func connect() throws(AgentFailure) -> Int32 {
        try checkSocket()
        let fd = clinux_unix_connect(path)
        guard fd >= 0 else {
            let reason = clinux_errno() == ENAMETOOLONG
                ? "the path is longer than a socket's \(clinux_socket_path_capacity()) bytes" : String(cString: strerror(clinux_errno()))
            throw unreachable(reason)
        }
        var uid: UInt32 = 0
        var pid: Int32 = 0
        guard clinux_peer(fd, &uid, &pid) == 0 else {
            close(fd)
            throw unreachable(String(cString: strerror(clinux_errno())))
        }
        // An agent answers its own user and root only, so one of root's
        // would refuse any other user: said here, from its credentials,
        // before anything is sent.
        guard uid == getuid() else {
            close(fd)
            throw .foreignOwner(path, uid: uid, ownUID: getuid())
        }
        return fd
    }
}

extension AgentConnection {
    /// The path, before anything connects to it: a socket itself (no
    /// link), this user's or root's, in a directory no one else can change
    /// (the config's rule, `unsafeDirectory`), which also keeps the socket
    /// from being swapped between this check and the connection. The
    /// peer's uid alone would take any process of root's: a link placed at
    /// the path by another user could lead to one.
    func checkSocket() throws(AgentFailure) {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw unreachable(String(cString: strerror(clinux_errno()))) }
        switch info.st_mode & mode_t(S_IFMT) {
        case mode_t(S_IFSOCK): break
        case mode_t(S_IFLNK): throw unreachable("it is a symbolic link; name the socket itself")
        default: throw unreachable("it is not a socket")
        }
        guard info.st_uid == getuid() || info.st_uid == 0 else { throw .foreignSocket(path, uid: info.st_uid, ownUID: getuid()) }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        if let unsafe = unsafeDirectory(from: directory.isEmpty ? "/" : directory) {
            throw unreachable(unsafe.reason(holding: "the agent's socket"))
        }
    }
}

/// Lines from a descriptor, each without its newline; nil at the end, on an
/// error, past `limit` bytes in all, or once the descriptor's receive
/// timeout fires (`timedOut`; another call reads on).
public struct LineReader {
    let fd: Int32
    let limit: Int
    var buffer: [UInt8] = []
    /// Bytes read so far.
    public private(set) var total = 0
    /// The last nil was the receive timeout's.
    public private(set) var timedOut = false

    public init(fd: Int32, limit: Int) {
        self.fd = fd
        self.limit = limit
    }

    public mutating func next() -> [UInt8]? {
        timedOut = false
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
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                timedOut = true
                return nil
            }
            guard n > 0 else { return nil }
            total += n
            buffer += chunk[..<n]
        }
    }
}

/// Sends all of `text` on a socket; false when the other end is gone (no
/// SIGPIPE: MSG_NOSIGNAL).
public func sendAll(_ fd: Int32, _ text: String) -> Bool {
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBytes { clinux_send_all(fd, $0.baseAddress, $0.count) } == 0
}
