// Every profile and its session (`cog-cred profiles`).

extension ConfiguredProfiles {
    /// One profile as listed.
    public struct Summary: Sendable {
        public var name: String
        public var profile: Profile
        /// nil: the keyring could not be asked.
        public var status: SessionStatus?
        /// The socket of the agent whose profile (and session) it is; nil: this machine's.
        public var agent: String? = nil
    }

    /// Every profile by name, with its session's status while the keyring
    /// answers. Once it fails (locked, no Secret Service), the rest are
    /// listed unknown rather than asked again, and its failure comes with
    /// the list: the profiles are worth showing either way. `only` lists
    /// that one profile, and is an error (78) when it is not configured.
    public func summaries(only: String? = nil) throws(ConfigError) -> (profiles: [Summary], keyringFailure: SecretServiceError?) {
        var summaries: [Summary] = []
        var failure: SecretServiceError? = nil
        let file = try load()
        var profiles = file.profiles.sorted(by: { $0.key < $1.key })
        if let only {
            guard let profile = file.profiles[only] else { throw file.notFound(only, path: config.path) }
            profiles = [(only, profile)]
        }
        for (name, profile) in profiles {
            var summary = Summary(name: name, profile: profile)
            if failure == nil {
                do {
                    summary.status = try items(name, profile).status()
                } catch {
                    failure = error
                }
            }
            summaries.append(summary)
        }
        return (summaries, failure)
    }

    /// The profiles the agent `agent` serves, as its configuration has
    /// them, each with its session's status there; `only` as above.
    public static func summaries(of agent: AgentClient, only: String? = nil) throws -> [Summary] {
        let (file, statuses) = try agent.profiles()
        if let only, file.profiles[only] == nil {
            throw ConfigError.profileNotInAgent(profile: only, nearest: NearMiss.closest(to: only, in: file.profiles.keys.sorted()))
        }
        return file.profiles.sorted(by: { $0.key < $1.key }).filter { only == nil || $0.key == only }.map { name, profile in
            Summary(name: name, profile: profile, status: statuses[name], agent: agent.connection.path)
        }
    }
}
