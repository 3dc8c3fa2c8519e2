import ArgumentParser
import CogCredWrite

struct SignUp: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "sign-up",
        abstract: "Create an account in the user pool; Cognito emails a 6-digit confirmation code.",
        discussion: """
            A username that is an email address is also sent as the email attribute, \
            unless --attribute email=... is given. The password comes from --password-stdin \
            or is asked for twice on the terminal.
            """)
    static let examples = [
        "cog-cred sign-up --username alice@example.com",
        "cog-cred sign-up --username alice@example.com --attribute name=Alice",
    ]

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var user: UsernameOption

    @Flag(help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    @Option(name: .customLong("attribute"), help: ArgumentHelp("A user attribute, such as name=Alice (repeatable).", valueName: "name=value"))
    var attributes: [String] = []

    func run() throws {
        let manager = try Wiring(profileOptions).tokenManager()
        let username = try user.resolve(manager.profile)
        let parsed = try attributes.map { (text: String) throws(AttributeError) in try AccountValidation.attribute(text) }
        // Check what can be checked before asking for a password.
        _ = try AccountValidation.signUpAttributes(username: username, given: parsed)
        let password = try PasswordInput.newPassword(fromStandardInput: passwordStdin, prompt: "Password for \(username): ")
        let result = try AccountService(cognito: manager.cognito()).signUp(username: username, password: password, attributes: parsed)
        if result.confirmed {
            Output.note("Account \(username) created and already confirmed. Next: cog-cred sign-in\(profileFlag(manager.profileName)) --username \(username)")
            return
        }
        let whereTo = result.delivery.map { "A 6-digit confirmation code was sent\($0.sentence)." }
            ?? "Cognito did not say where the confirmation code went."
        Output.note("Account \(username) created. \(whereTo) Next: cog-cred confirm-sign-up\(profileFlag(manager.profileName)) --username \(username) (it asks for the code)")
    }
}
