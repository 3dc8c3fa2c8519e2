/// One named set of settings: which user pool and app client to talk to, and
/// how. Holds no secrets; it lives in the config file.
public struct Profile: Sendable, Equatable {
    public var userPoolID: String
    public var clientID: String
    /// Set when the user gave one; otherwise the pool id's prefix is used.
    public var region: String?
    public var endpointURL: String?
    /// Plain `http://` to an endpoint on another machine is allowed (see
    /// `Endpoint.resolve`); loopback needs no permission.
    public var allowInsecureHTTP: Bool?
    /// AWS's FIPS endpoints for every AWS service the profile calls
    /// (`configure --fips`), whatever AWS_USE_FIPS_ENDPOINT says: see
    /// FIPSRequest. GovCloud needs no setting.
    public var useFIPSEndpoint: Bool?
    /// The default for commands that take `--username`.
    public var username: String?
    /// Seconds to establish a connection (default 5).
    public var connectTimeout: Double?
    /// Seconds for one whole request (default 15).
    public var requestTimeout: Double?
    /// Seconds for everything one command does (default 30).
    public var commandTimeout: Double?
    /// The app client has a secret, kept in the Secret Service (never here)
    /// as the profile's `client-secret` item.
    public var clientSecretInKeyring: Bool?
    /// An `AuthFlow`: "srp" (default), "password", "browser" or "choice".
    public var authFlow: String?
    /// With the choice flow, the `SignInMethod` asked for first (else
    /// Cognito offers the pool's choices).
    public var method: String?
    /// The WebAuthn relying party id passkeys are made and used for (the
    /// pool's: its domain unless set otherwise). A challenge naming any
    /// other is refused before the security key is asked anything.
    public var passkeyRPID: String?
    /// A PEM file of CA certificates for HTTPS to the endpoint (a proxy or
    /// emulator with a private CA); AWS_CA_BUNDLE overrides it.
    public var caBundle: String?
    /// URL patterns (`https://git.example.com/`) whose git credentials this profile answers.
    public var gitURLs: [String]?
    /// Registry hosts (`registry.example.com[:port]`) whose docker credentials this profile answers.
    public var dockerRegistries: [String]?
    /// The pool's OAuth 2.0 domain (managed login and the token endpoint),
    /// as a full URL: `https://PREFIX.auth.REGION.amazoncognito.com` or a
    /// custom domain.
    public var domain: String?
    /// OAuth scopes to ask for, such as `openid email profile` or `orders/read`.
    public var scopes: [String]?
    /// Where the managed login sends the browser back: a loopback address
    /// (RFC 8252) registered as a callback URL of the app client, port
    /// included. Default `http://localhost:8400/callback`.
    public var redirectURI: String?
    /// Sends `identity_provider=` so the managed login goes straight to
    /// that provider (Google, a SAML or OIDC provider's name in the pool).
    public var identityProvider: String?
    /// A sign-out URL of the app client: `sign-out --global` ends the
    /// managed-login session through `<domain>/logout` and lands there.
    public var logoutURI: String?
    /// A Cognito identity pool (`REGION:UUID`) that turns the profile's ID
    /// token into temporary AWS credentials (`aws-credentials`).
    public var identityPoolID: String?
    /// The IAM role to ask the identity pool for (CustomRoleArn; with the
    /// basic flow, the role to assume).
    public var roleARN: String?
    /// The identity pool's basic (classic) flow: GetOpenIdToken, then STS
    /// AssumeRoleWithWebIdentity with `roleARN`, for pools that disable the
    /// enhanced flow.
    public var basicFlow: Bool?
    /// "client-credentials": the profile is a machine (an app client with a
    /// secret) that gets access tokens with the client-credentials grant;
    /// nil: a user signs in.
    public var grant: String?

    /// The names in config.json, part of the file's format.
    enum Key {
        static let userPoolID = "user-pool-id"
        static let clientID = "client-id"
        static let region = "region"
        static let endpointURL = "endpoint-url"
        static let allowInsecureHTTP = "allow-insecure-http"
        static let useFIPSEndpoint = "use-fips-endpoint"
        static let username = "username"
        static let connectTimeout = "connect-timeout"
        static let requestTimeout = "request-timeout"
        static let commandTimeout = "command-timeout"
        static let clientSecretInKeyring = "client-secret-in-keyring"
        static let authFlow = "auth-flow"
        static let method = "method"
        static let passkeyRPID = "passkey-rp-id"
        static let caBundle = "ca-bundle"
        static let gitURLs = "git-urls"
        static let dockerRegistries = "docker-registries"
        static let domain = "domain"
        static let scopes = "scopes"
        static let grant = "grant"
        static let redirectURI = "redirect-uri"
        static let identityProvider = "identity-provider"
        static let logoutURI = "logout-uri"
        static let identityPoolID = "identity-pool-id"
        static let roleARN = "role-arn"
        static let basicFlow = "basic-flow"
    }

