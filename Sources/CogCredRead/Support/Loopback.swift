#if canImport(Glibc)
import Glibc
#endif

/// Whether `host` (a name, or an address without brackets or port) is this
/// machine: `localhost`, an address in 127.0.0.0/8, or ::1 (in any
/// spelling inet_pton reads). Other names are not resolved: a name's
/// address can change, and the decision must hold for the request that
/// follows. The one rule for where plain HTTP may go: Cognito's endpoint
/// (Endpoint) and a git server (GitCredential).
public func isLoopbackHost(_ host: String) -> Bool {
    var host = host
    return host.withUTF8 { isLoopbackHost(UnsafeRawBufferPointer($0)) }
}

/// `isLoopbackHost` of a host's UTF-8 bytes: the proxy asks it of every
/// request's Host, and makes no String for it.
public func isLoopbackHost(_ host: UnsafeRawBufferPointer) -> Bool {
    // The longest address inet_pton reads is 45 characters (INET6_ADDRSTRLEN
    // less its NUL); a NUL inside would end the C string early.
    guard host.count <= 45, !host.contains(0) else { return false }
    if host.count == 9 && zip(host, "localhost".utf8).allSatisfy({ ($0 >= 65 && $0 <= 90 ? $0 | 0x20 : $0) == $1 }) { return true }
    return withUnsafeTemporaryAllocation(of: CChar.self, capacity: host.count + 1) { text in
        // inet_pton reads a C string: the bytes and a NUL, on the stack.
        let base = text.baseAddress!
        UnsafeMutableRawPointer(base).copyMemory(from: host.baseAddress ?? UnsafeRawPointer(base), byteCount: host.count)
        base[host.count] = 0
        var v4 = in_addr()
        if inet_pton(AF_INET, base, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, base, &v6) == 1 else { return false }
        return withUnsafeBytes(of: &v6) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
    }
}
