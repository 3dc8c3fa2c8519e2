import ArgumentParser
import CogCredWrite

struct Whoami: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        abstract: "Print the signed-in user's name, alone on one line (for scripts).",
        discussion: """
            Cognito's name for the user (the access token's username; a machine profile's \
            app client), read from the stored tokens: no network. Exits 77 when the profile \
            is not signed in. status says more.

            EXAMPLES:
              cog-cred whoami
              cog-cred whoami --profile work
              test "$(cog-cred whoami)" = alice || cog-cred sign-in
            """)
    static let examples = [
        "cog-cred whoami",
        "cog-cred whoami --profile work",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        // A claim is text from the network: one printable line.
        Output.data(try manager.signedInName().oneLine(limit: 200))
    }
}
