import ArgumentParser
import CogCredWrite

struct ConfirmSignUp: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "confirm-sign-up",
        abstract: "Confirm a new account with the 6-digit code from the email.")
    static let examples = [
        "cog-cred confirm-sign-up --username alice@example.com",
        "cog-cred confirm-sign-up --username alice@example.com --code 123456",
    ]

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var user: UsernameOption

    @OptionGroup var code: CodeOption

    func run() throws {
        let manager = try Wiring(profileOptions).tokenManager()
        let username = try user.resolve(manager.profile)
        let code = try code.resolve()
        try AccountService(cognito: manager.cognito()).confirmSignUp(username: username, code: code)
        Output.note("Account \(username) confirmed. Next: cog-cred sign-in\(profileFlag(manager.profileName)) --username \(username)")
    }
}
