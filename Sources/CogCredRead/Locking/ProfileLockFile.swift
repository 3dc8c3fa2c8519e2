import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// The per-profile lock file that serialises refreshes across processes:
/// an advisory flock on `<directory>/<profile>.lock`. The kernel drops the
/// lock when its holder exits, however it exits, so a killed process never
/// leaves a stale lock; the file itself is never removed (removing it would
/// let two processes lock two different files).
///
/// The front binary takes it on a cache miss, so that a burst of callers
/// waits for one refresh instead of each loading the full command line;
/// the one that refreshes hands its locked descriptor to cog-cred-cli
/// through `heldLockVariable`.
public enum ProfileLockFile {
    /// "<profile>:<fd>" of a lock this process already holds, handed over
    /// by the front after it found, under the lock, that the stored tokens
    /// need a refresh (and only then).
    public static let heldLockVariable = "COG_CRED_HELD_LOCK"

    /// `locks` in the state directory (`$XDG_STATE_HOME/cog-cred`, by
    /// default `~/.local/state/cog-cred`): one place in every environment.
    /// Not `$XDG_RUNTIME_DIR`, which cron, `su -` and ssh sessions without
    /// a login session lack: a refresh there would take another lock than
    /// the desktop's, and two refreshes could spend one refresh token. Never
    /// a shared directory such as /tmp, where another user could make the
    /// directory first and so stop every refresh and sign-in.
    public static func directory(environment: (String) -> String?) -> String {
        Paths(environment: ["HOME", "XDG_STATE_HOME"].reduce(into: [:]) { $0[$1] = environment($1) }).stateDirectory + "/locks"
    }

    /// Opens (creating) the profile's lock file, after checking that no one
    /// else can swap it: the directory is the user's own with mode 0700, and
    /// each above it the user's or root's and writable by no one else
    /// (`unsafeDirectory`). The directory is opened without following a
    /// link, checked through its descriptor (the walk's first directory is
    /// the one opened, by device and inode) and the file opened relative to
    /// it, so that what was checked is what holds the lock. Returns the
    /// descriptor or why not.
    public static func open(directory: String, profile: String) -> Result<Int32, LockFileError> {
        let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
        var directoryFD = clinux_open(directory, flags, 0)
        if directoryFD < 0 && errno == ENOENT {  // made once; every read opens it
            if let problem = makeDirectories(directory, mode: 0o700) { return .failure(LockFileError(problem)) }
            directoryFD = clinux_open(directory, flags, 0)
        }
        guard directoryFD >= 0 else { return .failure(LockFileError(String(cString: strerror(errno)))) }
        defer { close(directoryFD) }
        if let unsafe = unsafeDirectory(from: directory, opened: directoryFD) {
            return .failure(LockFileError(unsafe.reason(holding: "the profile locks")))
        }
        var info = stat()
        guard fstat(directoryFD, &info) == 0, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            return .failure(LockFileError("it must be a directory of yours with mode 0700"))
        }
        let fd = clinux_openat(directoryFD, profile + ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return .failure(LockFileError(String(cString: strerror(errno)))) }
        return .success(fd)
    }

    /// Takes the lock if no other process holds it, without waiting: false
    /// when it is held (errno EWOULDBLOCK) or on an error (errno says which).
    public static func tryLock(_ fd: Int32) -> Bool {
        flock(fd, LOCK_EX | LOCK_NB) == 0
    }

    /// Lets the lock go; the descriptor stays open.
    public static func unlock(_ fd: Int32) {
        flock(fd, LOCK_UN)
    }

    /// Leaves the held lock `fd` open across the exec that follows, named
    /// in `heldLockVariable` as "<profile>:<fd>": the front hands it to
    /// cog-cred-cli this way.
    public static func handOver(_ fd: Int32, profile: String) {
        _ = clinux_set_descriptor_flags(fd, 0)
        setenv(heldLockVariable, "\(profile):\(fd)", 1)
    }

    /// The lock the front handed over, if any: the variable is removed and
    /// the descriptor closed on exec again, so that nothing this process
    /// runs inherits either. Never one of 0-2 (those are not ours).
    public static func takeHandedOver() -> (profile: String, fd: Int32)? {
        guard let value = getenv(heldLockVariable).map({ String(cString: $0) }) else { return nil }
        unsetenv(heldLockVariable)
        let parts = value.split(separator: ":")
        guard parts.count == 2, let fd = Int32(parts[1]), fd > 2, clinux_set_descriptor_flags(fd, FD_CLOEXEC) == 0 else { return nil }
        return (String(parts[0]), fd)
    }

    /// Takes the lock, waiting at most `seconds` (blocking: a waiter wakes
    /// the moment the holder lets go).
    public static func lock(_ fd: Int32, waitingAtMost seconds: Double) -> Result<Void, LockFileError> {
        guard clinux_flock_within(fd, LOCK_EX, milliseconds(seconds)) == 0 else {
            if errno == EWOULDBLOCK { return .failure(LockFileError(timedOut: true)) }
            return .failure(LockFileError(String(cString: strerror(errno))))
        }
        return .success(())
    }

    /// True when another process holds the lock now (it is refreshing or
    /// signing out). Never waits.
    public static func isHeld(_ fd: Int32) -> Bool {
        guard flock(fd, LOCK_SH | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
        unlock(fd)
        return false
    }

    /// Waits until no process holds the lock, at most `seconds`; false on
    /// a timeout or an error. It takes a shared lock and drops it at once:
    /// when a refresh ends, every caller waiting here wakes together and
    /// reads the tokens the refresh stored, instead of queueing for the
    /// exclusive lock one by one.
    public static func waitUntilFree(_ fd: Int32, waitingAtMost seconds: Double) -> Bool {
        guard clinux_flock_within(fd, LOCK_SH, milliseconds(seconds)) == 0 else { return false }
        unlock(fd)
        return true
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        max(1, Int((seconds * 1000).rounded(.up)))
    }
}

/// Why the lock file could not be used or taken.
public struct LockFileError: Error, Equatable {
    public var reason: String
    public var timedOut: Bool

    public init(_ reason: String) {
        self.reason = reason
        timedOut = false
    }

    public init(timedOut: Bool) {
        reason = "timed out"
        self.timedOut = timedOut
    }
}
