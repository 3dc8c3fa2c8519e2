#if canImport(Glibc)
import Glibc
#endif

/// Writes all of `text` to a file descriptor, unbuffered, so output order is
/// exact and nothing is lost at exit; retried on EINTR. False when not all
/// of it was written (a closed pipe, a full disk): a caller that hands out a
/// token must then fail, never exit 0 with half a token.
@discardableResult
public func writeAll(_ fd: Int32, _ text: String) -> Bool {
    var bytes = Array(text.utf8)
    defer { bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        offset += n
    }
    return true
}

/// The exit status of a command whose data could not be written to stdout
/// (sysexits.h EX_IOERR).
public let outputFailedStatus: Int32 = 74

/// Writes data to stdout; when it cannot all be written, says so on stderr
/// and ends the process with 74 at once.
public func writeOutputOrExit(_ text: String) {
    guard writeAll(1, text) else {
        writeAll(2, "cog-cred: error: cannot write to standard output: \(String(cString: strerror(errno)))\n")
        _exit(outputFailedStatus)
    }
}
