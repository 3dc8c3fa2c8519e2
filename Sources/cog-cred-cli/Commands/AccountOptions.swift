import ArgumentParser
import CogCredWrite

/// `--username`, defaulting to the profile's username.
struct UsernameOption: ParsableArguments {
    @Option(help: ArgumentHelp("Username or email address (default: the profile's username).", valueName: "name"))
    var username: String?

    func resolve(_ profile: Profile) throws -> String {
        guard let name = username ?? profile.username, !name.isEmpty else {
            throw ValidationError("no username: pass --username or set one with cog-cred configure --username")
        }
        return name
    }
}

/// `--code`: the 6-digit code from an email. On the command line it would be
/// readable by every user (/proc/PID/cmdline, ps) while the command runs, so
/// it is asked for on the terminal when left out, or read from standard
/// input with `--code -`.
struct CodeOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The 6-digit code from the email; - reads it from standard input. Left out, it is asked for on the terminal.",
            valueName: "code"))
    var code: String?

    func resolve() throws -> String {
        if code == "-" { return try AccountValidation.normalizedCode(try PasswordInput.fromStandardInput(what: "code")) }
        if let code { return try AccountValidation.normalizedCode(code) }
        guard PasswordInput.hasTerminal else {
            throw InputError("no terminal to ask for the code on; pipe it in with --code -", category: .usage)
        }
        return try PasswordInput.askCode("Enter the 6-digit code from the email: ")
    }
}
