#if canImport(Glibc)
import Glibc
#endif

/// The settings one `configure` gives, as typed: nil keeps the profile's
/// value, an empty string clears an optional one.
public struct ProfileSettings: Sendable, Equatable {
    public var userPoolID: String?
    public var clientID: String?
    public var region: String?
    public var endpointURL: String?
    public var allowInsecureHTTP: Bool?
    /// `--fips` / `--no-fips`.
    public var useFIPSEndpoint: Bool?
    public var caBundle: String?
    public var username: String?
    public var grant: String?
    public var authFlow: String?
    public var method: String?
    public var passkeyRPID: String?
    /// A Cognito domain prefix or a custom domain's URL.
    public var domain: String?
    /// Space-separated.
    public var scopes: String?
    public var redirectURI: String?
    public var identityProvider: String?
    public var logoutURI: String?
    public var identityPoolID: String?
    public var roleARN: String?
    public var basicFlow: Bool?
    public var connectTimeout: Double?
    public var requestTimeout: Double?
    public var commandTimeout: Double?
    /// Empty keeps the list; a list of empty strings clears it.
    public var gitURLs: [String] = []
    /// Registry hosts or URLs; empty keeps the list, a list of empty strings clears it.
    public var dockerRegistries: [String] = []
    /// A new app client secret comes with the change (read only when the
    /// change is saved).
    public var newClientSecret = false
    /// The stored app client secret goes (an app client without one).
    public var removeClientSecret = false

    public init() {}

    /// Whether any setting is given: without one, `configure` shows, asks
    /// or deletes.
    public var changesAnything: Bool {
        let values: [Any?] = [
            userPoolID, clientID, region, endpointURL, allowInsecureHTTP, useFIPSEndpoint, username, domain, scopes, redirectURI,
            identityProvider, logoutURI, identityPoolID, roleARN, basicFlow, grant, connectTimeout, requestTimeout,
            commandTimeout, authFlow, method, caBundle, passkeyRPID,
        ]
        return values.contains { $0 != nil } || !gitURLs.isEmpty || !dockerRegistries.isEmpty || newClientSecret
            || removeClientSecret
    }
}

/// A setting `configure` refuses, said by the command line in its own words.
public enum ProfileSettingsProblem: Error, Sendable {
    /// The domain is neither a URL nor a valid Cognito domain prefix.
    case invalidDomain(problem: String)
    /// The CA bundle named cannot be read.
    case unreadableCABundle(path: String)
    /// A value the profile's own validation refuses.
    case invalidValue(ConfigError)
    /// Plain HTTP to another machine, not allowed by the profile, or FIPS
    /// in a region without it (Endpoint.profileProblem).
    case endpoint(EndpointError)
    /// The client-credentials grant with no app client secret stored or given.
    case clientCredentialsWithoutSecret
    /// Browser sign-in with no domain for the pool's managed login.
    case browserWithoutDomain
}

/// What a saved change is worth telling the person who made it.
public enum ProfileSettingsNote: Sendable, Equatable {
    /// A sign-in method is set, but only the choice flow asks for one.
    case methodUnused(flow: AuthFlow)
    /// A passkey sign-in with no relying party named (nor a domain to take it from).
    case passkeyWithoutRelyingParty
    /// The stored secret was the old app client's (`oldClientID`) and is gone.
    case clientSecretDropped(oldClientID: String, newClientID: String)
    /// Another pool, client or endpoint: sign in again.
    case sessionEnded(tokensDeleted: Bool)
}

/// `configure`'s merge of the given settings into a profile: each setting
/// replaces (or clears) its field, the result is checked as a whole, and
/// what the old settings leave behind is worked out (ProfileChange).
/// Nothing is read from or written to the keyring here.
public struct ProfileSettingsMerge: Sendable {
    /// The profile as it is to be saved.
    public let profile: Profile
    /// What the old settings leave behind.
    public let change: ProfileChange
    /// Nothing to write: the same profile, no secret to store or remove.
    public let unchanged: Bool

