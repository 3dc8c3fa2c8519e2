import ArgumentParser

/// The one line a usage error gets: what is wrong, and the help to read,
/// the subcommand's own when one was named (`see: cog-cred token --help`).
enum UsageError {
    /// `parserMessage`: swift-argument-parser's first line, without "Error: ".
    /// Every command's name, its aliases too (`login`, `logout`).
    static var commandNames: [String] {
        CogCredCommand.configuration.subcommands.flatMap { [$0._commandName] + $0.configuration.aliases }
    }

    static func line(_ parserMessage: String, arguments: [String]) -> String {
        let names = commandNames
        guard let first = arguments.first, !first.hasPrefix("-") else {
            return "\(parserMessage) (see: cog-cred --help)"
        }
        guard names.contains(first) else {
            var line = "unknown command '\(first)'"
            if let closest = closest(to: first, in: names) { line += "; did you mean '\(closest)'?" }
            return line + " (see: cog-cred --help)"
        }
        let help = "(see: cog-cred \(first) --help)"
        // There is no --password: a password in argv is readable by every
        // user through /proc/PID/cmdline and ps. Say what to use instead,
        // never repeating the value.
        if arguments.contains(where: { $0 == "--password" || $0.hasPrefix("--password=") }) {
            return "there is no --password option: a password on the command line is visible to other users (ps, /proc); pipe it to --password-stdin, or leave it out to be asked \(help)"
        }
        return "\(parserMessage) \(help)"
    }

    /// The name nearest to `word` (at most two edits away, or one it starts), if any.
    static func closest(to word: String, in names: [String]) -> String? {
        let scored = names.map { (name: $0, distance: editDistance(Array(word), Array($0))) }
        if let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= 2 { return best.name }
        return names.first { $0.hasPrefix(word) && word.count >= 3 }
    }

    /// Levenshtein distance.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
