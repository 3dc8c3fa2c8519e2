import ArgumentParser
import CogCredWrite

/// `cog-cred aws-credentials`: the identity pool's AWS credentials for the
/// signed-in user, as credential_process prints them.
struct AWSCredentialsCommand: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "aws-credentials",
        abstract: "Print temporary AWS credentials from the profile's identity pool, for credential_process.",
        discussion: """
            Prints exactly the JSON object the AWS CLI and every AWS SDK read from a \
            credential_process (Version 1, AccessKeyId, SecretAccessKey, SessionToken, \
            Expiration), for the profile's signed-in user: the enhanced flow (GetId, \
            GetCredentialsForIdentity, with --role-arn as CustomRoleArn), or with configure \
            --basic-flow GetOpenIdToken and STS AssumeRoleWithWebIdentity. The credentials \
            are kept in the Secret Service and used again while they have more than 5 minutes \
            (--min-ttl) left, and only for the user who fetched them: a sign-in deletes them \
            (it may be another user's), and credentials of another user than the stored ID \
            token's are fetched again. In ~/.aws/config: credential_process = cog-cred \
            aws-credentials --profile NAME.
            """)
    static let examples = [
        "cog-cred aws-credentials --profile work",
        "cog-cred aws-credentials --min-ttl 900",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    @OptionGroup var freshness: MinTTLOptions<AWSCredentialsLife>

    func run() throws {
        let credentials = try Wiring(profileOptions).tokenManager().awsCredentials(margin: freshness.minTTL ?? AWSCredentials.defaultMinTTL)
        Output.data(credentials.credentialProcess)
    }
}
