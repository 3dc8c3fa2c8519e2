import ArgumentParser
import CogCredCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// git's credential helper: `cog-cred git-credential [--profile P] get|store|erase|capability`,
/// also run as `git-credential-cog-cred` (the name git looks for).
struct GitCredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "git credential helper for the hosts you name.",
        discussion: """
            get prints a fresh access token for the URL git asks about: as a Bearer credential \
            when git announces capability[]=authtype (git 2.46+), else as the password. store \
            does nothing; erase of the token we issued makes the next get refresh it. Malformed \
            input exits 65.

            The profile is --profile when given, else the profile whose --git-url pattern \
            matches the URL. With neither, nothing is printed and git asks its next helper: \
            COG_CRED_PROFILE and the "default" profile are never used here, so a helper set \
            for every host never hands a Cognito token to one it was not told about (github.com, \
            say). Set it up in one of two ways:

              1. a helper for one host, with its profile:
                 git config --global \\
                   credential.https://git.example.com.helper "cog-cred --profile work"
              2. URL patterns on the profiles, and one helper for every host:
                 cog-cred configure --profile work --git-url https://git.example.com/
                 git config --global credential.helper cog-cred
            """)

    @Option(
        name: [.long, .customShort("p")],
        help: ArgumentHelp("Profile to answer with (default: the profile whose --git-url matches; never $COG_CRED_PROFILE).", valueName: "name"),
        completion: Completions.profileNames)
    var profile: String?

    func validate() throws {
        if let profile, let problem = ProfileValidation.profileNameProblem(profile) {
            throw ValidationError("invalid --profile: \(problem)")
        }
    }

    @Argument(help: "get, store, erase or capability (others are ignored).", completion: Completions.gitActions)
    var action: String

    func run() throws {
        switch action {
        case "capability":
            Output.raw(GitCredential.capabilityAnswer)
        case "get", "erase":
            let request = try GitCredential.parse(StandardInput.readRequest())
            let wiring = Wiring()
            guard let profile = try choose(request, wiring) else { return }
            let manager = try wiring.tokenManager(named: profile)
            if action == "get" {
                Output.raw(GitCredential.answer(request, token: try manager.currentToken(.access)))
            } else if let stored = try wiring.tokenStore.read(.access, profile: manager.profileName),
                GitCredential.erases(request, token: stored)
            {
                // The server rejected our token: drop it, keep the refresh
                // token, and the next get refreshes.
                try wiring.tokenStore.delete(.access, profile: manager.profileName)
            }
        case "store":
            // Tokens live in the Secret Service already; nothing to keep.
            _ = try GitCredential.parse(StandardInput.readRequest())
        default:
            // Newer git may ask for actions we do not know: ignore them.
            break
        }
    }

    /// --profile when given, else the profile whose git URL patterns match.
    func choose(_ request: GitCredential.Request, _ wiring: Wiring) throws -> String? {
        if let profile { return profile }
        return GitCredential.profile(for: request, named: nil, in: try wiring.configStore.load())
    }
}

/// The docker credential helper: `docker-credential-cog-cred get|store|erase|list|version`.
struct DockerCredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docker-credential",
        abstract: "docker credential helper (\"credHelpers\": {\"registry.example.com\": \"cog-cred\"}).",
        discussion: """
            Registries are mapped to profiles with configure --docker-registry HOST. get prints \
            {"ServerURL", "Username", "Secret"} with a fresh access token as the secret; a \
            registry that is not mapped gets the protocol's "credentials not found" answer. \
            store accepts credentials only for mapped registries and keeps nothing; erase makes \
            the next get refresh; list names the mapped registries.
            """)

    @Argument(help: "get, store, erase, list or version.", completion: Completions.dockerActions)
    var action: String

    func run() throws {
        let wiring = Wiring()
        switch action {
        case "get", "erase":
            let serverURL = DockerCredential.serverURL(try StandardInput.readAll(limit: 65536))
            guard let name = try wiring.configStore.load().profile(forRegistry: DockerCredential.registryHost(serverURL)) else {
                throw DockerFailure(DockerCredential.notFound)
            }
            let manager = try wiring.tokenManager(named: name)
            if action == "erase" {
                try wiring.tokenStore.delete(.access, profile: name)
                return
            }
            Output.data(DockerCredential.answer(serverURL: serverURL, token: try manager.currentToken(.access)))
        case "store":
            let input = try StandardInput.readAll(limit: 1 << 20)
            guard let credential = DockerCredential.Credential(input) else {
                throw DockerFailure("cog-cred: store expects {\"ServerURL\", \"Username\", \"Secret\"} on standard input")
            }
            guard try wiring.configStore.load().profile(forRegistry: DockerCredential.registryHost(credential.serverURL)) != nil else {
                throw DockerFailure("cog-cred keeps only Cognito tokens: map the registry with cog-cred configure --docker-registry HOST")
            }
        case "list":
            Output.data(DockerCredential.list(try wiring.configStore.load()))
        case "version":
            Output.data("cog-cred \(cogCredVersion)")
        default:
            throw DockerFailure("cog-cred: unknown action '\(action)': expected get, store, erase, list or version")
        }
    }
}

