import ArgumentParser
import CogCredWrite

/// `cog-cred token`: a valid token on stdout, in one of four formats.
struct Token: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        abstract: "Print a valid access token (or ID token), refreshing it first if needed.",
        discussion: """
            For shells: curl -H "Authorization: Bearer $(cog-cred token)" URL

            The token is refreshed first when it has less life left than the margin \
            (--min-ttl); an expired token is never printed. When a refresh is due only by the margin and \
            fails for a passing reason (no connection, a timeout, a 5xx, throttling, an \
            unreadable answer; not a certificate that cannot be verified), the stored token \
            is printed while it has not expired, with one warning on stderr saying when it \
            expires. Never with --min-ttl (the caller asked for that much life), never when \
            Cognito refused the refresh (77, nothing on stdout); cog-cred refresh itself \
            exits 75.
            """)
    static let examples = [
        "cog-cred token",
        "cog-cred token --profile work --format header",
        "cog-cred token --id-token --min-ttl 300",
        "cog-cred token --json",
    ]

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var freshness: FreshnessOptions

    @Flag(help: "Print the ID token instead of the access token.")
    var idToken = false

    @Option(help: ArgumentHelp("How to print it:", valueName: "format"))
    var format: TokenOutput.Format?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if output.json, let format, format != .json {
            throw ValidationError("--json is --format json: it cannot be used with --format \(format.rawValue)")
        }
    }

    func run() throws {
        let manager = try Wiring(profileOptions).tokenManager()
        let format = output.json ? .json : format ?? .bare
        let choice: TokenChoice = idToken ? .id : .access
        var tokens: [SecretKind: IssuedToken] = [:]
        if TokenOutput.kinds(format, choice: choice).count > 1 {
            let both = try manager.currentTokens(policy: freshness.policy, authorizing: choice)
            (tokens[.access], tokens[.id]) = (both.access, both.id)
        } else {
            tokens[choice.kind] = try manager.currentToken(choice, policy: freshness.policy)
        }
        Output.data(TokenOutput.render(format, choice: choice, tokens: tokens))
    }
}
