import ArgumentParser
import CogCredWrite

/// `cog-cred setup-docker REGISTRY`: docker's credHelpers entry for the registry, and the profile's mapping.
struct SetupDocker: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "setup-docker",
        abstract: "Make docker ask cog-cred for REGISTRY (writes docker's config.json).",
        discussion: """
            Sets "credHelpers": {"REGISTRY": "cog-cred"} in docker's config.json \
            ($DOCKER_CONFIG/config.json, else ~/.docker/config.json), so docker, podman, \
            skopeo and docker-py run docker-credential-cog-cred for that registry, and adds \
            the registry to the profile's docker-registries (as configure --docker-registry \
            does), which is how the helper picks the profile. A registry that another profile \
            answered for is moved to this one (and named on stderr). REGISTRY is a host, \
            HOST:PORT or a URL (https://registry.example.com/v2/): the key is host[:port], as \
            docker looks it up; a user name or password in the URL is neither written nor \
            shown.

            Every other key of config.json (auths, credsStore, other registries' helpers, \
            proxies...) is kept with its value. The file is written as docker writes it: a \
            new file beside it renamed over it, its mode kept; created 0600 in a directory \
            0700 when absent. Run twice, the second run changes nothing and says so. Nothing \
            secret is written: the helper fetches the token each time docker asks.

            The profile must be configured (78 otherwise). Not a registry: 64. A config.json \
            that is not a JSON object (or whose credHelpers is not one of names): 78, and \
            nothing is changed.
            """)

    static let examples: [String] = [
        "cog-cred setup-docker registry.example.com",
        "cog-cred setup-docker registry.example.com:5000 --profile work",
        "cog-cred setup-docker https://registry.example.com/v2/",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    @Argument(help: ArgumentHelp("The registry, as HOST, HOST:PORT or a URL on it.", valueName: "registry"))
    var registry: String

    func validate() throws {
        guard DockerHelperSetup.registry(registry) != nil else {
            throw ValidationError("not a registry\(ServerAddress.shown(registry)); give HOST, HOST:PORT or https://HOST/..., such as registry.example.com")
        }
    }

    func run() throws {
        let wiring = Wiring(profileOptions)
        let name = try wiring.configuredProfileName()
        let registry = DockerHelperSetup.registry(self.registry)!
        guard let path = DockerHelperSetup.dockerConfigPath(environment: wiring.environment) else {
            throw SetupError("neither DOCKER_CONFIG nor HOME is set: set DOCKER_CONFIG to the directory of docker's config.json", category: .configuration)
        }
        let outcome = try DockerHelperSetup(dockerConfig: path, config: ConfigStore(path: wiring.paths.configFile)).setUp(registry: registry, profile: name)
        guard outcome.changed else {
            Output.note("docker already asks cog-cred (profile '\(name)') for \(registry) in \(path); nothing changed.")
            return
        }
        if outcome.wroteDockerConfig {
            Output.note("docker now asks cog-cred (profile '\(name)') for \(registry): wrote credHelpers in \(path).")
        } else {
            Output.note("docker already asks cog-cred for \(registry) in \(path).")
        }
        if let replaced = outcome.replacedHelper {
            Output.note("Replaced the registry's other helper: \(replaced.oneLine(limit: 100)).")
        }
        if outcome.mapped {
            Output.note("Profile '\(name)' now answers for \(registry) (its docker-registries).")
        }
        if !outcome.unmappedFrom.isEmpty {
            Output.note("No longer answered by profile\(outcome.unmappedFrom.count == 1 ? "" : "s") \(outcome.unmappedFrom.map { "'\($0)'" }.joined(separator: ", ")).")
        }
    }
}
