import ArgumentParser
import CogCredWrite

struct ResendCode: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "resend-code",
        abstract: "Send a new sign-up confirmation code (the old one stops working).")
    static let examples = [
        "cog-cred resend-code --username alice@example.com",
        "cog-cred resend-code --profile work",
    ]

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var user: UsernameOption

    func run() throws {
        let manager = try Wiring(profileOptions).tokenManager()
        let username = try user.resolve(manager.profile)
        let delivery = try AccountService(cognito: manager.cognito()).resendCode(username: username)
        Output.note("A new confirmation code was sent\(delivery?.sentence ?? ""). Next: cog-cred confirm-sign-up\(profileFlag(manager.profileName)) --username \(username) (it asks for the code)")
    }
}
