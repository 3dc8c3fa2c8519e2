import ArgumentParser
import CogCredWrite

#if canImport(Glibc)
import Glibc
#endif

struct Configure: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        abstract: "Create or update a profile: which user pool and app client to use.",
        discussion: """
            Settings are kept in $XDG_CONFIG_HOME/cog-cred/config.json (mode 0600); no secret \
            is ever written there. Options not given keep their current value; an empty \
            value ("") clears an optional setting. With no setting on a terminal, it asks for \
            the essentials (user pool id, app client id, region, username), showing the \
            current value that Enter keeps, as aws configure does; a change that changes \
            nothing writes nothing and says so. --show (or --json) prints the profile's \
            settings as JSON; --json after a change prints them as saved. --delete removes the profile and deletes its items (tokens, app client secret) \
            from the Secret Service. On a terminal, --delete and a change that signs a \
            signed-in profile out (another pool, app client, endpoint, domain or grant) say what \
            will be lost and ask first (default no; --yes answers yes). cog-cred profiles lists \
            every profile.
            """)
    static let examples = [
        "cog-cred configure --user-pool-id us-east-1_Abc123 --client-id 1example23456789",
        "cog-cred configure --profile work --auth-flow browser --domain my-app",
        "cog-cred configure --auth-flow choice --method passkey --passkey-rp-id auth.example.com",
        "cog-cred configure --profile old --delete",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    @OptionGroup(title: "Connection") var connection: ConfigureConnection
    @OptionGroup(title: "Sign-in") var signIn: ConfigureSignIn
    @OptionGroup(title: "Browser sign-in") var browser: ConfigureBrowser
    @OptionGroup(title: "AWS credentials") var aws: ConfigureAWS
    @OptionGroup(title: "Timeouts") var timeouts: ConfigureTimeouts
    @OptionGroup(title: "Helpers") var helpers: ConfigureHelpers

    @Flag(help: "Print the profile's settings as JSON (as config.json keeps them; no secret) and change nothing.")
    var show = false

    /// Alone, as --show; with settings, the profile as saved.
    @OptionGroup var output: OutputOptions

    @Flag(help: "Remove the profile from the config and delete its tokens and app client secret from the Secret Service.")
    var delete = false

    /// For --delete, and for a change that signs a signed-in profile out.
    @OptionGroup var confirmation: ConfirmOptions

    /// The settings given on this command line, as the library takes them.
    var settings: ProfileSettings {
        var settings = ProfileSettings()
        settings.userPoolID = connection.userPoolId
        settings.clientID = connection.clientId
        settings.region = connection.region
        settings.endpointURL = connection.endpointUrl
        settings.allowInsecureHTTP = connection.allowInsecureHttp
        settings.useFIPSEndpoint = connection.fips
        settings.caBundle = connection.caBundle
        settings.newClientSecret = connection.clientSecretStdin
        settings.removeClientSecret = connection.removeClientSecret
        settings.username = signIn.username
        settings.grant = signIn.grant?.text
        settings.authFlow = signIn.authFlow?.text
        settings.method = signIn.method?.text
        settings.passkeyRPID = signIn.passkeyRpId
        settings.domain = browser.domain
        settings.scopes = browser.scopes
        settings.redirectURI = browser.redirectUri
        settings.identityProvider = browser.identityProvider
        settings.logoutURI = browser.logoutUri
        settings.identityPoolID = aws.identityPoolId
        settings.roleARN = aws.roleArn
        settings.basicFlow = aws.basicFlow
        settings.connectTimeout = timeouts.connectTimeout
        settings.requestTimeout = timeouts.requestTimeout
        settings.commandTimeout = timeouts.commandTimeout
        settings.gitURLs = helpers.gitURLs
        settings.dockerRegistries = helpers.dockerRegistries
        return settings
    }

    /// Any setting given on this command line.
    var changesSettings: Bool { settings.changesAnything }

    func validate() throws {
        if show && delete { throw ValidationError("--show and --delete cannot be used together") }
        if output.json && delete { throw ValidationError("--json prints a profile; --delete leaves none") }
        if (show || delete) && changesSettings {
            throw ValidationError("--\(show ? "show" : "delete") takes no settings: run configure without it to change them")
        }
        if connection.clientSecretStdin && connection.removeClientSecret {
            throw ValidationError("--client-secret-stdin and --remove-client-secret cannot be used together")
        }
    }

    mutating func run() throws {
        let wiring = Wiring(profileOptions)
        let name = try wiring.profileName()
        let profiles = wiring.profiles
        let file = try profiles.load()
        let existing = file.profiles[name]
        // `configure --json` alone is `configure --show`: it changes nothing.
        let show = show || (output.json && !changesSettings)
        if show || delete {
            guard let existing else { throw file.notFound(name, path: profiles.config.path) }
            if show { return Output.json(existing.json) }
            try confirmation.confirm(
                "Delete profile '\(name)' from \(profiles.config.path), with its tokens and app client secret in \(wiring.storeName)?")
            let removed = try profiles.delete(name)
            let items = removed == 1 ? "1 item" : "\(removed) items"
            return Output.note("Deleted profile '\(name)' from \(profiles.config.path) and its \(items) from \(wiring.storeName).")
        }

        if !changesSettings && isatty(0) == 1 && PasswordInput.onTerminal({ _ in }) {
            try askEssentials(existing)
        }
        let result: ProfileConfiguration
        do {
            result = try profiles.configure(
                name, settings, replacing: existing,
                confirmEndingSession: { stored in
                    let user = stored.username.map { " as \($0)" } ?? ""
                    try confirmation.confirm(
                        "Profile '\(name)' is signed in\(user): another user pool, app client, endpoint, domain or grant signs it out and deletes its tokens. Go on?"
                    )
                },
                clientSecret: { try PasswordInput.fromStandardInput(what: "client secret") })
        } catch ProfileSettingsProblem.endpoint(let problem) where problem.isNoFIPS {
            // Not a mistyped value: the region has no FIPS endpoint, as when
            // AWS_USE_FIPS_ENDPOINT asks for one at a command (78 both ways).
            throw problem
        } catch let problem as ProfileSettingsProblem {
            // A value typed on this command line: a usage error, not a broken file.
            throw ValidationError(Self.wording(problem))
        }
        guard result.saved else {
            Output.note("Profile '\(name)' unchanged: nothing to change in \(profiles.config.path).")
            if output.json { Output.json(result.profile.json) }
            return
        }
        Output.note("Saved profile '\(name)' in \(profiles.config.path).")
        if output.json { Output.json(result.profile.json) }
        if result.storedClientSecret { Output.note("The app client secret is in \(wiring.storeName), not in the file.") }
        for note in result.notes { Output.note(Self.wording(note, profile: name)) }
    }

    /// A refused setting, in the words of the option that gave it.
    static func wording(_ problem: ProfileSettingsProblem) -> String {
        switch problem {
        case .invalidDomain(let problem): return "invalid --domain: \(problem)"
        case .unreadableCABundle(let path): return "--ca-bundle: cannot read \(path)"
        case .invalidValue(let error): return error.message
        case .endpoint(let problem): return ErrorWording.line(problem)
        case .clientCredentialsWithoutSecret:
            return "--grant client-credentials needs the app client's secret: add --client-secret-stdin"
        case .browserWithoutDomain: return "--auth-flow browser needs the pool's domain: add --domain PREFIX_OR_URL"
        }
    }

    /// A note on a saved change, naming the options that act on it.
    static func wording(_ note: ProfileSettingsNote, profile name: String) -> String {
        switch note {
        case .methodUnused(let flow):
            return "cog-cred: note: --method applies to --auth-flow choice; this profile signs in with \(flow.rawValue)"
        case .passkeyWithoutRelyingParty:
            return "cog-cred: note: a passkey sign-in needs the pool's relying party: add --passkey-rp-id ID (or --domain)"
        case .clientSecretDropped(let old, let new):
            return "The app client secret of client \(old) was removed from the profile: it is not \(new)'s. If \(new) has a secret, store it with cog-cred configure\(profileFlag(name)) --client-secret-stdin."
        case .sessionEnded(let tokensDeleted):
            let deleted = tokensDeleted ? " (its tokens were deleted)" : ""
            return "The profile now names a different user pool, app client or endpoint\(deleted): sign in again."
        }
    }
}

