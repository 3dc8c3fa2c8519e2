// The profiles as configured, each with its keyring items: for the use
// cases about profiles rather than one signed-in session (configure's
// change and delete, the list of profiles, the helpers' choice of profile,
// the sign-out of a profile no longer configured).

/// The config file and the keyring together. Each use case is an extension
/// in a file of its own: ProfileChange, ProfileDeletion, ProfileList.
public struct ConfiguredProfiles: Sendable {
    public let config: ConfigStore
    /// Where the profiles' items are: this machine's Secret Service, or the
    /// agent COG_CRED_AGENT names.
    let store: any TokenStore
    let refreshMemory: any RefreshAPIMemory
    /// A profile's lock, waited on for at most `wait` seconds.
    let lock: @Sendable (_ wait: Double) -> any RefreshLock
    let warn: @Sendable (String) -> Void
    /// A profile's stored session, reaching no service: what is stored,
    /// and its items deleted under its lock (so that a refresh in flight
    /// cannot write tokens back). Through an agent, the agent's session.
    let items: @Sendable (_ name: String, _ profile: Profile) -> any SessionItems

    /// `session`: where the sessions live when not in `store` here (an
    /// agent's, AgentSession); nil: a StoredSession of `store`.
    public init(
        config: ConfigStore, store: any TokenStore, refreshMemory: any RefreshAPIMemory,
        lock: @escaping @Sendable (_ wait: Double) -> any RefreshLock, clock: any Clock = SystemClock(),
        warn: @escaping @Sendable (String) -> Void = { _ in }, session: (@Sendable (_ name: String) -> any SessionItems)? = nil
    ) {
        self.config = config
        self.store = store
        self.refreshMemory = refreshMemory
        self.lock = lock
        self.warn = warn
        items = { name, profile in
            session?(name)
                ?? StoredSession(profileName: name, profile: profile, store: store, clock: clock, lock: lock(profile.refreshWait), warn: warn)
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

    /// The items of `name`, a profile no longer configured (the sign-out of
    /// one): with no pool or client to bind them, every item of the name
    /// is its own, and with no endpoint nothing is revoked; deleted under
    /// the profile's lock. How many existed.
    public func forgetUnconfigured(_ name: String) throws -> Int {
        try lock(Profile.defaultRefreshWait).withLock(profile: name) {
            try StoredSession.deleteItems(of: name, in: store, forgettingDevice: false)
        }
    }
}
