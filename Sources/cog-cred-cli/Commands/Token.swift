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

    @Option(help: ArgumentHelp(
        Token.formatsHelp,
        valueName: "format"),
        completion: Completions.formats)
    var format: String?

    @Flag(help: "Print JSON: the same as --format json.")
    var json = false

    /// Every format, in --format's help: "a (default), b, c, or d: ...".
    static var formatsHelp: String {
        let each = TokenOutput.Format.allCases.map(words)
        return each.dropLast().joined(separator: ", ") + ", or " + each[each.count - 1] + "."
    }

    /// A format in --format's help: its name, and what it is when the name does not say.
    static func words(_ format: TokenOutput.Format) -> String {
        switch format {
        case .bare: return "bare (default)"
        case .header, .json: return format.rawValue
        case .env:
            return "env: export lines for eval that set what exec sets (COG_CRED_ACCESS_TOKEN, COG_CRED_ID_TOKEN, COG_CRED_AUTHORIZATION) and COG_CRED_TOKEN_EXPIRES_AT"
        }
    }

    func validate() throws {
        if let format, TokenOutput.Format(rawValue: format) == nil {
            throw ValidationError("--format must be \(TokenOutput.Format.names.spoken()), not '\(format)'")
        }
        if json, let format, format != TokenOutput.Format.json.rawValue {
            throw ValidationError("--json is --format json: it cannot be used with --format \(format)")
        }
    }

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let format = json ? .json : format.flatMap(TokenOutput.Format.init(rawValue:)) ?? .bare
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
