// The profiles as configured, each with its keyring items: for the use
// cases about profiles rather than one signed-in session (configure's
// change and delete, the list of profiles, the helpers' choice of profile,
// the sign-out of a profile no longer configured).

/// The config file and the keyring together. Each use case is an extension
/// in a file of its own: ProfileChange, ProfileDeletion, ProfileList.
public struct ConfiguredProfiles: Sendable {
    public let config: ConfigStore
    /// A profile's session that reaches no service: its items in the
    /// keyring, changed under its lock (so that a refresh in flight cannot
    /// write tokens back), and its warnings for the person.
    let session: @Sendable (_ name: String, _ profile: Profile) -> TokenManager

    public init(
        config: ConfigStore, store: any TokenStore, refreshMemory: any RefreshAPIMemory,
        lock: @escaping @Sendable (Profile) -> any RefreshLock, clock: any Clock = SystemClock(),
        warn: @escaping @Sendable (String) -> Void = { _ in }, agent: (any SessionAgent)? = nil
    ) {
        self.config = config
        session = { name, profile in
            TokenManager(
                profileName: name, profile: profile, store: store, cognito: { throw CognitoError.deadlineExceeded }, clock: clock,
                refreshMemory: refreshMemory, lock: lock(profile), warn: warn, agent: agent)
        }
    }

    /// Every profile; an absent file is none.
    public func load() throws(ConfigError) -> ConfigFile { try config.load() }

    /// The profile whose git URL patterns match the request's URL, if any.
    public func profileName(for request: GitCredential.Request) throws(ConfigError) -> String? {
        GitCredential.profile(for: request, named: nil, in: try load())
    }

    /// The profile that maps the docker registry of `serverURL`, if any.
    public func profileName(forRegistry serverURL: String) throws(ConfigError) -> String? {
        try load().profile(forRegistry: DockerCredential.registryHost(serverURL))
    }

    /// The session of `name` that reaches no service. `profile` binds what
    /// it reads; one no longer configured binds nothing, so every item of
    /// the name is its own.
    public func localSession(_ name: String, profile: Profile = Profile(userPoolID: "", clientID: "")) -> TokenManager {
        session(name, profile)
    }
}
