import ArgumentParser
import CogCredWrite

struct ConfirmForgotPassword: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "confirm-forgot-password",
        abstract: "Set a new password with the code from forgot-password.",
        discussion: "The new password comes from --password-stdin or is asked for twice on the terminal.")
    static let examples = [
        "cog-cred confirm-forgot-password --username alice@example.com",
        "cog-cred confirm-forgot-password --code 123456",
    ]

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var user: UsernameOption

    @OptionGroup var code: CodeOption

    @Flag(help: "Read the new password from a line of standard input (after the code's, with --code -).")
    var passwordStdin = false

    func run() throws {
        let manager = try Wiring(profileOptions).tokenManager()
        let username = try user.resolve(manager.profile)
        // A malformed code fails before the password is asked for.
        let code = try code.resolve()
        let password = try PasswordInput.newPassword(fromStandardInput: passwordStdin)
        try AccountService(cognito: manager.cognito()).confirmForgotPassword(username: username, code: code, newPassword: password)
        Output.note("The password for \(username) was reset. Next: cog-cred sign-in\(profileFlag(manager.profileName)) --username \(username)")
    }
}
