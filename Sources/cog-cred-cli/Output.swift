import CogCredRead

#if canImport(Glibc)
import Glibc
#endif

/// stdout carries data only; everything for a person goes to stderr.
enum Output {
    /// A line of data on stdout.
    static func data(_ line: String) {
        raw(line + "\n")
    }

    /// Protocol text on stdout, exactly as given. If it cannot all be
    /// written, the command fails (74) rather than exit 0 with half a token.
    static func raw(_ text: String) {
        writeOutputOrExit(text)
    }

    /// A note for the person at the terminal. Notes and errors often quote
    /// Cognito (a delivery destination, a message): what could drive the
    /// terminal is removed (String.printable).
    static func note(_ line: String) {
        writeAll(2, line.printable + "\n")
    }

    /// The one line a failing command prints.
    static func error(_ line: String) {
        writeAll(2, "cog-cred: error: \(line.printable)\n")
    }
}
