import ArgumentParser
import CogCredWrite

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the shell completions offer for option values. The generated bash,
/// zsh and fish scripts run `cog-cred ---completion ...` for the custom
/// ones, so profile names come from the config file at that moment.
enum Completions {
    static let gitActions = CompletionKind.list(GitCredential.Action.allCases.map(\.rawValue))
    static let dockerActions = CompletionKind.list(DockerCredential.Action.allCases.map(\.rawValue))

    /// The profiles in the config file that start with what was typed.
    static let profileNames = CompletionKind.custom { _, _, prefix in
        let paths = Paths(environment: ProcessInfo.processInfo.environment)
        let names = (try? ConfigStore(path: paths.configFile).load().profiles.keys.sorted()) ?? []
        return names.filter { $0.hasPrefix(prefix) }
    }
}
