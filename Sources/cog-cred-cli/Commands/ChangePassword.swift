import ArgumentParser
import CogCredWrite

struct ChangePassword: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "change-password",
        abstract: "Change the signed-in user's password.",
        discussion: """
            With --password-stdin, standard input holds two lines: the current password, \
            then the new one. Otherwise both are asked for on the terminal (the new one twice).
            """)
    static let examples = [
        "cog-cred change-password",
        "cog-cred change-password --profile work",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    @Flag(help: "Read the current and the new password from the first two lines of standard input.")
    var passwordStdin = false

    func run() throws {
        let manager = try Wiring(profileOptions).tokenManager()
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
