#if canImport(Glibc)
import Glibc
#endif

/// Writes all of `text` to a file descriptor, unbuffered, so output order is
/// exact and nothing is lost at exit; retried on EINTR.
public func writeAll(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return }
        offset += n
    }
}