    /// Reads a profile from its object in config.json. Unknown members are
    /// ignored, so a newer cog-cred's file still reads.
    init(json: JSONFields) throws(JSONShapeError) {
        userPoolID = try json.string(Key.userPoolID)
        clientID = try json.string(Key.clientID)
        region = try json.optionalString(Key.region)
        endpointURL = try json.optionalString(Key.endpointURL)
        allowInsecureHTTP = try json.optionalBool(Key.allowInsecureHTTP)
        useFIPSEndpoint = try json.optionalBool(Key.useFIPSEndpoint)
        username = try json.optionalString(Key.username)
        connectTimeout = try json.optionalDouble(Key.connectTimeout)
        requestTimeout = try json.optionalDouble(Key.requestTimeout)
        commandTimeout = try json.optionalDouble(Key.commandTimeout)
        clientSecretInKeyring = try json.optionalBool(Key.clientSecretInKeyring)
        authFlow = try json.optionalString(Key.authFlow)
        method = try json.optionalString(Key.method)
        passkeyRPID = try json.optionalString(Key.passkeyRPID)
        caBundle = try json.optionalString(Key.caBundle)
        gitURLs = try json.optionalStrings(Key.gitURLs)
        dockerRegistries = try json.optionalStrings(Key.dockerRegistries)
        domain = try json.optionalString(Key.domain)
        scopes = try json.optionalStrings(Key.scopes)
        grant = try json.optionalString(Key.grant)
        redirectURI = try json.optionalString(Key.redirectURI)
        identityProvider = try json.optionalString(Key.identityProvider)
        logoutURI = try json.optionalString(Key.logoutURI)
        identityPoolID = try json.optionalString(Key.identityPoolID)
        roleARN = try json.optionalString(Key.roleARN)
        basicFlow = try json.optionalBool(Key.basicFlow)
    }

    /// The profile's object in config.json; unset settings are left out.
    public var json: JSONValue {
        var members: [String: JSONValue] = [Key.userPoolID: .string(userPoolID), Key.clientID: .string(clientID)]
        members[Key.region] = region.map { .string($0) }
        members[Key.endpointURL] = endpointURL.map { .string($0) }
        members[Key.allowInsecureHTTP] = allowInsecureHTTP.map { .bool($0) }
        members[Key.useFIPSEndpoint] = useFIPSEndpoint.map { .bool($0) }
        members[Key.username] = username.map { .string($0) }
        members[Key.connectTimeout] = connectTimeout.map { .double($0) }
        members[Key.requestTimeout] = requestTimeout.map { .double($0) }
        members[Key.commandTimeout] = commandTimeout.map { .double($0) }
        members[Key.clientSecretInKeyring] = clientSecretInKeyring.map { .bool($0) }
        members[Key.authFlow] = authFlow.map { .string($0) }
        members[Key.method] = method.map { .string($0) }
        members[Key.passkeyRPID] = passkeyRPID.map { .string($0) }
        members[Key.caBundle] = caBundle.map { .string($0) }
        members[Key.gitURLs] = gitURLs.map { .array($0.map { .string($0) }) }
        members[Key.dockerRegistries] = dockerRegistries.map { .array($0.map { .string($0) }) }
        members[Key.domain] = domain.map { .string($0) }
        members[Key.scopes] = scopes.map { .array($0.map { .string($0) }) }
        members[Key.grant] = grant.map { .string($0) }
        members[Key.redirectURI] = redirectURI.map { .string($0) }
        members[Key.identityProvider] = identityProvider.map { .string($0) }
        members[Key.logoutURI] = logoutURI.map { .string($0) }
        members[Key.identityPoolID] = identityPoolID.map { .string($0) }
        members[Key.roleARN] = roleARN.map { .string($0) }
        members[Key.basicFlow] = basicFlow.map { .bool($0) }
        return .object(members)
    }

