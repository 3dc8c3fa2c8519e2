import CLinux
import CogCredWrite

#if canImport(Glibc)
import Glibc
#endif

/// Opens an address in the user's browser, as gh, kubelogin and git's
/// helpers do: `$BROWSER` when set (a `:`-separated list of commands, each
/// tried in turn; `%s` stands for the address, else it is appended), else
/// `xdg-open`. The browser is not waited for, and its output goes to
/// /dev/null: stdout carries only data, and a browser's chatter is not for
/// the person at the terminal. Its environment names this machine in
/// NO_PROXY (`browserEnvironment`).
enum Browser {
    /// True when a browser command was started.
    @discardableResult
    static func open(_ url: String, environment: [String: String]) -> Bool {
        let commands = (environment["BROWSER"] ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
        if commands.isEmpty {
            // No graphical session (over SSH): xdg-open would start a text
            // browser with its screen thrown away, or nothing.
            guard Desktop.hasDisplay({ environment[$0] }) else { return false }
            return spawn(["xdg-open", url], environment: environment)
        }
        for command in commands {
            // The address travels as $1, never pasted into the shell's text.
            let script = command.contains("%s") ? command.replacing("%s", with: "\"$1\"") : command + " \"$1\""
            if spawn(["/bin/sh", "-c", script, "sh", url], environment: environment) { return true }
        }
        return false
    }

    static func spawn(_ arguments: [String], environment: [String: String]) -> Bool {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        clinux_spawn_close_from(&actions, 3)
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?] = browserEnvironment(environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        return posix_spawnp(&pid, arguments[0], &actions, nil, &argv, envp) == 0
    }

    /// `environment` with this machine named in `no_proxy` and `NO_PROXY`:
    /// the sign-in's loopback listener must never be asked through a proxy
    /// (which would see the code, and cannot reach it), and a browser that
    /// reads the proxy variables (a text browser, curl) would otherwise
    /// send it there. Chromium and Firefox never proxy loopback themselves.
    static func browserEnvironment(_ environment: [String: String]) -> [String: String] {
        let existing = [environment["no_proxy"], environment["NO_PROXY"]].lazy.compactMap { $0 }.first { !$0.isEmpty }
        let loopback = "localhost,127.0.0.1,::1"
        let exempt = existing.map { $0 == "*" ? $0 : "\($0),\(loopback)" } ?? loopback
        return environment.merging(["no_proxy": exempt, "NO_PROXY": exempt]) { $1 }
    }
}
