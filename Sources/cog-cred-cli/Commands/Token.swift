import ArgumentParser
import CogCredWrite

/// `cog-cred token`: a valid token on stdout, in one of four formats.
struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a valid access token (or ID token), refreshing it first if needed.",
        discussion: "For shells: curl -H \"Authorization: Bearer $(cog-cred token)\" URL")

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var freshness: FreshnessOptions

    @Flag(help: "Print the ID token instead of the access token.")
    var idToken = false

    @Option(help: ArgumentHelp(
        "bare (default), header, json, or env: export lines for eval that set what exec sets (COG_CRED_ACCESS_TOKEN, COG_CRED_ID_TOKEN, COG_CRED_AUTHORIZATION) and COG_CRED_TOKEN_EXPIRES_AT.",
        valueName: "format"),
        completion: Completions.formats)
    var format: String = "bare"

    func validate() throws {
        if TokenOutput.Format(rawValue: format) == nil { throw ValidationError("--format must be \(TokenOutput.Format.names.spoken()), not '\(format)'") }
    }

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let format = TokenOutput.Format(rawValue: format) ?? .bare
        let choice: TokenChoice = idToken ? .id : .access
        var tokens: [SecretKind: IssuedToken] = [:]
        if TokenOutput.kinds(format, choice: choice).count > 1 {
            let both = try manager.currentTokens(policy: freshness.policy)
            (tokens[.access], tokens[.id]) = (both.access, both.id)
        } else {
            tokens[choice.kind] = try manager.currentToken(choice, policy: freshness.policy)
        }
        Output.data(TokenOutput.render(format, choice: choice, tokens: tokens))
    }
}
