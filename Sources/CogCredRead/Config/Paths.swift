#if canImport(Glibc)
import Glibc
#endif

/// Where cog-cred keeps its files, following the XDG base directory spec.
public struct Paths: Sendable, Equatable {
    /// `$XDG_CONFIG_HOME/cog-cred`, else `~/.config/cog-cred`.
    public var configDirectory: String

    /// `$XDG_STATE_HOME/cog-cred`, else `~/.local/state/cog-cred`: what cog-cred
    /// learns about a service between runs; nothing secret.
    public var stateDirectory: String

    public var configFile: String { configDirectory + "/config.json" }

    public init(configDirectory: String, stateDirectory: String) {
        self.configDirectory = configDirectory
        self.stateDirectory = stateDirectory
    }

    public init(environment: [String: String]) {
        // The spec says a relative XDG_CONFIG_HOME is invalid and to be ignored.
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            configDirectory = xdg + "/cog-cred"
        } else {
            configDirectory = Paths.home(environment) + "/.config/cog-cred"
        }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            stateDirectory = xdg + "/cog-cred"
        } else {
            stateDirectory = Paths.home(environment) + "/.local/state/cog-cred"
        }
    }

    static func home(_ environment: [String: String]) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir {
            return String(cString: dir)
        }
        return "/"
    }
}
