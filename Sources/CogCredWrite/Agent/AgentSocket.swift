import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// Where `cog-cred agent` listens, and the listening itself: a socket made
/// 0600 in a directory of this user's that no one else can write, never
/// taken from an agent that still answers there.
public struct AgentSocket: Sendable {
    public let path: String
    /// The directory made for this socket (mkdtemp), removed with it.
    public let madeDirectory: String?
    public let fd: Int32

    public enum Failure: Error, Equatable {
        /// A usage problem: a directory others could swap, a path that is no socket.
        case unusable(String)
        /// The path is longer than a socket's address holds (`capacity`
        /// bytes): a usage problem, whose fix is a shorter path given.
        case tooLong(path: String, capacity: Int)
        /// Another agent answers at the path (69).
        case taken(String)
        case failed(String)
    }

    /// `--socket`, else `$XDG_RUNTIME_DIR/cog-cred/agent` when that
    /// directory is this user's own and 0700, else `agent` in a new 0700
    /// directory under $TMPDIR (else /tmp), as ssh-agent does.
    public static func listen(at given: String?, environment: (String) -> String?) -> Result<AgentSocket, Failure> {
        if let given { return listen(given, madeDirectory: nil) }
        if let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/"), isPrivate(runtime) {
            let directory = runtime + "/cog-cred"
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                return .failure(.failed("cannot make \(directory): \(String(cString: strerror(errno)))"))
            }
            guard isPrivate(directory) else {
                return .failure(.unusable("\(directory) must be a directory of yours that only you can use (chmod 700 \(directory))"))
            }
            return listen(directory + "/agent", madeDirectory: nil)
        }
        let base = environment("TMPDIR").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var template = Array((base + "/cog-cred-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            return .failure(.failed("cannot make a directory in \(base): \(String(cString: strerror(errno)))"))
        }
        let directory = String(cString: made)
        let result = listen(directory + "/agent", madeDirectory: directory)
        if case .failure = result { rmdir(directory) }
        return result
    }

    /// Whose socket it is (the agent's, or `cog-cred proxy --socket`'s), for
    /// the words of a failure: the rule is the same.
    public enum Owner: Sendable {
        case agent
        case proxy
    }

    /// `path`, checked and listened at: a socket left there by a server that
    /// is gone is replaced, one that still answers is not.
    public static func listen(_ path: String, madeDirectory: String?, for owner: Owner = .agent) -> Result<AgentSocket, Failure> {
        guard path.utf8.count <= clinux_socket_path_capacity() else {
            return .failure(.tooLong(path: path, capacity: clinux_socket_path_capacity()))
        }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        if let problem = unsafeDirectory(from: directory.isEmpty ? "/" : directory) {
            return .failure(.unusable(problem.reason(holding: owner == .agent ? "the agent's socket" : "the proxy's socket")))
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else { return .failure(.unusable("\(path) exists and is not a socket")) }
            let probe = clinux_unix_connect(path)
            if probe >= 0 {
                close(probe)
                return .failure(
                    .taken(
                        owner == .agent
                            ? "an agent already answers at \(path); use it (export COG_CRED_AGENT=\(path)) or stop it first"
                            : "something already answers at \(path) (another cog-cred proxy?); stop it first, or give another --socket"))
            }
            // Nothing listens: a socket left by a server that is gone.
            unlink(path)
        }
        let fd = clinux_unix_listen(path)
        guard fd >= 0 else { return .failure(.failed("cannot listen on \(path): \(String(cString: strerror(clinux_errno())))")) }
        return .success(AgentSocket(path: path, madeDirectory: madeDirectory, fd: fd))
    }

    /// This user's own directory, which no one else may enter.
    static func isPrivate(_ directory: String) -> Bool {
        var info = stat()
        return lstat(directory, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == getuid() && info.st_mode & 0o077 == 0
    }
}
