// `setup-git HOST|URL`: the credential helper for https://HOST in the user's git
// configuration, written by git itself (`git config`: its own file format
// and lock), as docs/integrations/git.md recommends writing it by hand.

public struct GitHelperSetup: Sendable {
    /// The user's global git configuration (~/.gitconfig, or
    /// $XDG_CONFIG_HOME/git/config when that is the one git uses), or the
    /// repository's .git/config.
    public enum Scope: Sendable, Equatable {
        case global, local

        var flag: String { self == .global ? "--global" : "--local" }
    }

    public enum Outcome: Sendable, Equatable {
        /// The host's helpers were already exactly these: nothing written.
        case unchanged
        /// Written; `replaced` are the host's other helpers, now gone.
        case written(replaced: [String])
    }

    let programs: any ProgramRunning

    public init(programs: any ProgramRunning) {
        self.programs = programs
    }

    /// `credential.https://HOST.helper`: git asks that key's helpers for
    /// https://HOST only, whatever the path; no other host's key is touched.
    public static func key(host: String) -> String { "credential.https://\(host).helper" }

    /// What the helper runs: git runs `git-credential-cog-cred --profile P get`.
    /// The profile is always named, the default one too: the git helper never
    /// falls back to $COG_CRED_PROFILE or "default" (GitCredentialCommand).
    public static func helper(profile: String) -> String { "cog-cred --profile \(profile)" }

    /// The host's helper entries after setup, in order: an empty one first,
    /// which tells git to forget every helper configured before it for this
    /// host (a global `credential.helper store`, say: gitcredentials(7)), as
    /// `gh auth setup-git` writes; then cog-cred's. Only cog-cred answers for
    /// the host.
    public static func entries(profile: String) -> [String] { ["", helper(profile: profile)] }

    /// The host git matches `credential.https://HOST` against, from HOST,
    /// HOST:PORT or an https:// URL (a remote's, path and all): lower case,
    /// its port kept but for https's own 443, which git drops when it
    /// normalises a URL (so `host:443` and `host` are one entry); a URL's
    /// user name and password are dropped, never written. nil when it is
    /// something else (another scheme, characters no host has).
    public static func host(_ text: String) -> String? {
        ServerAddress(text, schemes: ["https"], defaultPort: "443")?.hostAndPort
    }

    /// Writes the host's helpers unless they are already exactly
    /// `entries(profile:)`; a second run writes nothing, a run with another
    /// profile switches it. Other hosts' helpers and the global
    /// `credential.helper` are never touched.
    public func setUp(host: String, profile: String, scope: Scope) throws(SetupError) -> Outcome {
        if scope == .local {
            // git's own "--local can only be used inside a git repository"
            // says the flag is wrong; what the person needs is where to run it.
            guard try programs.run(["git", "rev-parse", "--git-dir"]).status == 0 else {
                throw SetupError(.repositoryScopeOutsideRepository, category: .usage)
            }
        }
        let key = Self.key(host: host)
        let wanted = Self.entries(profile: profile)
        let current = try helpers(key, scope)
        if current == wanted { return .unchanged }
        // --replace-all leaves one entry (the empty one) however many there
        // were; --add then appends cog-cred's after it. git locks its file
        // for each; a failure between the two leaves only the empty entry
        // (no helper for the host), which the message says.
        try git(["config", scope.flag, "--replace-all", key, ""])
        do {
            try git(["config", scope.flag, "--add", key, wanted[1]])
        } catch {
            throw SetupError(.helpersCleared(host: host, failure: error.message), category: error.category)
        }
        return .written(replaced: current.filter { !$0.isEmpty && $0 != wanted[1] })
    }

    /// The key's values in that file, in order (`-z`: a value may hold a newline).
    func helpers(_ key: String, _ scope: Scope) throws(SetupError) -> [String] {
        let result = try programs.run(["git", "config", scope.flag, "-z", "--get-all", key])
        switch result.status {
        case 0: return result.output.split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
        case 1: return []  // git config: the key is not set
        default: throw SetupError("git config: \(result.firstErrorLine)", category: .configuration)
        }
    }

    func git(_ arguments: [String]) throws(SetupError) {
        let result = try programs.run(["git"] + arguments)
        guard result.status == 0 else { throw SetupError("git config: \(result.firstErrorLine)", category: .configuration) }
    }
}
