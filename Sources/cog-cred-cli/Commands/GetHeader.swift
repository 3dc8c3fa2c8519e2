import ArgumentParser
import CogCredWrite

/// `cog-cred get-header`: the access token as an HTTP Authorization header.
struct GetHeader: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "get-header",
        abstract: "Print 'Authorization: Bearer <access token>' (or ID token), refreshing first if needed.",
        discussion: "For curl: curl -H \"$(cog-cred get-header)\" URL")
    static let examples = [
        "cog-cred get-header",
        "cog-cred get-header --profile work --min-ttl 120",
        "cog-cred get-header --id-token",
    ]

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var freshness: FreshnessOptions

    @Flag(help: "Put the ID token in the header instead of the access token.")
    var idToken = false

    func run() throws {
        let manager = try Wiring(profileOptions).tokenManager()
        let token = try manager.currentToken(idToken ? .id : .access, policy: freshness.policy)
        Output.data(TokenOutput.header(token))
    }
}
