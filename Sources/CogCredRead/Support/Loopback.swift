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
    if host.utf8.count == 9 && host.lowercased() == "localhost" { return true }
    // withCString, not the String itself: a short one (most hosts) would
    // be copied to the heap first, and the proxy asks this of every request.
    var v4 = in_addr()
    if host.withCString({ inet_pton(AF_INET, $0, &v4) }) == 1 {
        return UInt32(bigEndian: v4.s_addr) >> 24 == 127
    }
    var v6 = in6_addr()
    guard host.withCString({ inet_pton(AF_INET6, $0, &v6) }) == 1 else { return false }
    return withUnsafeBytes(of: &v6) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
}
