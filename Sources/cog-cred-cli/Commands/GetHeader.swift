import ArgumentParser
import CogCredWrite

/// `cog-cred get-header`: the access token as an HTTP Authorization header.
struct GetHeader: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "get-header",
        abstract: "Print 'Authorization: Bearer <access token>', refreshing first if needed.",
        discussion: "For curl: curl -H \"$(cog-cred get-header)\" URL")
    static let examples = [
        "cog-cred get-header",
        "cog-cred get-header --profile work --min-ttl 120",
    ]

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var freshness: FreshnessOptions

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let token = try manager.currentToken(.access, policy: freshness.policy)
        Output.data(TokenOutput.header(token))
    }
}
