import ArgumentParser
import CogCredWrite

struct Whoami: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        abstract: "Print the signed-in user's name, alone on one line (for scripts).",
        discussion: """
            Cognito's name for the user (the access token's username; a machine profile's \
            app client), read from the stored tokens: no network. Exits 77 when the profile \
            is not signed in. --json prints {"profile", "name", "grant"}. status says more.
            """)
    static let examples = [
        "cog-cred whoami",
        "cog-cred whoami --profile work",
        "cog-cred whoami --json",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    @OptionGroup var output: OutputOptions

    func run() throws {
        let manager = try Wiring(profileOptions).tokenManager()
        let name = try manager.signedInName()
        if output.json {
            return Output.data(SessionWords.whoamiJSON(profile: manager.profileName, name: name, grant: manager.profile.effectiveGrant.rawValue))
        }
        // A claim is text from the network: one printable line.
        Output.data(name.oneLine(limit: 200))
    }
}
