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
        // A word after a group (`passkey lst`) that names none of its commands.
        let path = commandWords(arguments)
        if !path.isEmpty, let group = HelpText.command(named: path), !group.configuration.subcommands.isEmpty,
            let typed = arguments.dropFirst(path.count).first, !typed.hasPrefix("-")
        {
            let nested = group.configuration.subcommands.flatMap { [$0._commandName] + $0.configuration.aliases }
            let guess = NearMiss.closest(to: typed, in: nested).map { "; did you mean '\($0)'?" } ?? ""
            return "unknown command '\((path + [typed]).joined(separator: " "))'\(guess) (see: cog-cred \(path.joined(separator: " ")) --help)"
        }
        guard let first = arguments.first, !first.hasPrefix("-") else {
            return "\(guessed(parserMessage, arguments: [])) (see: cog-cred --help)"
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
        return "\(guessed(parserMessage, arguments: arguments)) \(help)"
    }

    /// The parser's "unknown option" with the nearest option of the command
    /// `arguments` name, and its "the value 'x' is invalid for '--opt'"
    /// with the nearest of the option's words: the parser's own guess
    /// (". Did you mean ...?") gives way to the rule command and profile
    /// names are guessed by, worded the same.
    static func guessed(_ parserMessage: String, arguments: [String]) -> String {
        let unknown = "unknown option '"
        if parserMessage.hasPrefix(unknown), let typed = parserMessage.dropFirst(unknown.count).split(separator: "'").first {
            let guess = NearMiss.closest(to: String(typed), in: optionNames(arguments)).map { "; did you mean '\($0)'?" } ?? ""
            return "\(unknown)\(typed)'\(guess)"
        }
        let invalid = "the value '"
        if parserMessage.hasPrefix(invalid) {
            let quoted = parserMessage.split(separator: "'", omittingEmptySubsequences: false)
            // the value 'X' is invalid for '--opt <name>'. Please provide one of ...
            // Said on one line: the words it takes, and the nearest.
            if quoted.count > 3, let option = quoted[3].split(separator: " ").first, let words = optionValues(arguments)[String(option)] {
                let guess = NearMiss.closest(to: String(quoted[1]), in: words).map { "; did you mean '\($0)'?" } ?? ""
                return "the value '\(quoted[1])' is invalid for '\(quoted[3])': it takes \(words.spoken())\(guess)"
            }
        }
        return parserMessage
    }

    /// `text` with its first letter in lower case: the parser's messages
    /// start with a capital, cog-cred's never.
    static func lowercasingFirst(_ text: String) -> String {
        guard let first = text.first, first.isUppercase else { return text }
        return first.lowercased() + text.dropFirst()
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
    /// name, a nested one's (`mfa enable`) where named, and a group's
    /// default subcommand's (`devices` is `devices list`): read from the
    /// parser's own description of the commands, so no list is kept twice.
    static func optionNames(_ arguments: [String]) -> [String] {
        dumpedArguments(arguments).flatMap(longNames)
    }

    /// The words each option of the command `arguments` name takes, by
    /// its long name (a positional argument's by `<its name>`), as the
    /// parser's messages name them.
    static func optionValues(_ arguments: [String]) -> [String: [String]] {
        dumpedArguments(arguments).reduce(into: [:]) { values, argument in
            let words = (argument["allValues"]?.arrayValue ?? []).compactMap(\.stringValue)
            guard !words.isEmpty else { return }
            for name in longNames(argument) { values[name] = words }
            if argument["kind"]?.stringValue == "positional", let name = argument["valueName"]?.stringValue { values["<\(name)>"] = words }
        }
    }

    /// The arguments of the command `arguments` name, as the parser describes them.
    static func dumpedArguments(_ arguments: [String]) -> [JSONValue] {
        var command: ParsableCommand.Type = CogCredCommand.self
        for word in arguments.prefix(while: { !$0.hasPrefix("-") }) {
            guard let nested = HelpText.subcommand(named: word, of: command) else { break }
            command = nested
        }
        let commands = [command] + (command.configuration.defaultSubcommand.map { [$0] } ?? [])
        return commands.flatMap { type in JSONValue.parse(Array(type._dumpHelp().utf8))?["command"]?["arguments"]?.arrayValue ?? [] }
    }

    static func longNames(_ argument: JSONValue) -> [String] {
        (argument["names"]?.arrayValue ?? []).compactMap { $0["kind"]?.stringValue == "long" ? $0["name"]?.stringValue.map { "--" + $0 } : nil }
    }
}
