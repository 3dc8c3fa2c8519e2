import ArgumentParser
import CogCredWrite

/// `cog-cred setup-git HOST|URL`: git's helper for https://HOST, written with git config.
struct SetupGit: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "setup-git",
        abstract: "Make git ask cog-cred for https://HOST (writes your git configuration).",
        discussion: """
            Writes credential.https://HOST.helper in your global git configuration (with \
            --local: the repository's .git/config) through git config itself, so \
            git clone https://HOST/... works at once with the profile's access token. HOST \
            may be given as a URL, such as the remote's https://HOST/org/repo.git: the entry \
            is the one git matches for it, the host and port (443, https's own, dropped as \
            git drops it); the path does not matter to git's helpers, and a user name or \
            password in the URL is neither written nor shown. The \
            host's helpers become two entries: an empty one, which tells git to forget the \
            helpers configured before it for that host (a global credential.helper store, \
            say), then "cog-cred --profile NAME". The profile is always named: the git \
            helper never falls back to $COG_CRED_PROFILE or "default". Run twice, the second \
            run changes nothing; run with another profile, it switches the host to it. Other \
            helpers the host had are replaced (and named on stderr); other hosts' helpers and \
            credential.helper are not touched.

            The profile must be configured (78 otherwise). git not installed: 69. Not a \
            host or https:// URL, or --local outside a repository: 64. git refusing to write (a broken or locked file): 78, \
            with git's own words. Nothing secret is written: the helper fetches the token \
            each time git asks.
            """)

    static let examples: [String] = [
        "cog-cred setup-git git.example.com",
        "cog-cred setup-git git.example.com --profile work",
        "cog-cred setup-git https://git.example.com/org/repo.git",
        "cog-cred setup-git git.example.com:8443 --local",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    @Argument(help: ArgumentHelp("The host, as HOST or HOST:PORT, or an https:// URL on it (a remote's URL).", valueName: "host-or-url"))
    var host: String

    @Flag(help: "Write the repository's .git/config (run inside it) instead of your global git configuration.")
    var local = false

    func validate() throws {
        guard GitHelperSetup.host(host) != nil else {
            throw ValidationError("not a host or https:// URL\(ServerAddress.shown(host)); give HOST, HOST:PORT or https://HOST/..., such as git.example.com")
        }
    }

    func run() throws {
        let name = try Wiring(profileOptions).configuredProfileName()
        let host = GitHelperSetup.host(self.host)!
        let scope: GitHelperSetup.Scope = local ? .local : .global
        let file = local ? "this repository's .git/config" : "your global git configuration"
        let outcome = try GitHelperSetup(programs: SpawnedPrograms()).setUp(host: host, profile: name, scope: scope)
        switch outcome {
        case .unchanged:
            Output.note("git already asks cog-cred (profile '\(name)') for https://\(host) in \(file); nothing changed.")
        case .written(let replaced):
            Output.note("git now asks cog-cred (profile '\(name)') for https://\(host): wrote \(GitHelperSetup.key(host: host)) in \(file).")
            if !replaced.isEmpty {
                Output.note("Replaced the host's other helpers: \(replaced.map { $0.oneLine(limit: 100) }.joined(separator: ", ")).")
            }
        }
    }
}
