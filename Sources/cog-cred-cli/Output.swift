import CogCredCache

/// stdout carries data only; everything for a person goes to stderr.
enum Output {
    /// A line of data on stdout.
    static func data(_ line: String) {
        writeAll(1, line + "\n")
    }

    /// Protocol text on stdout, exactly as given.
    static func raw(_ text: String) {
        writeAll(1, text)
    }

    /// A note for the person at the terminal.
    static func note(_ line: String) {
        writeAll(2, line + "\n")
    }

    /// The one line a failing command prints.
    static func error(_ line: String) {
        writeAll(2, "cog-cred: error: \(line)\n")
    }
}
