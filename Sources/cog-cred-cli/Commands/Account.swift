import ArgumentParser
import CogCredCore

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

/// " --profile work" for the next-step hints, nothing for the default profile.
private func flag(_ manager: TokenManager) -> String {
    manager.profileName == "default" ? "" : " --profile \(manager.profileName)"
}

struct SignUp: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-up",
        abstract: "Create an account in the user pool; Cognito emails a 6-digit confirmation code.",
        discussion: """
            A username that is an email address is also sent as the email attribute, \
            unless --attribute email=... is given. The password comes from --password-stdin \
            or is asked for twice on the terminal.
            """)

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var user: UsernameOption

    @Flag(help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    @Option(name: .customLong("attribute"), help: ArgumentHelp("A user attribute, such as name=Alice (repeatable).", valueName: "name=value"))
    var attributes: [String] = []

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let username = try user.resolve(manager.profile)
        let parsed = try attributes.map { (text: String) throws(InputError) in try AccountValidation.attribute(text) }
        // Check what can be checked before asking for a password.
        _ = try AccountValidation.signUpAttributes(username: username, given: parsed)
        let password = try PasswordInput.newPassword(fromStandardInput: passwordStdin, prompt: "Password for \(username): ")
        let result = try AccountService(cognito: manager.cognito()).signUp(username: username, password: password, attributes: parsed)
        if result.confirmed {
            Output.note("Account \(username) created and already confirmed. Next: cog-cred sign-in\(flag(manager)) --username \(username)")
            return
        }
        let whereTo = result.delivery.map { "A 6-digit confirmation code was sent\($0.sentence)." }
            ?? "Cognito did not say where the confirmation code went."
        Output.note("Account \(username) created. \(whereTo) Next: cog-cred confirm-sign-up\(flag(manager)) --username \(username) (it asks for the code)")
    }
}

struct ConfirmSignUp: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "confirm-sign-up",
        abstract: "Confirm a new account with the 6-digit code from the email.")

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var user: UsernameOption

    @OptionGroup var code: CodeOption

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let username = try user.resolve(manager.profile)
        let code = try code.resolve()
        try AccountService(cognito: manager.cognito()).confirmSignUp(username: username, code: code)
        Output.note("Account \(username) confirmed. Next: cog-cred sign-in\(flag(manager)) --username \(username)")
    }
}

struct ResendCode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resend-code",
        abstract: "Send a new sign-up confirmation code (the old one stops working).")

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var user: UsernameOption

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let username = try user.resolve(manager.profile)
        let delivery = try AccountService(cognito: manager.cognito()).resendCode(username: username)
        Output.note("A new confirmation code was sent\(delivery?.sentence ?? ""). Next: cog-cred confirm-sign-up\(flag(manager)) --username \(username) (it asks for the code)")
    }
}

struct ForgotPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forgot-password",
        abstract: "Start a password reset: Cognito sends a 6-digit code.")

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var user: UsernameOption

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let username = try user.resolve(manager.profile)
        let delivery = try AccountService(cognito: manager.cognito()).forgotPassword(username: username)
        Output.note("A password reset code was sent\(delivery?.sentence ?? ""). Next: cog-cred confirm-forgot-password\(flag(manager)) --username \(username) (it asks for the code)")
    }
}

struct ConfirmForgotPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "confirm-forgot-password",
        abstract: "Set a new password with the code from forgot-password.",
        discussion: "The new password comes from --password-stdin or is asked for twice on the terminal.")

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var user: UsernameOption

    @OptionGroup var code: CodeOption

    @Flag(help: "Read the new password from a line of standard input (after the code's, with --code -).")
    var passwordStdin = false

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let username = try user.resolve(manager.profile)
        // A malformed code fails before the password is asked for.
        let code = try code.resolve()
        let password = try PasswordInput.newPassword(fromStandardInput: passwordStdin)
        try AccountService(cognito: manager.cognito()).confirmForgotPassword(username: username, code: code, newPassword: password)
        Output.note("The password for \(username) was reset. Next: cog-cred sign-in\(flag(manager)) --username \(username)")
    }
}

struct ChangePassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-password",
        abstract: "Change the signed-in user's password.",
        discussion: """
            With --password-stdin, standard input holds two lines: the current password, \
            then the new one. Otherwise both are asked for on the terminal (the new one twice).
            """)

    @OptionGroup var profileOptions: ProfileOptions

    @Flag(help: "Read the current and the new password from the first two lines of standard input.")
    var passwordStdin = false

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let old = passwordStdin
            ? try PasswordInput.fromStandardInput(what: "current password")
            : try PasswordInput.prompt("Current password: ")
        let new = try PasswordInput.newPassword(fromStandardInput: passwordStdin)
        try AccountValidation.checkNewPassword(new, old: old)
        let token = try manager.currentToken(.access)
        try AccountService(cognito: manager.cognito()).changePassword(
            accessToken: token.value, old: old, new: new, profile: manager.profileName)
        Output.note("Password changed for \(token.claims.subjectName ?? "the signed-in user").")
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
        return try AccountValidation.normalizedCode(try PasswordInput.ask("Enter the 6-digit code from the email: "))
    }
}
