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
        #expect(UsageError.line("unknown option '--passwrod-stdin'. Did you mean '--password-stdin'?", arguments: ["sign-in", "--passwrod-stdin"])
            == "unknown option '--passwrod-stdin'; did you mean '--password-stdin'? (see: cog-cred sign-in --help)")
        #expect(UsageError.line("unknown option '--prnt-uri'", arguments: ["mfa", "enable", "--prnt-uri", "totp"])
            == "unknown option '--prnt-uri'; did you mean '--print-uri'? (see: cog-cred mfa enable --help)")
        #expect(UsageError.line("unknown option '--zzzzzz'", arguments: ["token", "--zzzzzz"]) == "unknown option '--zzzzzz' (see: cog-cred token --help)")
    }

    /// A word at any depth gets the nearest: a nested command's name, an option's value.
    @Test func everyUnknownWordGetsTheNearest() {
        #expect(UsageError.line("unexpected argument 'lst'", arguments: ["passkey", "lst"])
            == "unknown command 'passkey lst'; did you mean 'list'? (see: cog-cred passkey --help)")
        #expect(UsageError.line("unexpected argument 'enbale'", arguments: ["mfa", "enbale", "totp"])
            == "unknown command 'mfa enbale'; did you mean 'enable'? (see: cog-cred mfa --help)")
        #expect(UsageError.line("the value 'sro' is invalid for '--auth-flow <flow>'. Please provide one of the following:", arguments: ["sign-in", "--auth-flow", "sro"])
            == "the value 'sro' is invalid for '--auth-flow <flow>': it takes srp, password, browser, choice, custom or custom-srp; did you mean 'srp'? (see: cog-cred sign-in --help)")
        #expect(UsageError.line("the value 'x' is invalid for '--timeout <seconds>'", arguments: ["sign-in", "--timeout", "x"])
            == "the value 'x' is invalid for '--timeout <seconds>' (see: cog-cred sign-in --help)")
    }

    /// cog-cred's messages start in lower case; the parser's are made to.
    @Test func theParsersMessagesStartInLowerCase() {
        #expect(UsageError.lowercasingFirst("Missing value for '--profile <name>'") == "missing value for '--profile <name>'")
        #expect(UsageError.lowercasingFirst("--x is wrong") == "--x is wrong")
    }

    /// Command lines that mean another are said as it.
    @Test func bareHelpAndVersionAreTheirCommands() {
        #expect(CogCredCommand.rephrased([]) == ["--help"])
        #expect(CogCredCommand.rephrased(["--help", "status"]) == ["status", "--help"])
        #expect(CogCredCommand.rephrased(["-h", "mfa", "enable"]) == ["mfa", "enable", "-h"])
        #expect(CogCredCommand.rephrased(["--help", "nosuch"]) == ["--help", "nosuch"])
        #expect(CogCredCommand.rephrased(["--version", "--json"]) == ["version", "--json"])
        #expect(CogCredCommand.rephrased(["token", "--version"]) == ["token", "--version"])
    }

    @Test func theSetupCommandsAreKnown() {
        #expect(UsageError.commandNames.contains("setup-git") && UsageError.commandNames.contains("setup-kubectl"))
        #expect(UsageError.line("", arguments: ["setup-gti"]) == "unknown command 'setup-gti'; did you mean 'setup-git'? (see: cog-cred --help)")
    }
}
