import Testing
@testable import cog_cred_cli

/// The names a usage error knows: every command's, and the aliases users of
/// other tools type.
@Suite struct UsageErrorTests {
    @Test func aliasesAreCommandsToo() {
        let names = UsageError.commandNames
        for name in ["sign-in", "login", "sign-out", "logout", "whoami", "token"] { #expect(names.contains(name), "\(name)") }
        #expect(UsageError.line("", arguments: ["logni"]) == "unknown command 'logni'; did you mean 'login'? (see: cog-cred --help)")
        #expect(UsageError.line("x", arguments: ["logout", "--bad"]) == "x (see: cog-cred logout --help)")
    }

    @Test func theSetupCommandsAreKnown() {
        #expect(UsageError.commandNames.contains("setup-git") && UsageError.commandNames.contains("setup-kubectl"))
        #expect(UsageError.line("", arguments: ["setup-gti"]) == "unknown command 'setup-gti'; did you mean 'setup-git'? (see: cog-cred --help)")
    }
}
