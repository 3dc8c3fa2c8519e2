import CogCredCore

#if canImport(Glibc)
import Glibc
#endif

/// `token`, `token --id-token` and `get-header` with a fresh token in the
/// kernel-keyring cache, answered before argument parsing, Foundation or
/// libsecret are touched: these run before every API call a script makes.
/// Anything else (other flags, a cache miss, a token inside its margin)
/// falls through to the full command, which gives the same answer.
enum FastPath {
    static func run(_ arguments: [String]) -> Bool {
        var rest = arguments[...]
        guard let command = rest.popFirst(), command == "token" || command == "get-header" else { return false }
        var profile: String? = nil
        var idToken = false
        while let argument = rest.popFirst() {
            if argument == "--profile", let value = rest.popFirst() {
                profile = value
            } else if argument.hasPrefix("--profile=") {
                profile = String(argument.dropFirst("--profile=".count))
            } else if argument == "--id-token" && command == "token" {
                idToken = true
            } else {
                return false
            }
        }
        let name = profile ?? environment("COG_CRED_PROFILE").flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        guard ProfileValidation.profileNameProblem(name) == nil else { return false }

        let paths = Paths(environment: [
            "XDG_CONFIG_HOME": environment("XDG_CONFIG_HOME") ?? "", "HOME": environment("HOME") ?? "",
        ])
        // A config that is gone or that others can write sends the command
        // down the full path, which says what is wrong.
        let config = ConfigStore(path: paths.configFile)
        guard access(config.path, R_OK) == 0, (try? config.checkOwnership()) != nil else { return false }
        let cache = KernelKeyringCache(
            configDirectory: paths.configDirectory, busAddress: environment("DBUS_SESSION_BUS_ADDRESS") ?? "")
        guard let token = cache.read(idToken ? .id : .access, profile: name),
            RefreshPolicy().isUsable(token.claims, now: SystemClock().now())
        else { return false }
        Output.data(command == "get-header" ? "Authorization: Bearer \(token.value)" : token.value)
        return true
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
