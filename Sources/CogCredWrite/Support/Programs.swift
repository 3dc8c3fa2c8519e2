import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// What a program cog-cred ran (git, kubectl) printed, and how it ended.
public struct ProgramResult: Sendable, Equatable {
    public let status: Int32
    public let output: String
    public let errorOutput: String

    public init(status: Int32, output: String = "", errorOutput: String = "") {
        self.status = status
        self.output = output
        self.errorOutput = errorOutput
    }

    /// The program's own first line on stderr, for an error message: its
    /// words say best what is wrong with its file.
    public var firstErrorLine: String {
        let line = errorOutput.split(separator: "\n").first.map(String.init) ?? "exit status \(status)"
        return line.oneLine(limit: 300)
    }
}

/// Runs the tools whose own configuration the setup commands write: their
/// own programs write their own files (format, locking, modes), never
/// cog-cred. Tests put an in-memory fake in its place.
public protocol ProgramRunning: Sendable {
    /// Runs `arguments` (the first is looked for on PATH), nothing on its
    /// stdin, and waits. Throws `SetupError.programMissing` when it cannot start.
    func run(_ arguments: [String]) throws(SetupError) -> ProgramResult
}

/// Why a setup command wrote nothing (or stopped half way, which it says).
public struct SetupError: CogCredFailure, Equatable {
    public let message: String
    public let category: FailureCategory
    /// Set when the way out is one of the setup command's own options or
    /// the command itself, which only the executable names: it words such a
    /// failure whole (ErrorWording).
    public let reason: Reason?

    /// Failures whose way out is the command line's to name.
    public enum Reason: Sendable, Equatable {
        /// The repository's git configuration asked for outside any git repository.
        case repositoryScopeOutsideRepository
        /// cog-cred's helper could not be added after the host's helpers
        /// were cleared (`failure`: git's words); setting git up again
        /// writes them.
        case helpersCleared(host: String, failure: String)
    }

    public init(_ message: String, category: FailureCategory) {
        self.message = message
        self.category = category
        reason = nil
    }

    public init(_ reason: Reason, category: FailureCategory) {
        switch reason {
        case .repositoryScopeOutsideRepository:
            message = "the repository's .git/config can be written only inside a git repository"
        case .helpersCleared(let host, let failure):
            message = "\(failure) (the helpers for https://\(host) are now cleared)"
        }
        self.category = category
        self.reason = reason
    }

    /// The program is not installed (or not on PATH): exit 69, sysexits'
    /// "a support program does not exist".
    public static func programMissing(_ program: String, reason: String) -> SetupError {
        SetupError("cannot run \(program): \(reason); is it installed and on PATH?", category: .programUnavailable)
    }
}

/// The real programs, started with posix_spawnp in this process's
/// environment. Arguments are the caller's, never a secret: nothing secret
/// is ever written into git's or kubectl's files.
public struct SpawnedPrograms: ProgramRunning {
    public init() {}

    public func run(_ arguments: [String]) throws(SetupError) -> ProgramResult {
        var out: [Int32] = [0, 0]
        var err: [Int32] = [0, 0]
        guard pipe(&out) == 0 else { throw SetupError("cannot run \(arguments[0]): no pipe", category: .other) }
        guard pipe(&err) == 0 else {
            close(out[0]); close(out[1])
            throw SetupError("cannot run \(arguments[0]): no pipe", category: .other)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        // Nothing of cog-cred's from 3 up (the pipes' own ends among them),
        // as for the browser and qrencode: a kept connection, the Secret
        // Service's socket or the refresh lock is not git's or kubectl's.
        clinux_spawn_close_from(&actions, 3)
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, &argv, environ)
        close(out[1])
        close(err[1])
        guard spawned == 0 else {
            close(out[0]); close(err[0])
            throw .programMissing(arguments[0], reason: String(cString: strerror(spawned)))
        }
        let (output, errorOutput) = Self.drain(out[0], err[0])
        close(out[0]); close(err[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // Exited: its status; killed by a signal: 128 + the signal, as shells say.
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return ProgramResult(status: code, output: String(decoding: output, as: UTF8.self),
                             errorOutput: String(decoding: errorOutput, as: UTF8.self))
    }

    /// Both pipes to their end, together, so a program that fills one
    /// while the other is read cannot stall.
    private static func drain(_ first: Int32, _ second: Int32) -> ([UInt8], [UInt8]) {
        var collected: [[UInt8]] = [[], []]
        var open = [first, second]
        var buffer = [UInt8](repeating: 0, count: 16384)
        while open.contains(where: { $0 >= 0 }) {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in 0..<2 where open[index] >= 0 && fds[index].revents != 0 {
                let n = buffer.withUnsafeMutableBytes { read(open[index], $0.baseAddress, $0.count) }
                if n > 0 {
                    collected[index].append(contentsOf: buffer[0..<n])
                } else if n == 0 || errno != EINTR {
                    open[index] = -1
                }
            }
        }
        return (collected[0], collected[1])
    }
}
