import ArgumentParser
import CogCredWrite

/// `cog-cred exec -- CMD ARGS...`: CMD runs with the tokens in its environment.
struct Exec: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        abstract: "Run a command with fresh tokens in its environment.",
        discussion: """
            Sets COG_CRED_ACCESS_TOKEN, COG_CRED_ID_TOKEN and COG_CRED_AUTHORIZATION \
            ("Bearer <access token>", or with --id-token "Bearer <ID token>"), then replaces cog-cred with the command, so its exit \
            status and signals are the command's own. Tokens never go on a command line. \
            As in a shell, a command that is not found exits 127, one that cannot be run \
            (not executable) 126. --aws also sets AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, \
            AWS_SESSION_TOKEN and AWS_CREDENTIAL_EXPIRATION (ISO 8601, read by the AWS SDKs) \
            from the profile's identity pool (see aws-credentials), with at least --min-ttl \
            seconds left (default 300).
            """)
    static let examples = [
        "cog-cred exec -- env",
        "cog-cred exec --profile work -- ./deploy.sh",
        "cog-cred exec --aws -- aws s3 ls",
    ]

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var freshness: FreshnessOptions

    @Flag(help: "Put the ID token in COG_CRED_AUTHORIZATION instead of the access token.")
    var idToken = false

    @Flag(help: "Also set AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and AWS_CREDENTIAL_EXPIRATION from the identity pool.")
    var aws = false

    @Argument(parsing: .postTerminator, help: "The command and its arguments, after --.")
    var command: [String] = []

    func validate() throws {
        if command.isEmpty { throw ValidationError("give the command to run after --, as in: cog-cred exec -- curl URL") }
    }

    func run() throws {
        let manager = try Wiring(profileOptions).tokenManager()
        let choice: TokenChoice = idToken ? .id : .access
        let tokens = try manager.currentTokens(policy: freshness.policy, authorizing: choice)
        var variables = TokenOutput.execVariables(access: tokens.access, id: tokens.id, authorizing: choice)
        if aws {
            // --min-ttl asks the same of them as of the tokens (their own default: 300 s).
            let credentials = try manager.awsCredentials(margin: freshness.minTTL ?? AWSCredentials.defaultMinTTL)
            for (name, value) in credentials.environment { variables[name] = value }
        }
        Wiring.handOverProcess()
        let failure = ProcessReplacement.exec(command, setting: variables)
        Output.error("cannot run \(command[0]): \(failure.reason)")
        throw ExitCode(failure.exitStatus)
    }
}