    /// Merges `settings` into `existing` (nil: a new profile `name`).
    public init(_ name: String, _ settings: ProfileSettings, into existing: Profile?) throws {
        guard let poolID = settings.userPoolID ?? existing?.userPoolID else {
            throw ConfigError.missingSetting(profile: name, setting: "user-pool-id")
        }
        guard let clientID = settings.clientID ?? existing?.clientID else {
            throw ConfigError.missingSetting(profile: name, setting: "client-id")
        }
        var profile = existing ?? Profile(userPoolID: poolID, clientID: clientID)
        profile.userPoolID = poolID
        profile.clientID = clientID
        try Self.apply(settings, to: &profile)
        do {
            try profile.validate()
        } catch {
            // A value given with the change: the change's mistake, not a broken file.
            throw ProfileSettingsProblem.invalidValue(error)
        }
        if let problem = Endpoint.profileProblem(profile) { throw ProfileSettingsProblem.endpoint(problem) }
        let change = ProfileChange(from: existing, to: profile, newClientSecret: settings.newClientSecret)
        if change.dropsClientSecret { profile.clientSecretInKeyring = nil }
        if profile.effectiveGrant == .clientCredentials && profile.clientSecretInKeyring != true && !settings.newClientSecret {
            throw ProfileSettingsProblem.clientCredentialsWithoutSecret
        }
        if profile.effectiveAuthFlow == .browser && profile.domain == nil {
            throw ProfileSettingsProblem.browserWithoutDomain
        }
        self.profile = profile
        self.change = change
        // Removing a secret that is not stored changes nothing either.
        self.unchanged =
            profile == existing && !settings.newClientSecret
            && !(settings.removeClientSecret && existing?.clientSecretInKeyring == true)
    }

    /// Each given setting into its field: an empty value clears an optional
    /// one, and what the file keeps in a canonical form (a full domain URL,
    /// a registry host, no default grant) is put in it.
    static func apply(_ settings: ProfileSettings, to profile: inout Profile) throws {
        func cleared(_ value: String) -> String? { value.isEmpty ? nil : value }
        if let region = settings.region { profile.region = cleared(region) }
        if let endpointURL = settings.endpointURL { profile.endpointURL = cleared(endpointURL) }
        if let allowInsecureHTTP = settings.allowInsecureHTTP { profile.allowInsecureHTTP = allowInsecureHTTP ? true : nil }
        if let useFIPSEndpoint = settings.useFIPSEndpoint { profile.useFIPSEndpoint = useFIPSEndpoint ? true : nil }
        if let username = settings.username { profile.username = cleared(username) }
        if let domain = settings.domain {
            if !domain.isEmpty, !domain.contains("://"), let problem = ProfileValidation.domainPrefixProblem(domain) {
                throw ProfileSettingsProblem.invalidDomain(problem: problem)
            }
            profile.domain = domain.isEmpty ? nil : ProfileValidation.expandDomain(domain, region: profile.effectiveRegion)
        }
        // A Cognito domain in the form the profile's FIPS setting and
        // region call for (`auth-fips` in GovCloud or with --fips), so
        // that `configure --show` prints the host the browser will open.
        if let domain = profile.domain, let (prefix, region) = AWSEndpoints.managedLoginPrefix(of: domain),
            let built = AWSEndpoints.managedLogin(prefix: prefix, region: region, fipsAsked: profile.useFIPSEndpoint == true)
        {
            profile.domain = built
        }
        if let scopes = settings.scopes {
            let list = scopes.split(whereSeparator: \.isWhitespace).map(String.init)
            profile.scopes = list.isEmpty ? nil : list
        }
        // The default grant is not written: the file names only a machine's.
        if let grant = settings.grant { profile.grant = grant.isEmpty || grant == Grant.userSignIn.rawValue ? nil : grant }
        if let redirectURI = settings.redirectURI { profile.redirectURI = cleared(redirectURI) }
        if let identityProvider = settings.identityProvider { profile.identityProvider = cleared(identityProvider) }
        if let logoutURI = settings.logoutURI { profile.logoutURI = cleared(logoutURI) }
        if let identityPoolID = settings.identityPoolID { profile.identityPoolID = cleared(identityPoolID) }
        if let roleARN = settings.roleARN { profile.roleARN = cleared(roleARN) }
        if let basicFlow = settings.basicFlow { profile.basicFlow = basicFlow ? true : nil }
        if let connectTimeout = settings.connectTimeout { profile.connectTimeout = connectTimeout }
        if let requestTimeout = settings.requestTimeout { profile.requestTimeout = requestTimeout }
        if let commandTimeout = settings.commandTimeout { profile.commandTimeout = commandTimeout }
        if let authFlow = settings.authFlow { profile.authFlow = cleared(authFlow) }
        if let method = settings.method { profile.method = cleared(method) }
        if let passkeyRPID = settings.passkeyRPID { profile.passkeyRPID = cleared(passkeyRPID) }
        if let caBundle = settings.caBundle {
            // Checked now, so that a mistyped path is not found at the first sign-in.
            if !caBundle.isEmpty && access(caBundle, R_OK) != 0 {
                throw ProfileSettingsProblem.unreadableCABundle(path: caBundle)
            }
            profile.caBundle = cleared(caBundle)
        }
        if !settings.gitURLs.isEmpty {
            let urls = settings.gitURLs.filter { !$0.isEmpty }
            // The git helper hands a token over https only (plain http to this machine aside).
            for url in urls {
                // One that is no URL at all, validate() refuses.
                guard let pattern = URLPattern(url), !GitCredential.carriesTokens(scheme: pattern.scheme, host: pattern.host) else { continue }
                throw ProfileSettingsProblem.invalidValue(
                    .invalidValue("git-url", "\(pattern.scheme)://\(pattern.host) is not https: the git helper hands a token over https only (plain http to this machine aside)"))
            }
            profile.gitURLs = urls.isEmpty ? nil : urls
        }
        if !settings.dockerRegistries.isEmpty {
            let hosts = settings.dockerRegistries.filter { !$0.isEmpty }.map { DockerCredential.registryHost($0) }
            profile.dockerRegistries = hosts.isEmpty ? nil : hosts
        }
    }