    public init(
        userPoolID: String, clientID: String, region: String? = nil, endpointURL: String? = nil,
        username: String? = nil
    ) {
        self.userPoolID = userPoolID
        self.clientID = clientID
        self.region = region
        self.endpointURL = endpointURL
        self.username = username
    }

    public static let defaultConnectTimeout = 5.0
    public static let defaultRequestTimeout = 15.0
    public static let defaultCommandTimeout = 30.0

    /// The region the pool lives in: the explicit one, else the pool id's prefix
    /// (`us-east-1_Abc123` is in `us-east-1`).
    public var effectiveRegion: String {
        if let region, !region.isEmpty { return region }
        return ProfileValidation.regionPrefix(ofPoolID: userPoolID) ?? "us-east-1"
    }

    public var effectiveAuthFlow: AuthFlow {
        authFlow.flatMap(AuthFlow.init(rawValue:)) ?? .srp
    }

    public static let defaultRedirectURI = "http://localhost:8400/callback"
    public static let defaultBrowserScopes = ["openid", "email", "profile"]

    public var effectiveRedirectURI: String { redirectURI ?? Profile.defaultRedirectURI }

    /// The relying party passkeys are pinned to: `passkeyRPID`, else the
    /// host of the managed-login domain (Cognito's default RP id is the
    /// pool's domain); nil when the profile names neither.
    public var passkeyRelyingParty: String? {
        if let passkeyRPID { return passkeyRPID }
        return domain.flatMap(ProfileValidation.host(of:))
    }

    /// How the profile gets its tokens.
    public var effectiveGrant: Grant {
        grant.flatMap(Grant.init(rawValue:)) ?? .userSignIn
    }

    /// The tokens the profile hands out together (`exec`, the env and JSON
    /// formats): a machine (client credentials) has no ID token.
    public var handedOutKinds: [SecretKind] {
        effectiveGrant == .clientCredentials ? [.access] : [.access, .id]
    }

    /// The pool and client the profile's items are bound to.
    public var binding: ItemBinding { ItemBinding(userPoolID: userPoolID, clientID: clientID) }

    public var timeouts: Timeouts {
        Timeouts(
            connect: connectTimeout ?? Profile.defaultConnectTimeout,
            request: requestTimeout ?? Profile.defaultRequestTimeout,
            command: commandTimeout ?? Profile.defaultCommandTimeout)
    }

    /// How long a caller waits for another process's refresh of this
    /// profile before it refreshes itself: the command's time limit, and at
    /// least 30 s. The front and cog-cred-cli both wait this long.
    public var refreshWait: Double { max(30, timeouts.command) }
    /// A profile's with the default timeouts: for one no longer configured.
    public static var defaultRefreshWait: Double { max(30, defaultCommandTimeout) }

