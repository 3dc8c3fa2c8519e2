import ArgumentParser
import CogCredCore

struct SignIn: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-in",
        abstract: "Sign in and keep the tokens in the Secret Service.",
        discussion: """
            The password is read from standard input with --password-stdin (one line), or \
            asked for on the terminal with echo off. It is never taken from the command line \
            or the environment.
            """)

    @OptionGroup var profileOptions: ProfileOptions

    @Option(help: ArgumentHelp("Username or alias (default: the profile's username).", valueName: "name"))
    var username: String?

    @Flag(help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    func run() throws {
        let wiring = Wiring()
        let manager = try wiring.tokenManager(profileOptions)
        guard let user = username ?? manager.profile.username, !user.isEmpty else {
            throw ValidationError("no username: pass --username or set one with cog-cred configure --username")
        }
        let password =
            passwordStdin
            ? try PasswordInput.fromStandardInput()
            : try PasswordInput.prompt("Password for \(user): ")
        let tokens = try manager.signIn(username: user, password: password)
        let who = tokens.access.claims.subjectName ?? user
        let until = tokens.access.claims.exp.map { "; access token valid until \(rfc3339($0))" } ?? ""
        Output.note("Signed in as \(who) (profile '\(manager.profileName)')\(until).")
    }
}
