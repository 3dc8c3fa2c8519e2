import ArgumentParser
import Testing
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
}
