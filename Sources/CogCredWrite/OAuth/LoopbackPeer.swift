#if canImport(Glibc)
import Glibc
#endif

/// Who is at the other end of a loopback TCP connection. TCP has no
/// SO_PEERCRED, but the kernel's socket table (/proc/net/tcp and tcp6) lists
/// the peer's own socket, keyed by its address and port, with the uid of the
/// user who made it. The redirect listener takes the browser's answer only
/// from the user signing in: any local user can connect to 127.0.0.1 and
/// ::1, and a callback planted by another user would sign this one in to
/// the planter's account (RFC 9700 4.7).
enum LoopbackPeer {
    /// The uid that owns the socket at the other end of `connection`, or
    /// nil when it cannot be told: the peer is not on this machine, or its
    /// socket is no longer held by any process (closed already, which the
    /// table shows with uid 0 and inode 0; a browser keeps its socket open
    /// until it has the page).
    static func ownerUID(of connection: Int32) -> UInt32? {
        var ours = sockaddr_storage()
        var theirs = sockaddr_storage()
        guard let local = address(of: connection, &ours, { getsockname($0, $1, $2) }), let remote = address(of: connection, &theirs, { getpeername($0, $1, $2) }),
            local.family == remote.family
        else { return nil }
        // The peer's row: its address first, ours second.
        let wanted = remote.text + " " + local.text
        return owner(in: local.family == AF_INET6 ? "/proc/net/tcp6" : "/proc/net/tcp", row: wanted)
    }

    /// An address as the kernel's table writes it: the address's 32-bit
    /// words each as the host reads them, then the port, in upper-case hex
    /// (127.0.0.1:8400 → `0100007F:20D0` on a little-endian host).
    static func address(
        of fd: Int32, _ storage: inout sockaddr_storage,
        _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> (family: Int32, text: String)? {
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, &length) }
        }
        guard named == 0 else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafeBytes(of: &storage) { raw -> (Int32, String)? in
            switch family {
            case AF_INET:
                let address = raw.load(fromByteOffset: 4, as: UInt32.self)  // sin_addr, as stored
                let port = UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self))
                return (family, hex(address, width: 8) + ":" + hex(UInt32(port), width: 4))
            case AF_INET6:
                var words = ""
                for index in 0..<4 { words += hex(raw.load(fromByteOffset: 8 + 4 * index, as: UInt32.self), width: 8) }
                let port = UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self))
                return (family, words + ":" + hex(UInt32(port), width: 4))
            default:
                return nil
            }
        }
    }

    static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// The uid of the table's row whose addresses are `row` (`local remote`),
    /// when a process holds that socket (its inode is not 0).
    static func owner(in table: String, row: String) -> UInt32? {
        let fd = open(table, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            for byte in buffer[0..<n] {
                guard byte == UInt8(ascii: "\n") else {
                    line.append(byte)
                    continue
                }
                if let uid = owner(of: line, row: row) { return uid }
                line.removeAll(keepingCapacity: true)
            }
        }
    }

    /// `sl local remote st queues timer retransmits uid timeout inode ...`
    static func owner(of line: [UInt8], row: String) -> UInt32? {
        let fields = line.split(separator: UInt8(ascii: " "))
        guard fields.count > 9, String(decoding: fields[1], as: UTF8.self) + " " + String(decoding: fields[2], as: UTF8.self) == row,
            let uid = UInt32(String(decoding: fields[7], as: UTF8.self)),
            let inode = UInt64(String(decoding: fields[9], as: UTF8.self)), inode != 0
        else { return nil }
        return uid
    }
}