    /// What to tell about the saved change, in the order said;
    /// `tokensDeleted` when the old session's tokens were deleted with it.
    public func notes(replacing existing: Profile?, tokensDeleted: Bool) -> [ProfileSettingsNote] {
        var notes: [ProfileSettingsNote] = []
        if profile.method != nil && profile.effectiveAuthFlow != .choice {
            notes.append(.methodUnused(flow: profile.effectiveAuthFlow))
        }
        if profile.method == SignInMethod.passkey.rawValue && profile.passkeyRelyingParty == nil {
            notes.append(.passkeyWithoutRelyingParty)
        }
        if change.dropsClientSecret {
            notes.append(.clientSecretDropped(oldClientID: existing?.clientID ?? "", newClientID: profile.clientID))
        }
        if change.endsSession { notes.append(.sessionEnded(tokensDeleted: tokensDeleted)) }
        return notes
    }
}

/// What `configure` did with a profile's settings.
public struct ProfileConfiguration: Sendable {
    /// The profile as saved (or as it already was).
    public var profile: Profile
    /// False when there was nothing to change, and nothing was written.
    public var saved: Bool
    /// A new app client secret was stored with the change.
    public var storedClientSecret: Bool
    public var notes: [ProfileSettingsNote]
}

extension ConfiguredProfiles {
    /// `configure`: merges `settings` into `existing`, the profile `name`
    /// as just loaded (nil: a new one), and saves the result with what the
    /// change leaves behind deleted. `clientSecret` is asked for only when
    /// the settings bring one and the change is valid. A change that ends
    /// a signed-in session is first put to `confirmEndingSession`, with what
    /// is stored, which throws to change nothing; a session whose keyring
    /// cannot be read now is not asked about: its items, bound to the old
    /// pool and client, are never used again anyway.
    public func configure(
        _ name: String, _ settings: ProfileSettings, replacing existing: Profile?,
        confirmEndingSession: (SessionStatus) throws -> Void = { _ in }, clientSecret: () throws -> String
    ) throws -> ProfileConfiguration {
        let merge = try ProfileSettingsMerge(name, settings, into: existing)
        if merge.unchanged {
            return ProfileConfiguration(profile: merge.profile, saved: false, storedClientSecret: false, notes: [])
        }
        if merge.change.endsSession, let existing, let stored = try? items(name, existing).status(), stored.signedIn {
            try confirmEndingSession(stored)
        }
        let secret = settings.newClientSecret ? try clientSecret() : nil
        let tokensDeleted = try save(
            name, merge.profile, replacing: existing, change: merge.change,
            clientSecret: secret.map(ClientSecretEdit.store) ?? (settings.removeClientSecret ? .remove : .keep))
        return ProfileConfiguration(
            profile: merge.profile, saved: true, storedClientSecret: secret != nil,
            notes: merge.notes(replacing: existing, tokensDeleted: tokensDeleted > 0))
    }
}
