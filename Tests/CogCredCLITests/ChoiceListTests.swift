import ArgumentParser
import Testing
import CogCredWrite
@testable import cog_cred_cli

/// Help texts and refusals name the choices from the enums' cases.
@Suite struct ChoiceListTests {
    @Test func helpAndRefusalsListEveryCase() {
        let signIn = SignIn.helpMessage(columns: 2000)
        for list in [MFAKind.optionNames.spoken(), SignInMethod.names.spoken(), AuthFlow.names.spoken()] {
            #expect(signIn.contains(list))
        }
        #expect(MFA.Enable.helpMessage(columns: 2000).contains(MFAKind.optionNames.spoken()))
        do {
            _ = try SignIn.parse(["--auth-flow", "nope"])
            Issue.record("--auth-flow nope was taken")
        } catch {
            #expect(SignIn.message(for: error).contains(AuthFlow.names.spoken()))
        }
    }
}
