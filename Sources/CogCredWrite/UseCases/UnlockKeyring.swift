import CogCredRead

/// The keyring calls `UnlockKeyring` makes: whether the default collection
/// is locked, and gnome-keyring's unlock with a password (no prompt).
/// LibsecretWriter is the real one; tests use a fake.
public protocol KeyringPasswordUnlocking: AnyObject {
    /// Whether the default collection is locked now.
    func defaultCollectionIsLocked() throws(SecretServiceError) -> Bool
    /// Offers `password` to the running gnome-keyring for its default
    /// collection, over the Secret Service's encrypted session.
    func unlockDefaultCollection(password: [UInt8]) throws(SecretServiceError) -> PasswordUnlock
}

/// What the keyring said to a password.
public enum PasswordUnlock: Equatable, Sendable {
    case unlocked
    /// The password was wrong; the collection stays locked.
    case denied
    /// The service has no unlock by password: it is not gnome-keyring.
    case notSupported
}

/// Unlocks the running gnome-keyring's default collection with its password,
/// without a prompt: for a session with no display (SSH, a container), where
/// the keyring's own dialog cannot be shown and `gnome-keyring-daemon
/// --unlock` would start a second daemon instead of unlocking this one.
/// Uses gnome-keyring's own interface (what its tools use); KeePassXC and
/// KWallet have none over the Secret Service (docs/headless.md).
public struct UnlockKeyring {
    public enum Outcome: Equatable, Sendable {
        case alreadyUnlocked
        case unlocked
    }

    let keyring: any KeyringPasswordUnlocking
    /// Which program answers as the Secret Service (nil: cannot be told).
    /// The keyring's password goes to gnome-keyring only: another program
    /// known to answer is refused before anything is sent to it.
    let provider: () -> SecretServiceProvider?

    public init(keyring: any KeyringPasswordUnlocking, provider: @escaping () -> SecretServiceProvider?) {
        self.keyring = keyring
        self.provider = provider
    }

    /// `password` is asked for only when the collection is locked; its bytes
    /// are overwritten once the keyring has had them.
    public func run(password: () throws -> [UInt8]) throws -> Outcome {
        let answering = provider()
        if let answering, answering != .gnomeKeyring { throw UnlockKeyringError.notGnomeKeyring(provider: answering) }
        do {
            guard try keyring.defaultCollectionIsLocked() else { return .alreadyUnlocked }
        } catch {
            throw UnlockKeyringError(error)
        }
        var secret = try password()
        defer { secret.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        guard !secret.isEmpty else { throw InputError("the keyring's password is empty") }
        let answer: PasswordUnlock
        do {
            answer = try keyring.unlockDefaultCollection(password: secret)
        } catch {
            throw UnlockKeyringError(error)
        }
        switch answer {
        case .denied:
            throw UnlockKeyringError.wrongPassword
        case .notSupported:
            throw UnlockKeyringError.notGnomeKeyring(provider: answering)
        case .unlocked:
            // gnome-keyring answers a wrong password with an error; asked
            // again anyway, so "unlocked" is only ever said of what is.
            do {
                guard try !keyring.defaultCollectionIsLocked() else { throw UnlockKeyringError.stillLocked }
            } catch let error as SecretServiceError {
                throw UnlockKeyringError(error)
            }
            return .unlocked
        }
    }
}

/// Why the keyring was not unlocked. A wrong password is 77; a keyring
/// that cannot be unlocked this way (none, none by default, not
/// gnome-keyring) is 69, pointing to docs/headless.md.
public enum UnlockKeyringError: CogCredFailure, Equatable {
    case wrongPassword
    /// gnome-keyring took the password, and the collection is still locked.
    case stillLocked
    /// The Secret Service is another program (by name where known).
    case notGnomeKeyring(provider: SecretServiceProvider?)
    /// No session bus, no Secret Service on it, or no default collection.
    case noKeyring(SecretServiceError)
    /// Anything else the Secret Service failed with, as it is.
    case keyring(SecretServiceError)

    init(_ error: SecretServiceError) {
        switch error {
        case .noSessionBus, .serviceUnavailable, .noDefaultCollection: self = .noKeyring(error)
        default: self = .keyring(error)
        }
    }

    public var category: FailureCategory {
        switch self {
        case .wrongPassword: return .notAuthenticated
        case .notGnomeKeyring, .noKeyring, .stillLocked: return .secretServiceUnavailable
        case .keyring(let error): return error.category
        }
    }

    static let onlyGnomeKeyring = "this unlocks a running gnome-keyring only; for KeePassXC and KWallet see docs/headless.md"

    public var message: String {
        switch self {
        case .wrongPassword:
            return "gnome-keyring refused the password: the keyring stays locked (it is the keyring's own password, often the login password); try again"
        case .stillLocked:
            return "gnome-keyring took the password, and the keyring is still locked; try again, or restart the keyring daemon"
        case .notGnomeKeyring(let provider):
            let name: String
            switch provider {
            case .keePassXC?: name = "KeePassXC"
            case .kWallet?: name = "KWallet"
            case .other(let process)?: name = "'\(process.oneLine(limit: 32))'"
            case .gnomeKeyring?, nil: name = "a program"
            }
            return "the Secret Service here is \(name), not gnome-keyring, and offers no unlock by password: \(Self.onlyGnomeKeyring)"
        case .noKeyring(.noSessionBus):
            return "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset and there is no $XDG_RUNTIME_DIR/bus), so no keyring to unlock: \(Self.onlyGnomeKeyring)"
        case .noKeyring(.serviceUnavailable(let detail)):
            return "no Secret Service on the session bus (\(detail.oneLine())), so no keyring to unlock: \(Self.onlyGnomeKeyring)"
        case .noKeyring(let error):
            return "\(error.message); \(Self.onlyGnomeKeyring)"
        case .keyring(let error):
            return error.message
        }
    }
}
