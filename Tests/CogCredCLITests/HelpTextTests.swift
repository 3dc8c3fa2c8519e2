import ArgumentParser
import Testing
import CogCredWrite
@testable import cog_cred_cli

/// Every command's help ends with examples that run as written, and the
/// renderer finds the command a help request is for.
@Suite struct HelpTextTests {
    @Test func everyCommandHasExamplesThatParse() throws {
        for (words, command) in HelpText.allCommands() {
            let name = (["cog-cred"] + words).joined(separator: " ")
            let examples = (command as? HelpExamples.Type)?.examples ?? []
            #expect((2...4).contains(examples.count), "\(name): \(examples.count) examples")
            for example in examples {
                #expect(example.hasPrefix("cog-cred "), "\(name): \(example)")
                // Spelled as the commands define their options: the parser takes it.
                let arguments = example.split(separator: " ").dropFirst().map(String.init)
                #expect(throws: Never.self, "\(example)") { _ = try CogCredCommand.parseAsRoot(arguments) }
            }
        }
    }

    @Test func theCommandAHelpRequestIsFor() {
        let cases: [([String], ParsableCommand.Type?)] = [
            (["--help"], CogCredCommand.self),
            (["help"], CogCredCommand.self),
            (["help", "token"], Token.self),
            (["token", "--help"], Token.self),
            (["--profile", "work", "token", "-h"], Token.self),
            (["help", "login"], SignIn.self),
            (["help", "mfa", "enable"], MFA.Enable.self),
            (["mfa", "enable", "totp", "--help"], MFA.Enable.self),
            (["devices", "list", "--help"], Devices.List.self),
            (["token"], nil),
            (["exec", "--", "ls", "--help"], nil),
        ]
        for (arguments, expected) in cases {
            #expect(HelpText.command(for: arguments) == expected, "\(arguments)")
        }
    }

    @Test func examplesComeLastAndTheRootsDiscussionAfterItsCommands() {
        let parser = "OVERVIEW: One line.\n\nA discussion.\n\nEXIT STATUS\n  0 success\n\nUSAGE: cog-cred <subcommand>\n\nOPTIONS:\n  -h, --help\n"
        let root = HelpText.render(parser, for: CogCredCommand.self, isRoot: true)
        #expect(root.hasPrefix("OVERVIEW: One line.\n\nUSAGE: cog-cred <subcommand>\n\nOPTIONS:\n  -h, --help\n\nA discussion.\n\nEXIT STATUS\n  0 success\n\nEXAMPLES:\n  cog-cred "))
        let token = HelpText.render(parser, for: Token.self, isRoot: false)
        #expect(token == parser.dropLast() + "\n\n" + HelpText.section(Token.examples))
        #expect(token.hasSuffix("EXAMPLES:\n" + Token.examples.map { "  " + $0 }.joined(separator: "\n")))
    }

    /// Every command the parser's own dump lists (what --experimental-dump-help prints).
    static func dumpedCommands() -> [(words: [String], json: JSONValue)] {
        func walk(_ command: JSONValue, _ words: [String]) -> [(words: [String], json: JSONValue)] {
            var all: [(words: [String], json: JSONValue)] = [(words, command)]
            for sub in command["subcommands"]?.arrayValue ?? [] {
                all += walk(sub, words + [sub["commandName"]?.stringValue ?? "?"])
            }
            return all
        }
        guard let root = JSONValue.parse(Array(CogCredCommand._dumpHelp().utf8))?["command"] else { return [] }
        return walk(root, [])
    }

    @Test func theDumpListsEveryCommand() {
        let dumped = Set(Self.dumpedCommands().map { $0.words })
        #expect(dumped.count > 30)
        for (words, _) in HelpText.allCommands() { #expect(dumped.contains(words), "\(words)") }
    }

    /// The parser says an option's default after its help: the help never says it too.
    @Test func eachDefaultIsShownOnce() {
        for (words, command) in Self.dumpedCommands() {
            for argument in command["arguments"]?.arrayValue ?? [] where argument["defaultValue"] != nil {
                let abstract = argument["abstract"]?.stringValue ?? ""
                #expect(!abstract.lowercased().contains("default"), "\(words) \(argument["preferredName"]?["name"]?.stringValue ?? ""): \(abstract)")
            }
        }
    }

    /// However wide the terminal, an option never ends a line whose next
    /// line goes on with its words (`--auth-flow` / `custom`).
    @Test func noOptionIsSplitFromItsWords() {
        for (words, command) in HelpText.allCommands() {
            for columns in [60, 80, 100, 120, 160] {
                let text = HelpText.render(command.helpMessage(columns: columns), for: command, isRoot: words.isEmpty)
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                for (line, next) in zip(lines, lines.dropFirst()) where !line.hasPrefix("  cog-cred ") {
                    guard let last = line.split(separator: " ").last?.drop(while: { "('\"".contains($0) }),
                        last.hasPrefix("--"), last.dropFirst(2).allSatisfy({ $0.isLetter || $0 == "-" }), last.count > 2
                    else { continue }
                    let rest = next.drop { $0 == " " }
                    let goesOn = rest.first.map { $0.isLowercase || $0.isNumber || "'\"(<$".contains($0) } ?? false
                    #expect(!goesOn, "\(words) at \(columns): '\(line)' / '\(next)'")
                }
            }
        }
    }

    /// The root's EXIT STATUS lists the statuses in numeric order.
    @Test func exitStatusesAreInNumericOrder() {
        let lines = CogCredCommand.configuration.discussion.split(separator: "\n")
        guard let start = lines.firstIndex(of: "EXIT STATUS") else {
            Issue.record("no EXIT STATUS")
            return
        }
        var codes: [Int] = []
        for line in lines[(start + 1)...] {
            guard line.hasPrefix("  ") else { break }
            // "  64  usage error": a status; deeper lines go on with one.
            if !line.hasPrefix("   "), let code = Int(line.dropFirst(2).prefix { $0.isNumber }) { codes.append(code) }
        }
        #expect(codes.count >= 12)
        #expect(codes == codes.sorted(), "\(codes)")
    }
}
