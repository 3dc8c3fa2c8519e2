#if canImport(Glibc)
import Glibc
#endif

/// stdout carries data only; everything for a person goes to stderr.
enum Output {
    /// A line of data on stdout.
    static func data(_ line: String) {
        write(1, line + "\n")
    }

    /// Protocol text on stdout, exactly as given.
    static func raw(_ text: String) {
        write(1, text)
    }

    /// A note for the person at the terminal.
    static func note(_ line: String) {
        write(2, line + "\n")
    }

    /// The one line a failing command prints.
    static func error(_ line: String) {
        write(2, "cog-cred: error: \(line)\n")
    }

    /// Unbuffered, so that output order is exact and nothing is lost at exit.
    private static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}
