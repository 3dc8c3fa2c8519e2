import ArgumentParser
import CogCredWrite

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The docker credential helper: `docker-credential-cog-cred get|store|erase|list|version`.
struct DockerCredentialCommand: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "docker-credential",
        abstract: "docker credential helper (\"credHelpers\": {\"registry.example.com\": \"cog-cred\"}).",
        discussion: """
            Registries are mapped to profiles with configure --docker-registry HOST (or \
            --profile names the one to answer with). get prints \
            {"ServerURL", "Username", "Secret"} with a fresh access token as the secret; a \
            registry that is not mapped gets the protocol's "credentials not found" answer. \
            store accepts credentials only for mapped registries and keeps nothing; erase makes \
            the next get refresh; list names the mapped registries.
            """)
    static let examples = [
        "cog-cred configure --profile work --docker-registry registry.example.com",
        "cog-cred docker-credential list",
    ]

    /// `--profile` here has no default: the registry's mapping decides.
    @OptionGroup var globals: GlobalOptions
    var profile: String? { globals.profile }

    @Argument(help: "get, store, erase, list or version.", completion: Completions.dockerActions)
    var action: String

    func run() throws {
        let wiring = Wiring()
        switch action {
        case "get", "erase":
            let serverURL = DockerCredential.serverURL(try StandardInput.readAll(limit: 65536))
            guard let name = try profile ?? wiring.profiles.profileName(forRegistry: serverURL) else {
                throw DockerFailure(DockerCredential.notFound)
            }
            let manager = try wiring.tokenManager(named: name)
            if action == "erase" {
                try manager.forgetAccessToken()
                return
            }
            Output.data(DockerCredential.answer(serverURL: serverURL, token: try manager.currentToken(.access)))
        case "store":
            let input = try StandardInput.readAll(limit: 1 << 20)
            guard let credential = DockerCredential.Credential(input) else {
                throw DockerFailure("cog-cred: store expects {\"ServerURL\", \"Username\", \"Secret\"} on standard input")
            }
            guard try profile != nil || wiring.profiles.profileName(forRegistry: credential.serverURL) != nil else {
                throw DockerFailure("cog-cred keeps only Cognito tokens: map the registry with cog-cred configure --docker-registry HOST")
            }
        case "list":
            Output.data(DockerCredential.list(try wiring.profiles.load()))
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
