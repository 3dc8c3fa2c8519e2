import CSecret

#if canImport(Glibc)
import Glibc
#endif

/// Which program answers as the Secret Service, so that an error can say
/// what to do in that program: gnome-keyring, KeePassXC and KWallet each
/// lock, ask and hang in their own way (docs/headless.md, a section each).
public enum SecretServiceProvider: Equatable, Sendable {
    case gnomeKeyring
    case keePassXC
    case kWallet
    /// Another program, by its process name.
    case other(String)

    /// The owner of org.freedesktop.secrets on the session bus (asked of the
    /// bus daemon, then /proc/PID/comm); nil when there is none, or the bus
    /// cannot be reached. Only asked when a command has failed.
    public static func current(environment: @Sendable (String) -> String?) -> SecretServiceProvider? {
        guard let address = try? BusAddress.session(environment: environment) else { return nil }
        setenv("DBUS_SESSION_BUS_ADDRESS", address.text, 1)  // GLib's bus is the one cog-cred checked
        return onGLibBus()
    }

    /// The owner on the bus GLib is set to (DBUS_SESSION_BUS_ADDRESS).
    static func onGLibBus() -> SecretServiceProvider? {
        let pid = csecret_provider_pid()
        guard pid != 0, let name = processName(pid) else { return nil }
        return SecretServiceProvider(processName: name)
    }

    /// Whether CreateItem's "replace" is safe to ask for: gnome-keyring and
    /// KWallet then update the item with the same attributes in place. For
    /// gnome-keyring it is one change to its keyring file, not a new item
    /// and a deletion (a refresh is about 2 ms faster). KWallet needs it:
    /// with a new item beside the old one (the same label) and the old one
    /// deleted, a second sign-in lost its refresh token in 89 of 300 tries
    /// (test_providers' repeated sign-ins). KeePassXC answers a replacing
    /// CreateItem with a dialog even with its confirmations off (headless,
    /// one that never closes); it and the rest get the new item and the
    /// deletion, which every provider does.
    var replacesInPlace: Bool { self == .gnomeKeyring || self == .kWallet }

    /// Whether a search lists a locked collection's items (as locked, as
    /// gnome-keyring does) rather than hiding them (KeePassXC): then a search
    /// that finds none means there are none, with no need to ask whether the
    /// collection is locked.
    var listsLockedItems: Bool { self == .gnomeKeyring }

    init(processName name: String) {
        switch name {
        case let name where name.hasPrefix("gnome-keyring"): self = .gnomeKeyring
        case let name where name.lowercased().hasPrefix("keepassxc"): self = .keePassXC
        case let name where name.hasPrefix("kwalletd"): self = .kWallet
        default: self = .other(name)
        }
    }

    static func processName(_ pid: UInt32) -> String? {
        let fd = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self).trimmingWhitespace()
    }

    /// What to tell the person about `error`, for this provider; nil where
    /// the error's own message says it already. `collectionLocked`: whether
    /// the keyring itself is locked (false: only items are, which is
    /// KeePassXC asking to confirm each access).
    public func message(for error: SecretServiceError, collectionLocked: Bool?) -> String? {
        switch (self, error) {
        case (.gnomeKeyring, .notResponding(let seconds)):
            return "the Secret Service (gnome-keyring) did not answer within \(seconds) s and may be stuck: restart it (gnome-keyring-daemon --replace)"
        case (.keePassXC, .locked) where collectionLocked == false:
            return "KeePassXC asks to confirm each client's access to its entries, and there is no display to confirm on here: in KeePassXC's Secret Service Integration settings, turn off \"Confirm when passwords are retrieved by clients\" (ConfirmAccessItem=false), or run cog-cred where KeePassXC's dialog can be answered"
        case (.keePassXC, .locked), (.keePassXC, .noDefaultCollection):
            return "KeePassXC's database is locked: open it in KeePassXC (and check that Secret Service Integration exposes a group of it), then try again"
        case (.keePassXC, .unlockDeclined):
            return "KeePassXC's database (or its access to the entries) is locked, and its dialog was dismissed or not answered in time: open the database in KeePassXC, then try again"
        case (.keePassXC, .notResponding(let seconds)):
            return "KeePassXC did not answer within \(seconds) s: it is probably showing a dialog of its own (unlock the database, confirm an access or a deletion) on the desktop; answer it, or turn off the confirmations in its Secret Service Integration settings for command-line tools"
        case (.kWallet, .locked), (.kWallet, .unlockDeclined), (.kWallet, .noDefaultCollection):
            return "KWallet's wallet is locked: closed, or not yet opened for Secret Service clients (KWallet waits for one to ask after each login, over SSH too): open it in KWalletManager or by logging in to Plasma; over SSH, run once on the desktop or with a display, or `secret-tool lookup service cog-cred` (libsecret asks KWallet to let clients in), then try again"
        case (.kWallet, .notResponding(let seconds)):
            return "KWallet did not answer within \(seconds) s: it is probably asking for the wallet's password in a dialog on the desktop; answer it, then try again"
        default:
            return nil
        }
    }
}