/// docker reads a helper's error from stdout and expects exit status 1.
struct DockerFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// `cog-cred kubectl-credential`: an ExecCredential for kubectl's exec plugin.
struct KubectlCredential: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kubectl-credential",
        abstract: "Print an ExecCredential for kubectl's exec plugin.",
        discussion: """
            Answers in the apiVersion kubectl asks for in KUBERNETES_EXEC_INFO: \
            client.authentication.k8s.io/v1beta1 (kubectl 1.11 to 1.25; the only one kubectl \
            1.20 knows) or client.authentication.k8s.io/v1 (kubectl 1.22 and later); v1 when \
            the variable is unset. With "interactive": false in it, nothing prompts. \
            docs/integrations/kubectl.md has both kubeconfig forms.
            """)

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var freshness: FreshnessOptions

    @Flag(help: "Use the ID token (clusters that authenticate with OIDC ID tokens).")
    var idToken = false

    func run() throws {
        let info = try KubernetesExecInfo.parse(getenv(KubernetesExecInfo.variable).map { String(cString: $0) }).get()
        if !info.interactive { Wiring.forbidUnlockPrompt() }
        let token = try Wiring().tokenManager(profileOptions).currentToken(idToken ? .id : .access, policy: freshness.policy)
        Output.data(TokenOutput.execCredential(token, apiVersion: info.apiVersion))
    }
}

/// `cog-cred exec -- CMD ARGS...`: CMD runs with the tokens in its environment.
struct AWSCredentialsCommand: ParsableCommand {
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

    @OptionGroup var profileOptions: ProfileOptions

    @Option(
        name: .customLong("min-ttl"),
        help: ArgumentHelp("Fetch new credentials unless these have at least this many seconds left, 0 to 43200 (default 300).", valueName: "seconds"))
    var minTTL: Int64 = AWSCredentials.defaultMinTTL

    func validate() throws {
        if !(0...43_200).contains(minTTL) { throw ValidationError("--min-ttl takes 0 to 43200 seconds") }
    }

    func run() throws {
        let credentials = try Wiring().tokenManager(profileOptions).awsCredentials(margin: minTTL)
        Output.data(credentials.credentialProcess)
    }
}

struct Exec: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a command with fresh tokens in its environment.",
        discussion: """
            Sets COG_CRED_ACCESS_TOKEN, COG_CRED_ID_TOKEN and COG_CRED_AUTHORIZATION \
            ("Bearer <access token>"), then replaces cog-cred with the command, so its exit \
            status and signals are the command's own. Tokens never go on a command line. \
            As in a shell, a command that is not found exits 127, one that cannot be run \
            (not executable) 126. --aws also sets AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, \
            AWS_SESSION_TOKEN and AWS_CREDENTIAL_EXPIRATION (ISO 8601, read by the AWS SDKs) \
            from the profile's identity pool (see aws-credentials), with at least --min-ttl \
            seconds left (default 300).
            """)

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var freshness: FreshnessOptions

    @Flag(help: "Also set AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and AWS_CREDENTIAL_EXPIRATION from the identity pool.")
    var aws = false

    @Argument(parsing: .postTerminator, help: "The command and its arguments, after --.")
    var command: [String] = []

    func validate() throws {
        if command.isEmpty { throw ValidationError("give the command to run after --, as in: cog-cred exec -- curl URL") }
    }

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let tokens = try manager.currentTokens(policy: freshness.policy)
        var variables = TokenOutput.execVariables(access: tokens.access, id: tokens.id)
        if aws {
            // --min-ttl asks the same of them as of the tokens (their own default: 300 s).
            let credentials = try manager.awsCredentials(margin: freshness.minTTL ?? AWSCredentials.defaultMinTTL)
            for (name, value) in credentials.environment { variables[name] = value }
        }
        SecretServiceStore.disconnect()
        let failure = ProcessReplacement.exec(command, setting: variables)
        Output.error("cannot run \(command[0]): \(failure.reason)")
        throw ExitCode(failure.exitStatus)
    }
}
