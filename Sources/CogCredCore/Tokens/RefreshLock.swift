#if canImport(Glibc)
import Glibc
#endif

/// Serialises refreshes of one profile across processes, so that a burst of
/// callers on an expired token makes one refresh and the rest use its result
/// (and a rotating refresh token is never spent twice).
public protocol RefreshLock: Sendable {
    /// Runs `body` holding the profile's lock.
    func withLock<T>(profile: String, _ body: () throws -> T) throws -> T
}

/// No locking: for tests that run one caller.
public struct NoRefreshLock: RefreshLock {
    public init() {}
    public func withLock<T>(profile: String, _ body: () throws -> T) throws -> T { try body() }
}

/// Why the lock could not be taken.
public enum RefreshLockError: CogCredFailure, Equatable {
    case unusableDirectory(String, String)
    case timedOut(profile: String, seconds: Int)

    public var category: FailureCategory {
        switch self {
        case .unusableDirectory: return .other
        case .timedOut: return .temporary
        }
    }

    public var message: String {
        switch self {
        case .unusableDirectory(let path, let reason):
            return "cannot use the lock directory \(path): \(reason)"
        case .timedOut(let profile, let seconds):
            return "another cog-cred process held the refresh lock of profile '\(profile)' for over \(seconds) s; try again"
        }
    }
}

/// An advisory lock (flock) on `<directory>/<profile>.lock`. The kernel drops
/// it when its holder exits, however it exits, so a killed process never
/// leaves a stale lock behind; the file itself is never removed (removing it
/// would let two processes lock two different files).
public struct FileRefreshLock: RefreshLock {
    let directory: String
    /// How long to wait for another process's refresh.
    let wait: Double

    public init(directory: String, wait: Double) {
        self.directory = directory
        self.wait = wait
    }

    /// `$XDG_RUNTIME_DIR/cog-cred`, else a per-user directory under /tmp.
    public static func directory(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { return runtime + "/cog-cred" }
        return "/tmp/cog-cred-\(getuid())"
    }

    public func withLock<T>(profile: String, _ body: () throws -> T) throws -> T {
        let fd = try open(profile)
        defer { close(fd) }  // closing releases the lock
        let deadline = Deadline(secondsFromNow: wait)
        var pause = 0.005
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw RefreshLockError.unusableDirectory(directory, String(cString: strerror(errno)))
            }
            guard deadline.remaining > 0 else { throw RefreshLockError.timedOut(profile: profile, seconds: Int(wait)) }
            // Polling rather than a blocking flock keeps the wait bounded
            // without signals; the holder is waiting on the network, so a
            // few milliseconds of latency here cost nothing.
            var interval = timespec(tv_sec: 0, tv_nsec: Int(min(pause, deadline.remaining) * 1e9))
            nanosleep(&interval, nil)
            pause = min(pause * 2, 0.1)
        }
        return try body()
    }

    func open(_ profile: String) throws -> Int32 {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw RefreshLockError.unusableDirectory(directory, String(cString: strerror(errno)))
        }
        // A directory someone else owns or can write to could be used to
        // swap the lock file under us.
        var info = stat()
        guard lstat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid(),
            info.st_mode & 0o077 == 0
        else {
            throw RefreshLockError.unusableDirectory(directory, "it must be a directory of yours with mode 0700")
        }
        let fd = Glibc.open(directory + "/" + profile + ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw RefreshLockError.unusableDirectory(directory, String(cString: strerror(errno))) }
        return fd
    }
}
