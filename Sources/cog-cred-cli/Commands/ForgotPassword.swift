import ArgumentParser
import CogCredWrite

struct ForgotPassword: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "forgot-password",
        abstract: "Start a password reset: Cognito sends a 6-digit code.")
    static let examples = [
        "cog-cred forgot-password --username alice@example.com",
        "cog-cred forgot-password --profile work",
    ]

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var user: UsernameOption

    func run() throws {
        let manager = try Wiring(profileOptions).tokenManager()
        let username = try user.resolve(manager.profile)
        let delivery = try AccountService(cognito: manager.cognito()).forgotPassword(username: username)
        Output.note("A password reset code was sent\(delivery?.sentence ?? ""). Next: cog-cred confirm-forgot-password\(profileFlag(manager.profileName)) --username \(username) (it asks for the code)")
    }
}
