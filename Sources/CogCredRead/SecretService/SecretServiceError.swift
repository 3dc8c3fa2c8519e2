/// The Secret Service could not be used. Every case exits 69, each with its
/// own message, and cog-cred never falls back to storing anything elsewhere;
/// `agent`, the store COG_CRED_AGENT names, exits as its failure says.
public enum SecretServiceError: CogCredFailure, Equatable {
    /// No D-Bus session bus to talk to (and cog-cred will not start one).
    case noSessionBus
    /// A bus, but nothing provides org.freedesktop.secrets on it, or it failed to answer.
    case serviceUnavailable(String)
    /// The Secret Service has no default collection (keyring) to keep items in.
    case noDefaultCollection
    /// The default collection exists but is locked.
    case locked
    /// The Secret Service was asked to unlock it, and its prompt was
    /// dismissed, could not be shown, or got no answer.
    case unlockDeclined
    /// The Secret Service did not answer in time (a hung keyring daemon).
    case notResponding(seconds: Double)
    /// The bus is reached through something other than Unix sockets, and this
    /// program cannot encrypt the session (the front binary hands over).
    case needsEncryptedSession
    /// Any other failure, with the D-Bus error name, a code where there is one, and the message.
    case failed(operation: String, domain: String, code: Int32, detail: String)
    /// The agent kept in its place (AgentTokenStore) failed, or could not be reached.
    case agent(AgentFailure)

    public var category: FailureCategory {
        if case .agent(let failure) = self { return failure.category }
        return .secretServiceUnavailable
    }

    public var message: String {
        switch self {
        case .noSessionBus:
            return "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset and there is no $XDG_RUNTIME_DIR/bus), so no Secret Service to keep tokens in; without a desktop (CI, a container, SSH), keep them in an agent's memory: eval \"$(cog-cred agent --memory --daemon)\"; or run inside a desktop or `dbus-run-session` with a keyring daemon"
        case .serviceUnavailable(let detail):
            return "the Secret Service is not available on the session bus (\(detail.oneLine())); start a keyring daemon such as gnome-keyring or KeePassXC"
        case .noDefaultCollection:
            return "the Secret Service has no default keyring; create one in your keyring manager (for gnome-keyring without a display: pipe a new password to `gnome-keyring-daemon --replace --unlock`)"
        case .locked:
            return "the keyring is locked; unlock it (log in to the desktop, open your keyring manager, or, for gnome-keyring without a display, pipe the password to `cog-cred unlock --password-stdin`) and try again"
        case .unlockDeclined:
            return "the keyring is locked, and its unlock prompt was dismissed or could not be shown (no display: SSH, a container); unlock it and try again (log in to the desktop, open your keyring manager, or, for gnome-keyring, pipe the password to `cog-cred unlock --password-stdin`)"
        case .notResponding(let seconds):
            return "the Secret Service did not answer within \(seconds) s; the keyring daemon may be stuck: restart it (for gnome-keyring: gnome-keyring-daemon --replace)"
        case .needsEncryptedSession:
            return "the session bus is not reached through a Unix socket, and this program cannot encrypt the session; run cog-cred-cli"
        case .failed(let operation, let domain, let code, let detail):
            let name = code == 0 ? domain : "\(domain) \(code)"
            return "the Secret Service failed to \(operation) (\(name): \(detail.oneLine()))"
        case .agent(let failure):
            return failure.message
        }
    }
}
