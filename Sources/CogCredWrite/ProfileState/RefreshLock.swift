import CogCredRead
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Serialises refreshes of one profile across processes, so that a burst of
/// callers on an expired token makes one refresh and the rest use its result
/// (and a rotating refresh token is never spent twice).
public protocol RefreshLock: Sendable {
    /// Runs `body` holding the profile's lock.
    func withLock<T>(profile: String, _ body: () throws -> T) throws -> T
    /// True, once, when the front binary handed this process the profile's
    /// lock after finding under it that the stored tokens need a refresh:
    /// nobody can have stored any since, so they need not be read again.
    func takeRefreshDue(profile: String) -> Bool
}

/// No locking: for tests that run one caller.
public struct NoRefreshLock: RefreshLock {
    public init() {}
    public func withLock<T>(profile: String, _ body: () throws -> T) throws -> T { try body() }
}

extension RefreshLock {
    /// Only a lock handed over by the front carries a finding.
    public func takeRefreshDue(profile: String) -> Bool { false }
}

/// The profile lock the front binary handed over, held by its descriptor.
public final class HandedOverLock: Sendable {
    public let profile: String
    let fd: Int32
    /// The front's finding, good for the first use only: once this process
    /// has let the lock go, another may have refreshed.
    private let refreshDue = Mutex(true)

    public init(profile: String, fd: Int32) {
        self.profile = profile
        self.fd = fd
    }

    /// The lock the front handed over (`ProfileLockFile.takeHandedOver`), if any.
    public static func take() -> HandedOverLock? {
        ProfileLockFile.takeHandedOver().map { HandedOverLock(profile: $0.profile, fd: $0.fd) }
    }

    func takeRefreshDue() -> Bool {
        refreshDue.withLock { due in
            defer { due = false }
            return due
        }
    }
}

/// Why the lock could not be taken.
public enum RefreshLockError: CogCredFailure, Equatable {
    case unusableDirectory(String, String)
    case timedOut(profile: String, seconds: Int)

    public var category: FailureCategory {
        switch self {
        // The user's to fix, like a config others could write (78).
        case .unusableDirectory: return .configuration
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

/// The per-profile lock file (`ProfileLockFile`), shared with the front binary.
public struct FileRefreshLock: RefreshLock {
    let directory: String
    /// How long to wait for another process's refresh.
    let wait: Double
    /// A lock this process already holds, handed over by the front binary.
    let held: HandedOverLock?

    public init(directory: String, wait: Double, held: HandedOverLock? = nil) {
        self.directory = directory
        self.wait = wait
        self.held = held
    }

    /// See `ProfileLockFile.directory`.
    public static func directory(environment: [String: String]) -> String {
        ProfileLockFile.directory { environment[$0] }
    }

    public func takeRefreshDue(profile: String) -> Bool {
        guard let held, held.profile == profile else { return false }
        return held.takeRefreshDue()
    }

    public func withLock<T>(profile: String, _ body: () throws -> T) throws -> T {
        if let held, held.profile == profile {
            // Taking again a lock this descriptor holds succeeds at once.
            // It is released right after the body, so that callers waiting
            // in the front binary read the refreshed tokens without waiting
            // for this process to exit; a second use waits like any.
            try take(held.fd, profile: profile)
            defer { ProfileLockFile.unlock(held.fd) }
            return try body()
        }
        let fd: Int32
        switch ProfileLockFile.open(directory: directory, profile: profile) {
        case .success(let opened): fd = opened
        case .failure(let error): throw RefreshLockError.unusableDirectory(directory, error.reason)
        }
        defer { close(fd) }  // closing releases the lock
        try take(fd, profile: profile)
        return try body()
    }

    private func take(_ fd: Int32, profile: String) throws {
        if case .failure(let error) = ProfileLockFile.lock(fd, waitingAtMost: wait) {
            if error.timedOut { throw RefreshLockError.timedOut(profile: profile, seconds: Int(wait)) }
            throw RefreshLockError.unusableDirectory(directory, error.reason)
        }
    }
}
