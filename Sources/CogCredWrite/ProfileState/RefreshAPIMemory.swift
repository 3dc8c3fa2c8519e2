import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Remembers, per profile, that the service lacks GetTokensFromRefreshToken,
/// so refreshes after the first go straight to InitiateAuth.
public protocol RefreshAPIMemory: Sendable {
    func prefersInitiateAuth(profile: String) -> Bool
    func rememberInitiateAuth(profile: String)
    func forget(profile: String)
}

/// Forgets at exit: for tests and for callers with nowhere to write.
public final class InMemoryRefreshMemory: RefreshAPIMemory {
    private let profiles = Mutex<Set<String>>([])

    public init() {}

    public func prefersInitiateAuth(profile: String) -> Bool { profiles.withLock { $0.contains(profile) } }
    public func rememberInitiateAuth(profile: String) { _ = profiles.withLock { $0.insert(profile) } }
    public func forget(profile: String) { _ = profiles.withLock { $0.remove(profile) } }
}

/// An empty marker file per profile under the state directory
/// (`$XDG_STATE_HOME/cog-cred`). It holds nothing secret, and losing it costs
/// one failed request.
public struct FileRefreshMemory: RefreshAPIMemory {
    let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    func marker(_ profile: String) -> String { "\(directory)/\(profile).refresh-with-initiate-auth" }

    public func prefersInitiateAuth(profile: String) -> Bool {
        access(marker(profile), F_OK) == 0
    }

    public func rememberInitiateAuth(profile: String) {
        // Best effort: failing to remember only costs a request next time.
        guard makeDirectories(directory, mode: 0o700) == nil else { return }
        let fd = open(marker(profile), O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        if fd >= 0 { close(fd) }
    }

    public func forget(profile: String) {
        unlink(marker(profile))
    }
}
