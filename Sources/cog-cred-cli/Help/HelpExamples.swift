import ArgumentParser

/// A command whose help ends with examples, as gh's does: whole command lines,
/// each starting with `cog-cred `, that run as written (with the names in them
/// replaced). Every command conforms; HelpText appends them under EXAMPLES.
protocol HelpExamples {
    static var examples: [String] { get }
}

/// The help swift-argument-parser renders, in the order a reader wants it.
/// The parser prints OVERVIEW, the discussion, USAGE, OPTIONS, SUBCOMMANDS and
/// has no place for examples, and the root's long discussion (exit status,
/// environment) would push its usage and commands off the screen; this adds
/// the examples at the end and, for the root, moves the discussion after the
/// commands.
enum HelpText {
    /// The command a help request is for: the command words of
    /// `help A B`, or those before `--help` or `-h` (option values, which
    /// name no subcommand, are passed over); nil when the arguments ask
    /// for no help.
    static func command(for arguments: [String], root: ParsableCommand.Type = CogCredCommand.self) -> ParsableCommand.Type? {
        let words = Array(arguments.prefix { $0 != "--" })
        let asked = words.first == "help" || words.contains("--help") || words.contains("-h")
        guard asked else { return nil }
        var command = root
        for word in words where !word.hasPrefix("-") {
            if let sub = subcommand(named: word, of: command) { command = sub }
        }
        return command
    }

    /// The command these words name from the root (`["passkey", "list"]`),
    /// nil unless each names a subcommand of the one before.
    static func command(named words: [String], root: ParsableCommand.Type = CogCredCommand.self) -> ParsableCommand.Type? {
        var command = root
        for word in words {
            guard let nested = subcommand(named: word, of: command) else { return nil }
            command = nested
        }
        return command
    }

    /// The subcommand called `name` (or by one of its aliases).
    static func subcommand(named name: String, of command: ParsableCommand.Type) -> ParsableCommand.Type? {
        command.configuration.subcommands.first { $0._commandName == name || $0.configuration.aliases.contains(name) }
    }

    /// Every command under `root`, root first, with the words that name it.
    static func allCommands(_ root: ParsableCommand.Type = CogCredCommand.self, words: [String] = []) -> [(words: [String], type: ParsableCommand.Type)] {
        [(words, root)] + root.configuration.subcommands.flatMap { allCommands($0, words: words + [$0._commandName]) }
    }

    /// The parser's help text for `command`, reordered and ended by its examples.
    static func render(_ parserText: String, for command: ParsableCommand.Type, isRoot: Bool) -> String {
        var text = keepingFlagsWithTheirWords(parserText.trimmingTrailingNewlines)
        if isRoot, let usage = text.firstRange(of: "\nUSAGE:") {
            // OVERVIEW's paragraph stays first; the rest of what comes
            // before USAGE is the discussion, which goes after the commands.
            let head = String(text[..<usage.lowerBound])
            let rest = String(text[usage.upperBound...])
            if let end = head.firstRange(of: "\n\n") {
                let overview = String(head[..<end.lowerBound])
                let discussion = String(head[end.upperBound...]).trimmingTrailingNewlines
                text = overview + "\n\nUSAGE:" + rest + (discussion.isEmpty ? "" : "\n\n" + discussion)
            }
        }
        guard let examples = (command as? HelpExamples.Type)?.examples, !examples.isEmpty else { return text }
        return text + "\n\n" + section(examples)
    }

    /// The parser wraps at the terminal's width wherever a space falls, so
    /// an option can end a line and the words it goes with begin the next
    /// (`--auth-flow` / `custom`). Such an option is moved to the start of
    /// the next line of its paragraph, and the paragraph's lines after it
    /// are wrapped again within the widest line the parser wrote.
    static func keepingFlagsWithTheirWords(_ text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let width = max(lines.map(\.count).max() ?? 80, 40)
        func indent(_ line: String) -> Int { line.prefix { $0 == " " }.count }
        // A line that goes on with the one before it (whatever its indent:
        // the parser wraps an indented line's overflow to none): prose, not
        // a blank line, a new option or a section's title. `-` alone is a
        // value (standard input), not an option.
        func continues(_ line: String) -> Bool {
            let rest = line.dropFirst(indent(line))
            let isValue = rest.first == "-" && !(rest.dropFirst().first.map { $0 == "-" || $0.isLetter } ?? false)
            guard let first = rest.first else { return false }
            return (first != "-" || isValue) && !rest.hasSuffix(":")
        }
        func endsWithFlag(_ line: String) -> Bool {
            // `--flag`, or `(--flag`, `'--flag`: an option its words follow.
            guard let last = line.split(separator: " ").last?.drop(while: { $0 == "(" || $0 == "'" || $0 == "\"" }),
                last.hasPrefix("--"), last.count > 2
            else { return false }
            return last.dropFirst(2).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
        }
        var index = 0
        while index + 1 < lines.count {
            let (line, next) = (lines[index], lines[index + 1])
            guard endsWithFlag(line), line.split(separator: " ").count > 1, continues(next) else {
                index += 1
                continue
            }
            let flag = line.split(separator: " ").last!
            lines[index] = String(line.dropLast(flag.count)).trimmingTrailingSpaces()
            let pad = String(repeating: " ", count: indent(next))
            lines[index + 1] = pad + flag + " " + next.dropFirst(indent(next))
            // Wrapped again from here while the paragraph goes on.
            var at = index + 1
            while lines[at].count > width, let cut = lines[at].prefix(width + 1).lastIndex(of: " "), cut > lines[at].startIndex {
                let overflow = String(lines[at][lines[at].index(after: cut)...])
                lines[at] = String(lines[at][..<cut]).trimmingTrailingSpaces()
                if at + 1 < lines.count, continues(lines[at + 1]) {
                    lines[at + 1] = String(repeating: " ", count: indent(lines[at + 1])) + overflow + " " + lines[at + 1].dropFirst(indent(lines[at + 1]))
                } else {
                    lines.insert(pad + overflow, at: at + 1)
                }
                at += 1
            }
            index += 1
        }
        return lines.joined(separator: "\n")
    }

    /// The EXAMPLES section: a title as the parser's, the lines indented as its.
    static func section(_ examples: [String]) -> String {
        (["EXAMPLES:"] + examples.map { "  " + $0 }).joined(separator: "\n")
    }
}

extension String {
    fileprivate var trimmingTrailingNewlines: String {
        var text = self
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}
