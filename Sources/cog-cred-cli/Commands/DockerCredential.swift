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

    @Argument(help: ArgumentHelp("\(DockerCredential.Action.allCases.map(\.rawValue).spoken())."), completion: Completions.dockerActions)
    var action: String

    func run() throws {
        Output.raw(try DockerCredential.handle(action, Store(named: profile)))
    }

    /// The profiles and their tokens, as docker's protocol asks for them.
    struct Store: DockerCredentialStore {
        typealias Failure = any Error
        /// --profile: no default, the registry's mapping decides.
        let named: String?
        let wiring = Wiring()

        func input(limit: Int) throws -> [UInt8] { try StandardInput.readAll(limit: limit) }

        func refused(_ refusal: DockerCredential.Refusal) -> any Error {
            switch refusal {
            case .notFound: return DockerFailure(DockerCredential.notFound)
            case .notACredential: return DockerFailure("cog-cred: store expects {\"ServerURL\", \"Username\", \"Secret\"} on standard input")
            case .registryNotMapped:
                return DockerFailure("cog-cred keeps only Cognito tokens: map the registry with cog-cred configure --docker-registry HOST")
            case .unknownAction(let action):
                let actions = DockerCredential.Action.allCases.map(\.rawValue).spoken()
                return DockerFailure("cog-cred: unknown action '\(action)': expected \(actions)")
            }
        }

        func profile(forServerURL serverURL: String) throws -> String? {
            if let named { return named }
            return try wiring.profiles.profileName(forRegistry: serverURL)
        }

        func token(forServerURL serverURL: String) throws -> IssuedToken? {
            try profile(forServerURL: serverURL).map { try wiring.tokenManager(named: $0).currentToken(.access) }
        }

        func forgetAccessToken(profile: String) throws { try wiring.tokenManager(named: profile).forgetAccessToken() }
        func config() throws -> ConfigFile { try wiring.profiles.load() }
        func version() -> String { "cog-cred \(cogCredVersion)" }
    }
}

/// docker reads a helper's error from stdout and expects exit status 1.
struct DockerFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
