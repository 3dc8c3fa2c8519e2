// `setup-docker REGISTRY`: docker's credential helper for one registry, in
// the two places docker-credential needs it: the registry's `credHelpers`
// entry in docker's config.json ("cog-cred": docker, skopeo, podman and
// docker-py then run docker-credential-cog-cred for it), and the registry
// in the profile's docker-registries, by which docker-credential picks the
// profile (docker runs it with no --profile).
//
// docker's config.json holds other tools' settings (auths, credsStore,
// proxies, plugins...): it is read as JSON and written back with every
// other key and value as it was, as docker itself rewrites it (its
// configfile.Save: symbolic links followed, the file's mode kept, a new
// file 0600 in a directory 0700, a temporary file renamed over it).

#if canImport(Glibc)
import Glibc
#endif

public struct DockerHelperSetup: Sendable {
    /// What credHelpers maps a registry to: docker runs `docker-credential-` + it.
    public static let helperName = "cog-cred"

    public struct Outcome: Sendable, Equatable {
        /// docker's config.json was written (false: the entry was already there).
        public var wroteDockerConfig = false
        /// What credHelpers had for the registry before, when it was another helper.
        public var replacedHelper: String?
        /// The registry was added to the profile's docker-registries.
        public var mapped = false
        /// Profiles that answered for the registry before, now without it.
        public var unmappedFrom: [String] = []

        public var changed: Bool { wroteDockerConfig || mapped || !unmappedFrom.isEmpty }
    }

    /// docker's config.json.
    public let dockerConfig: String
    let config: ConfigStore

    public init(dockerConfig: String, config: ConfigStore) {
        self.dockerConfig = dockerConfig
        self.config = config
    }

    /// Where docker reads its config: $DOCKER_CONFIG/config.json, else
    /// ~/.docker/config.json; nil with neither variable set.
    public static func dockerConfigPath(environment: [String: String]) -> String? {
        if let directory = environment["DOCKER_CONFIG"], !directory.isEmpty { return directory + "/config.json" }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.docker/config.json"
    }

    /// The credHelpers key for a registry named as a host, HOST:PORT or a
    /// URL (https://registry.example.com/v2/): host[:port], lower case, as
    /// docker looks it up; a URL's user name and password dropped.
    public static func registry(_ text: String) -> String? {
        ServerAddress(text, schemes: ["https", "http"])?.hostAndPort
    }

    /// The registry's entry and mapping, each written only when it is not
    /// already so: a second run writes nothing. Both files are read and
    /// checked before either is written, so a malformed one changes nothing.
    public func setUp(registry: String, profile: String) throws(SetupError) -> Outcome {
        var outcome = Outcome()
        var file: ConfigFile
        do { file = try config.load() } catch { throw SetupError(error.message, category: error.category) }
        guard file.profiles[profile] != nil else {
            throw SetupError(file.notFound(profile, path: config.path).message, category: .configuration)
        }
        let target = resolvedTarget()
        var (document, mode) = try readDockerConfig(target)
        var helpers = document["credHelpers"]?.objectValue ?? [:]
        if helpers[registry] != .string(Self.helperName) {
            outcome.replacedHelper = helpers[registry].map { $0.stringValue ?? $0.compactText }
            helpers[registry] = .string(Self.helperName)
            document["credHelpers"] = .object(helpers)
            outcome.wroteDockerConfig = true
        }
        // The first profile by name that maps the registry answers for it
        // (ConfigFile.profile(forRegistry:)): every other one lets it go.
        for (name, other) in file.profiles.sorted(by: { $0.key < $1.key }) where name != profile {
            guard let registries = other.dockerRegistries, registries.contains(where: { $0.lowercased() == registry }) else { continue }
            let kept = registries.filter { $0.lowercased() != registry }
            file.profiles[name]?.dockerRegistries = kept.isEmpty ? nil : kept
            outcome.unmappedFrom.append(name)
        }
        let mapped = file.profiles[profile]?.dockerRegistries ?? []
        if !mapped.contains(where: { $0.lowercased() == registry }) {
            file.profiles[profile]?.dockerRegistries = mapped + [registry]
            outcome.mapped = true
        }
        if outcome.wroteDockerConfig {
            let directory = String(target[..<(target.lastIndex(of: "/") ?? target.startIndex)])
            if mode == nil, !directory.isEmpty, let problem = makeDirectories(directory, mode: 0o700) {
                throw SetupError("cannot write \(dockerConfig): \(problem)", category: .configuration)
            }
            mode = mode ?? 0o600
            let text = JSONValue.object(document).prettyText + "\n"
            if let problem = writeAtomically(Array(text.utf8), to: target, mode: mode!) {
                throw SetupError("cannot write \(dockerConfig): \(problem.reason)", category: .configuration)
            }
        }
        // docker's file first: when it cannot be written, nothing has changed.
        if outcome.mapped || !outcome.unmappedFrom.isEmpty {
            do { try config.save(file) } catch { throw SetupError(error.message, category: error.category) }
        }
        return outcome
    }

    /// The file to write: docker's config.json, or what its symbolic links
    /// lead to (a dotfiles manager's link stays a link).
    func resolvedTarget() -> String {
        guard let resolved = realpath(dockerConfig, nil) else { return dockerConfig }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The config's members and the file's mode (nil: no file yet). Refused
    /// unless it is a JSON object whose credHelpers, if any, is one too:
    /// docker itself could not read it, and writing over it would lose what
    /// it holds. An empty file is an empty config, as docker reads it.
    func readDockerConfig(_ path: String) throws(SetupError) -> (members: [String: JSONValue], mode: mode_t?) {
        let contents: FileContents?
        switch readRegularFile(path) {
        case .success(let found): contents = found
        case .failure(let problem): throw SetupError("cannot read \(dockerConfig): \(problem.reason)", category: .configuration)
        }
        guard let contents else { return ([:], nil) }
        if contents.bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { return ([:], contents.mode) }
        guard let members = JSONValue.parse(contents.bytes)?.objectValue else {
            throw SetupError("\(dockerConfig) is not valid JSON (an object); fix or move it, then set it up again (nothing was changed)",
                             category: .configuration)
        }
        let helpers = members["credHelpers"] ?? .null
        let namesOnly = helpers.objectValue.map { $0.values.allSatisfy { $0.stringValue != nil } } ?? (helpers == .null)
        if !namesOnly {
            throw SetupError("\(dockerConfig): credHelpers is not an object of helper names; fix it, then set it up again (nothing was changed)",
                             category: .configuration)
        }
        return (members, contents.mode)
    }
}
