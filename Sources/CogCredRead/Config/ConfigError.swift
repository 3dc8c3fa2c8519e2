/// Problems with profiles and the config file. All exit 78 except a bad
/// value typed on the command line, which the executable reports as usage,
/// and a setting `configure` needs but was not given (64: the command line
/// is what is wrong, not the config).
public enum ConfigError: CogCredFailure, Equatable {
    /// No profile of that name in the config file; `nearest`, a configured
    /// one a typo away; `fromEnvironment`, the name came from COG_CRED_PROFILE.
    case profileNotFound(profile: String, path: String, nearest: String? = nil, fromEnvironment: Bool = false)
    /// No profile of that name where the agent runs: said to its client in
    /// the agent's words (no path of that machine's, no `configure` that
    /// would only change the client's).
    case profileNotInAgent(profile: String, nearest: String? = nil)
    /// The file exists but cannot be read or parsed.
    case unreadable(path: String, reason: String)
    /// The file could not be written.
    case unwritable(path: String, reason: String)
    /// A setting has a value cog-cred cannot use.
    case invalidValue(String, String)
    /// A new profile needs a setting that was not given.
    case missingSetting(profile: String, setting: String)
    /// The config file or directory can be changed by someone else.
    case unsafePermissions(path: String, reason: String)
    /// The profile says its app client has a secret, but the keyring has none.
    case clientSecretMissing(profile: String)
    /// The client secret is kept by the agent (COG_CRED_AGENT), which makes
    /// SECRET_HASH but never hands the secret out: the token endpoint's
    /// grants, which send the secret itself, cannot be made through it.
    case clientSecretInAgent(profile: String)
    /// OAuth (client credentials, browser sign-in) needs the pool's domain.
    case missingDomain
    /// `aws-credentials` needs an identity pool.
    case missingIdentityPool(profile: String)

    public var category: FailureCategory {
        if case .missingSetting = self { return .usage }
        return .configuration
    }

    public var message: String {
        switch self {
        case .profileNotFound(let profile, let path, let nearest, let fromEnvironment):
            let missing = "profile '\(profile)'\(fromEnvironment ? " (from COG_CRED_PROFILE)" : "") is not configured (\(path))"
            let add = "cog-cred configure --profile \(profile) --user-pool-id POOL_ID --client-id CLIENT_ID"
            guard let nearest else { return "\(missing); run: \(add)" }
            return "\(missing); did you mean '\(nearest)'? (to add '\(profile)': \(add))"
        case .profileNotInAgent(let profile, let nearest):
            let missing = "the agent's configuration has no profile '\(profile)'"
            let guess = nearest.map { "; did you mean '\($0)'?" } ?? ""
            return "\(missing)\(guess) (cog-cred profiles lists the agent's; to add it, run cog-cred configure --profile \(profile) ... where the agent runs)"
        case .unreadable(let path, let reason):
            return "cannot read the config file \(path): \(reason.oneLine()); fix or remove it, then run cog-cred configure"
        case .unwritable(let path, let reason):
            return "cannot write the config file \(path): \(reason.oneLine())"
        case .invalidValue(let setting, let problem):
            return "invalid \(setting): \(problem)"
        case .missingSetting(let profile, let setting):
            return "profile '\(profile)' is new: --\(setting) is required (see: cog-cred configure --help)"
        case .unsafePermissions(_, let reason):
            return "refusing to use the config: \(reason)"
        case .clientSecretMissing(let profile):
            return "profile '\(profile)' uses an app client secret, but the Secret Service has none for its user pool and app client; store it with: cog-cred configure\(profileFlag(profile)) --client-secret-stdin"
        case .clientSecretInAgent(let profile):
            return "profile '\(profile)' uses an app client secret, which the agent (COG_CRED_AGENT) keeps and never hands out: a browser sign-in sends the secret itself, so it cannot go through the agent; sign in with a flow (cog-cred sign-in --auth-flow srp), for which the agent makes SECRET_HASH"
        case .missingIdentityPool(let profile):
            return "profile '\(profile)' has no identity pool: cog-cred configure\(profileFlag(profile)) --identity-pool-id REGION:UUID"
        case .missingDomain:
            return "the profile has no OAuth domain: cog-cred configure --domain PREFIX_OR_URL (the user pool's domain, under App integration)"
        }
    }
}
