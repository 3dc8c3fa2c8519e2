import ArgumentParser
import CogCredWrite

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
            if let closest = NearMiss.closest(to: first, in: names) { line += "; did you mean '\(closest)'?" }
            return line + " (see: cog-cred --help)"
        }
        let help = "(see: cog-cred \(commandWords(arguments).joined(separator: " ")) --help)"
        // There is no --password: a password in argv is readable by every
        // user through /proc/PID/cmdline and ps. Say what to use instead,
        // never repeating the value.
        if arguments.contains(where: { $0 == "--password" || $0.hasPrefix("--password=") }) {
            return "there is no --password option: a password on the command line is visible to other users (ps, /proc); pipe it to --password-stdin, or leave it out to be asked \(help)"
        }
        // The parser's own guess (". Did you mean ...?") gives way to the
        // rule command and profile names are guessed by, worded the same.
        let unknown = "Unknown option '"
        if parserMessage.hasPrefix(unknown), let typed = parserMessage.dropFirst(unknown.count).split(separator: "'").first {
            let guess = NearMiss.closest(to: String(typed), in: optionNames(arguments)).map { "; did you mean '\($0)'?" } ?? ""
            return "\(unknown)\(typed)'\(guess) \(help)"
        }
        return "\(parserMessage) \(help)"
    }

    /// The words naming the command, a nested one's too (`mfa enable`), as typed.
    static func commandWords(_ arguments: [String]) -> [String] {
        var command: ParsableCommand.Type = CogCredCommand.self
        var words: [String] = []
        for word in arguments.prefix(while: { !$0.hasPrefix("-") }) {
            guard let nested = HelpText.subcommand(named: word, of: command) else { break }
            (command, words) = (nested, words + [word])
        }
        return words
    }

    /// The long options (`--password-stdin`) of the command `arguments`
    /// name, a nested one's (`mfa enable`) where named: read from the
    /// parser's own description of the command, so no list is kept twice.
    static func optionNames(_ arguments: [String]) -> [String] {
        guard let name = arguments.first,
            let type = CogCredCommand.configuration.subcommands.first(where: { $0._commandName == name || $0.configuration.aliases.contains(name) }),
            var command = JSONValue.parse(Array(type._dumpHelp().utf8))?["command"]
        else { return [] }
        for word in arguments.dropFirst() {
            guard let nested = command["subcommands"]?.arrayValue?.first(where: { $0["commandName"]?.stringValue == word }) else { break }
            command = nested
        }
        return (command["arguments"]?.arrayValue ?? []).flatMap { argument in
            (argument["names"]?.arrayValue ?? []).compactMap { $0["kind"]?.stringValue == "long" ? $0["name"]?.stringValue.map { "--" + $0 } : nil }
        }
    }
}
