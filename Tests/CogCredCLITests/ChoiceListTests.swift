import ArgumentParser
import Testing
import CogCredWrite
@testable import cog_cred_cli

/// The options that take one of a set of words are the parser's own types:
/// their help lists every case, from `allCases`, and the parser refuses
/// anything else, naming them.
@Suite struct ChoiceListTests {
    @Test func helpListsEveryCaseOfEachChoice() {
        let signIn = SignIn.helpMessage(columns: 2000)
        for word in MFAKind.allCases.map(\.rawValue) + SignInMethod.allCases.map(\.rawValue) + AuthFlow.allCases.map(\.rawValue) {
            #expect(signIn.contains(word), "\(word)")
        }
        let enable = MFA.Enable.helpMessage(columns: 2000)
        #expect(MFAKind.allCases.allSatisfy { enable.contains($0.rawValue) })
        let token = Token.helpMessage(columns: 2000)
        #expect(TokenOutput.Format.allCases.allSatisfy { token.contains($0.rawValue) })
        let configure = Configure.helpMessage(columns: 2000)
        #expect(Grant.allCases.allSatisfy { configure.contains($0.rawValue) })
    }

    @Test func theParserRefusesAnythingElseNamingTheChoices() {
        for (command, arguments, choices) in [
            (SignIn.self as ParsableCommand.Type, ["--auth-flow", "nope"], AuthFlow.allCases.map(\.rawValue)),
            (SignIn.self, ["--mfa-type", "nope"], MFAKind.allCases.map(\.rawValue)),
            (Token.self, ["--format", "nope"], TokenOutput.Format.allCases.map(\.rawValue)),
            (Configure.self, ["--grant", "nope"], Grant.allCases.map(\.rawValue)),
        ] {
            do {
                _ = try command.parseAsRoot(arguments)
                Issue.record("\(arguments) was taken")
            } catch {
                let message = command.message(for: error)
                #expect(choices.allSatisfy { message.contains($0) }, "\(message)")
            }
        }
        // configure takes '' to clear a setting, and only that besides the words.
        #expect(Clearable<AuthFlow>(argument: "") == .clear && Clearable<AuthFlow>(argument: "srp") == .set(.srp))
        #expect(Clearable<AuthFlow>(argument: "nope") == nil)
    }
}