extension Configure {
    /// `configure` with no setting on a terminal: the essentials asked one
    /// by one, each with its current value in brackets that Enter keeps, as
    /// `aws configure` asks.
    mutating func askEssentials(_ existing: Profile?) throws {
        func ask(_ label: String, _ current: String?) throws -> String? {
            let answer = try PasswordInput.ask("\(label)\(current.map { " [\($0.oneLine(limit: 80))]" } ?? ""): ")
            return answer.isEmpty ? nil : answer
        }
        connection.userPoolId = try ask("User pool id", existing?.userPoolID)
        connection.clientId = try ask("App client id", existing?.clientID)
        let poolRegion = (connection.userPoolId ?? existing?.userPoolID).flatMap(ProfileValidation.regionPrefix(ofPoolID:))
        connection.region = try ask("Region", existing?.region ?? poolRegion)
        signIn.username = try ask("Username (optional)", existing?.username)
    }
}

// Configure's settings in titled groups, so that its help, the longest, reads by topic.

/// The user pool, its app client and how to reach Cognito.
struct ConfigureConnection: ParsableArguments {
    @Option(help: ArgumentHelp("The user pool id, such as us-east-1_Abc123.", valueName: "id")) var userPoolId: String?
    @Option(help: ArgumentHelp("The app client id.", valueName: "id")) var clientId: String?
    @Option(help: ArgumentHelp("AWS region (default: the user pool id's prefix).", valueName: "region")) var region: String?
    @Option(help: ArgumentHelp("Cognito endpoint, for a local emulator or a proxy.", valueName: "url")) var endpointUrl: String?

