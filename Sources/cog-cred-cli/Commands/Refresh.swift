import ArgumentParser
import CogCredWrite

struct Refresh: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        abstract: "Refresh the tokens now, whatever their expiry. Prints nothing on stdout.")
    static let examples = [
        "cog-cred refresh",
        "cog-cred refresh --profile work",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    func run() throws {
        let manager = try Wiring(profileOptions).tokenManager()
        let tokens = try manager.refresh()
        Output.note(SessionWords.refreshed(profile: manager.profileName, accessExpiresAt: tokens.access.claims.exp))
    }
}