    /// Checks every field, so a hand-edited file fails at load with a clear message.
    public func validate() throws(ConfigError) {
        if let problem = ProfileValidation.poolIDProblem(userPoolID) { throw .invalidValue("user-pool-id", problem) }
        if let problem = ProfileValidation.clientIDProblem(clientID) { throw .invalidValue("client-id", problem) }
        if let region, let problem = ProfileValidation.regionProblem(region) { throw .invalidValue("region", problem) }
        if let endpointURL, let problem = ProfileValidation.endpointProblem(endpointURL) {
            throw .invalidValue("endpoint-url", problem)
        }
        for url in gitURLs ?? [] where URLPattern(url) == nil {
            // Not echoed: a URL that cannot be read may hold a password.
            throw .invalidValue("git-url", "one of them is not a URL such as https://git.example.com/")
        }
        for host in dockerRegistries ?? [] where host.isEmpty || host.contains("/") || host.contains(where: { $0.isWhitespace }) {
            throw .invalidValue("docker-registry", "'\(host.oneLine(limit: 80))' is not a registry host such as registry.example.com")
        }
        if let caBundle, !caBundle.hasPrefix("/") {
            throw .invalidValue("ca-bundle", "must be an absolute path to a PEM file")
        }
        if let authFlow, AuthFlow(rawValue: authFlow) == nil {
            throw .invalidValue("auth-flow", "must be " + AuthFlow.names.spoken())
        }
        if let method, SignInMethod(rawValue: method) == nil {
            throw .invalidValue("method", "must be " + SignInMethod.names.spoken())
        }
        if let passkeyRPID, let problem = ProfileValidation.relyingPartyProblem(passkeyRPID) {
            throw .invalidValue("passkey-rp-id", problem)
        }
        if let redirectURI, let problem = ProfileValidation.redirectURIProblem(redirectURI) {
            throw .invalidValue("redirect-uri", problem)
        }
        if let logoutURI, let problem = ProfileValidation.endpointProblem(logoutURI) { throw .invalidValue("logout-uri", problem) }
        if let identityPoolID, let problem = ProfileValidation.identityPoolIDProblem(identityPoolID) {
            throw .invalidValue("identity-pool-id", problem)
        }
        if let roleARN, !(roleARN.hasPrefix("arn:aws") && roleARN.containsBytes(":iam::") && roleARN.containsBytes(":role/")) {
            throw .invalidValue("role-arn", "expected an IAM role ARN such as arn:aws:iam::123456789012:role/name")
        }
        if basicFlow == true && roleARN == nil {
            throw .invalidValue("basic-flow", "the basic flow assumes a role: give it with --role-arn")
        }
        if let identityProvider, identityProvider.isEmpty || identityProvider.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw .invalidValue("identity-provider", "must be the provider's name in the user pool")
        }
        if let domain, let problem = ProfileValidation.endpointProblem(domain) { throw .invalidValue("domain", problem) }
        for scope in scopes ?? [] where ProfileValidation.scopeProblem(scope) != nil {
            throw .invalidValue("scopes", ProfileValidation.scopeProblem(scope)!)
        }
        if let grant, Grant(rawValue: grant) == nil {
            // The default last, as --grant's help says them.
            throw .invalidValue("grant", "must be " + Grant.allCases.reversed().map { "\($0.rawValue) (\($0.who))" }.spoken())
        }
        if effectiveGrant == .clientCredentials && domain == nil {
            throw .invalidValue("grant", "client-credentials needs the pool's domain (--domain)")
        }
        for (name, value) in [
            ("connect-timeout", connectTimeout), ("request-timeout", requestTimeout), ("command-timeout", commandTimeout),
        ] {
            if let value, !(value > 0 && value <= 3600) {
                throw .invalidValue(name, "must be a number of seconds between 0 and 3600")
            }
        }
    }
}

/// How sign-in proves the password: SRP (the default: the password never
/// leaves the machine) or USER_PASSWORD_AUTH (sent over TLS).
public enum AuthFlow: String, Sendable, CaseIterable {
    case srp
    case password
    /// The managed login in a browser (authorization code with PKCE): for
    /// pools behind Google, Entra, Okta or SAML, whose users have no password.
    case browser
    /// Choice-based sign-in (USER_AUTH): a one-time code by email or SMS,
    /// or the password, as the pool offers (`SignInMethod`).
    case choice
    /// CUSTOM_AUTH: the pool's own challenges (Lambda triggers), no password.
    case custom
    /// CUSTOM_AUTH after proving the password with SRP (Amplify's flow).
    case customSRP = "custom-srp"

    /// Every flow by its name on the command line, in order.
    public static var names: [String] { allCases.map { $0.rawValue } }
}

/// A first factor of choice-based sign-in, by its name on the command line
/// (`--method`).
public enum SignInMethod: String, Sendable, CaseIterable {
    case emailOTP = "email-otp"
    case smsOTP = "sms-otp"
    case password
    case srp
    /// A passkey on a FIDO2 security key (WebAuthn); no password.
    case passkey

    /// Every method by its name on the command line, in order.
    public static var names: [String] { allCases.map { $0.rawValue } }
}

/// How a profile gets its tokens.
public enum Grant: String, Sendable, CaseIterable {
    /// A user signs in (sign-in), and the refresh token renews the session.
    case userSignIn = "user"
    /// The app client itself, with its secret: OAuth 2.0's client-credentials
    /// grant at the domain's token endpoint; an access token only.
    case clientCredentials = "client-credentials"

    /// Who gets the tokens, in a few words.
    public var who: String {
        switch self {
        case .userSignIn: return "a person who signs in"
        case .clientCredentials: return "a machine"
        }
    }
}

/// The time budget for network calls.
public struct Timeouts: Sendable, Equatable {
    public var connect: Double
    public var request: Double
    public var command: Double

    public init(connect: Double, request: Double, command: Double) {
        self.connect = connect
        self.request = request
        self.command = command
    }
}
