#if canImport(Glibc)
import Glibc
#endif

/// The session bus a Secret Service is looked for on.
public struct BusAddress: Sendable, Equatable {
    /// As D-Bus writes it: one or more `transport:key=value,...` joined by ';'.
    public var text: String

    public init(_ text: String) {
        self.text = text
    }

    /// True when every address in the list is a Unix socket: then only
    /// processes of this machine (and, with the bus's own checks, this user)
    /// can see the traffic, and secrets may travel in a "plain" session. A
    /// list that also names tcp: (or anything else) could fall through to it.
    public var isLocalOnly: Bool {
        // Split by bytes, not Characters: the Character split cost a read
        // more than the rest of its start-up checks.
        let entries = text.utf8.split(separator: UInt8(ascii: ";"))
        return !entries.isEmpty && entries.allSatisfy { $0.starts(with: "unix:".utf8) }
    }

    /// `DBUS_SESSION_BUS_ADDRESS`, else the user bus socket
    /// `$XDG_RUNTIME_DIR/bus` (what libdbus, GLib and sd-bus fall back to).
    /// An unset address must never make a D-Bus library spawn a bus
    /// (`dbus-launch --autolaunch`), which hangs or litters headless machines:
    /// with neither, or with `autolaunch:`, there is no bus.
    public static func session(environment: (String) -> String?) throws(SecretServiceError) -> BusAddress {
        if let address = environment("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty {
            if address.hasPrefix("autolaunch:") { throw .noSessionBus }
            return BusAddress(address)
        }
        if let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") {
            var info = stat()
            if stat(runtime + "/bus", &info) == 0 && (info.st_mode & mode_t(S_IFMT)) == mode_t(S_IFSOCK) {
                return BusAddress("unix:path=" + runtime + "/bus")
            }
        }
        throw .noSessionBus
    }
}
