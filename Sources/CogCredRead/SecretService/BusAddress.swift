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
        // By bytes, not `split`: splitting a String by Characters costs a
        // read more than the rest of its start-up checks.
        var sawOne = false
        var entryStart = true
        let prefix = Array("unix:".utf8)
        var matched = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: ";") {
                if !entryStart && matched < prefix.count { return false }
                entryStart = true
                matched = 0
                continue
            }
            if entryStart { entryStart = false; sawOne = true }
            if matched < prefix.count {
                guard byte == prefix[matched] else { return false }
                matched += 1
            }
        }
        return sawOne && (entryStart || matched == prefix.count)
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
            if stat(runtime + "/bus", &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK {
                return BusAddress("unix:path=" + runtime + "/bus")
            }
        }
        throw .noSessionBus
    }
}
