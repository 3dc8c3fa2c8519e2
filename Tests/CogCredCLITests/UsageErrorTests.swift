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

    /// An unknown option is guessed by the rule command names are, from the named (nested) command's own options.
    @Test func aMistypedOptionSuggestsTheNearest() {
        #expect(UsageError.line("Unknown option '--passwrod-stdin'. Did you mean '--password-stdin'?", arguments: ["sign-in", "--passwrod-stdin"])
            == "Unknown option '--passwrod-stdin'; did you mean '--password-stdin'? (see: cog-cred sign-in --help)")
        #expect(UsageError.line("Unknown option '--prnt-uri'", arguments: ["mfa", "enable", "--prnt-uri", "totp"])
            == "Unknown option '--prnt-uri'; did you mean '--print-uri'? (see: cog-cred mfa enable --help)")
        #expect(UsageError.line("Unknown option '--zzzzzz'", arguments: ["token", "--zzzzzz"]) == "Unknown option '--zzzzzz' (see: cog-cred token --help)")
    }

    @Test func theSetupCommandsAreKnown() {
        #expect(UsageError.commandNames.contains("setup-git") && UsageError.commandNames.contains("setup-kubectl"))
        #expect(UsageError.line("", arguments: ["setup-gti"]) == "unknown command 'setup-gti'; did you mean 'setup-git'? (see: cog-cred --help)")
    }
}
