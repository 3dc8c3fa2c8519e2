import ArgumentParser
import CogCredCore

struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a valid access token (or ID token), refreshing it first if needed.",
        discussion: "For shells: curl -H \"Authorization: Bearer $(cog-cred token)\" URL")

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var freshness: FreshnessOptions

    @Flag(help: "Print the ID token instead of the access token.")
    var idToken = false

    @Option(help: ArgumentHelp("bare (default), header, json or env (export lines for eval).", valueName: "format"))
    var format: String = "bare"

    func validate() throws {
        if TokenOutput.Format(rawValue: format) == nil { throw ValidationError("--format must be bare, header, json or env") }
    }

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let token = try manager.currentToken(idToken ? .id : .access, policy: freshness.policy)
        let variable = idToken ? "COG_CRED_ID_TOKEN" : "COG_CRED_ACCESS_TOKEN"
        Output.data(TokenOutput.render(token, format: TokenOutput.Format(rawValue: format) ?? .bare, variable: variable))
    }
}

struct GetHeader: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get-header",
        abstract: "Print 'Authorization: Bearer <access token>', refreshing first if needed.",
        discussion: "For curl: curl -H \"$(cog-cred get-header)\" URL")

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var freshness: FreshnessOptions

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let token = try manager.currentToken(.access, policy: freshness.policy)
        Output.data(TokenOutput.header(token))
    }
}