    @Flag(
        inversion: .prefixedNo,
        help: "Allow a plain http:// endpoint on another machine (refresh tokens and passwords then cross the network unencrypted); http to this machine needs no permission.")
    var allowInsecureHttp: Bool?

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "AWS's FIPS endpoints for Cognito, the identity pool and STS, whatever AWS_USE_FIPS_ENDPOINT says. They are in \(AWSEndpoints.fipsRegionsInWords), which needs no setting; refused in a region without them."))
    var fips: Bool?

    @Option(
        help: ArgumentHelp("A PEM file of CA certificates for HTTPS to the endpoint (AWS_CA_BUNDLE overrides it).", valueName: "file"),
        completion: .file())
    var caBundle: String?

    @Flag(help: "Read the app client's secret from the first line of standard input and keep it in the Secret Service (bound to the pool and client: a new --client-id drops the old one).")
    var clientSecretStdin = false

    @Flag(help: "Delete the stored app client secret (for an app client without one).")
    var removeClientSecret = false
}

/// Who signs in, and how.
struct ConfigureSignIn: ParsableArguments {
    @Option(help: ArgumentHelp("Default username for sign-in.", valueName: "name"))
    var username: String?

    @Option(help: ArgumentHelp("Who gets the tokens ('' for the default):", valueName: "grant"))
    var grant: Clearable<Grant>?

    @Option(help: ArgumentHelp("How sign-in works ('' for the default):", valueName: "flow"))
    var authFlow: Clearable<AuthFlow>?

    @Option(help: ArgumentHelp("With --auth-flow choice, the method asked for first ('' clears it: Cognito lists the choices).", valueName: "method"))
    var method: Clearable<SignInMethod>?

    @Option(
        help: ArgumentHelp(
            "The pool's WebAuthn relying party id, which passkeys are made and used for (default: the host of --domain; '' clears it); a challenge for any other is refused.",
            valueName: "id"))
    var passkeyRpId: String?
}

/// The pool's managed login (--auth-flow browser, sign-in --browser).
struct ConfigureBrowser: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The pool's OAuth 2.0 domain: a Cognito domain prefix (my-app: https://my-app.auth.REGION.amazoncognito.com) or a custom domain's https:// URL.",
            valueName: "domain"))
    var domain: String?

    @Option(help: ArgumentHelp("OAuth scopes to ask for, space-separated (default for browser sign-in: \"openid email profile\").", valueName: "scopes"))
    var scopes: String?

    @Option(help: ArgumentHelp("Where the managed login sends the browser back: http://localhost:PORT/PATH, registered in the app client (default http://localhost:8400/callback).", valueName: "url"))
    var redirectUri: String?

    @Option(help: ArgumentHelp("Go straight to this identity provider of the pool (Google, a SAML or OIDC provider's name).", valueName: "name"))
    var identityProvider: String?

    @Option(help: ArgumentHelp("A sign-out URL of the app client: sign-out --global then ends the managed-login session too.", valueName: "url"))
    var logoutUri: String?
}

/// The identity pool that turns the user's tokens into AWS credentials.
struct ConfigureAWS: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A Cognito identity pool (REGION:UUID) that gives the signed-in user temporary AWS credentials (aws-credentials, exec --aws).",
            valueName: "id"))
    var identityPoolId: String?

    @Flag(
        inversion: .prefixedNo,
        help: "The identity pool's basic flow (GetOpenIdToken, then STS AssumeRoleWithWebIdentity with --role-arn), for pools without the enhanced flow.")
    var basicFlow: Bool?

    @Option(help: ArgumentHelp("The IAM role to ask the identity pool for (CustomRoleArn; with --basic-flow, the role to assume).", valueName: "arn"))
    var roleArn: String?
}

/// How long a command waits for Cognito.
struct ConfigureTimeouts: ParsableArguments {
    @Option(help: ArgumentHelp("Seconds to connect (default 5).", valueName: "seconds")) var connectTimeout: Double?
    @Option(help: ArgumentHelp("Seconds for one request (default 15).", valueName: "seconds")) var requestTimeout: Double?
    @Option(help: ArgumentHelp("Seconds for everything one command does (default 30).", valueName: "seconds")) var commandTimeout: Double?
}

/// Which git hosts and docker registries the profile answers.
struct ConfigureHelpers: ParsableArguments {
    @Option(name: .customLong("git-url"), help: ArgumentHelp("A URL whose git credentials this profile answers, such as https://git.example.com/ (repeatable; replaces the list; \"\" clears it).", valueName: "url"))
    var gitURLs: [String] = []

    @Option(name: .customLong("docker-registry"), help: ArgumentHelp("A registry host whose docker credentials this profile answers (repeatable; replaces the list; \"\" clears it).", valueName: "host"))
    var dockerRegistries: [String] = []
}
