/// A request the front binary answers itself: the command lines that hand
/// out a stored token, and through an agent the session's other commands
/// (`whoami`, `status`, `refresh`, `sign-out`: the agent does the work), so
/// that a machine served by an agent needs the `cog-cred` binary alone.
/// Parsed strictly: anything this does not recognise exactly (help, a
/// typo, an invalid value, a write) is nil and goes to cog-cred-cli, which
/// owns the command line and says what is wrong.
public enum ReadRequest: Equatable, Sendable {
    /// `token [--id-token] [--format F | --json]`, `get-header [--id-token]`, `kubectl-credential [--id-token]`.
    case token(TokenRequest)
    /// `exec [options] -- COMMAND...`; `choice` is the token COG_CRED_AUTHORIZATION carries.
    case exec(profile: String?, minTTL: Int64?, choice: TokenChoice, command: [String])
    /// `git-credential [--profile P] get` (and `store`, `erase`,
    /// `capability`), also run as `git-credential-cog-cred get`. An erase
    /// that forgets a stored token is cog-cred-cli's, but through an agent.
    case git(GitCredential.Action, profile: String?)
    /// `docker-credential get`, also run as `docker-credential-cog-cred get`.
    case dockerGet
    /// `docker-credential list`.
    case dockerList
    /// `aws-credentials [--profile P] [--min-ttl S]`: stored identity-pool
    /// credentials with enough life left, for credential_process.
    case awsCredentials(profile: String?, minTTL: Int64?)
    /// `whoami [--json]`: through an agent only, as are the three below.
    case whoami(profile: String?, json: Bool)
    /// `status [--json] [--offline]` (`--verify` fetches the pool's keys: cog-cred-cli's).
    case status(profile: String?, json: Bool, offline: Bool)
    /// `refresh`.
    case refresh(profile: String?)
    /// `sign-out [--global | --local] [--yes]`, also `logout`; `confirmed`:
    /// --yes, the answer to the question --global asks on a terminal.
    case signOut(profile: String?, scope: SignOutScope, confirmed: Bool)

    /// Answered here only through an agent: the agent does the work these
    /// need (a refresh, a revocation), which cog-cred-cli does without one.
    public var needsAgent: Bool {
        switch self {
        case .whoami, .status, .refresh, .signOut: return true
        case .token, .exec, .git, .dockerGet, .dockerList, .awsCredentials: return false
        }
    }

    public struct TokenRequest: Equatable, Sendable {
        public enum Shape: Equatable, Sendable {
            case token(TokenOutput.Format)
            case header
            /// In the apiVersion KUBERNETES_EXEC_INFO names: nil until it is read.
            case execCredential(KubernetesExecInfo.APIVersion?)
        }

        public var shape: Shape
        public var choice: TokenChoice
        public var profile: String?
        public var minTTL: Int64?
    }

    // The grammar both binaries parse by: cog-cred-cli's ArgumentParser
    // commands take their bounds and names from here too.

    /// `--min-ttl` of the token commands (`token`, `get-header`,
    /// `kubectl-credential`, `exec`): up to a day, a token's longest life.
    public static let tokenMinTTL: ClosedRange<Int64> = 0...86_400
    /// `--min-ttl` of `aws-credentials`: up to 12 hours, the longest
    /// credentials STS issues.
    public static let awsMinTTL: ClosedRange<Int64> = 0...43_200

    /// The names git and docker run their helpers by, and the subcommand
    /// each stands for.
    public static let helperNames = [
        (name: "git-credential-cog-cred", command: "git-credential"),
        (name: "docker-credential-cog-cred", command: "docker-credential"),
    ]

    /// The words to parse, from the arguments as the process got them
    /// (argv[0] included): run by a helper name, its subcommand first;
    /// `-pP` split and a `--profile P` given anywhere before `--` moved
    /// after the command's words (`CommandLineWords.normalized`, which
    /// `nested` is passed to).
    public static func commandWords(_ arguments: [String], nested: (_ command: [String], _ word: String) -> Bool = { _, _ in false }) -> [String] {
        var words = Array(arguments.dropFirst())
        let name = arguments.first.map(baseName)
        if let helper = helperNames.first(where: { $0.name == name }) { words.insert(helper.command, at: 0) }
        return CommandLineWords.normalized(words, nested: nested)
    }

    /// `--min-ttl`'s text as seconds, nil unless a whole number in `range`.
    public static func seconds(_ text: String, in range: ClosedRange<Int64>) -> Int64? {
        guard let seconds = Int64(text), range.contains(seconds) else { return nil }
        return seconds
    }

    /// True when `arguments` name a command that `parse` may take and the
    /// Secret Service may answer: a cheap first look, so that it can be
    /// asked early.
    public static func mayBeRead(_ arguments: [String]) -> Bool {
        // Arrays, not sets: this runs first in every process, where each new
        // generic type costs its metadata's set-up.
        let commands = [
            "token", "get-header", "kubectl-credential", "exec", "git-credential", "docker-credential", "aws-credentials",
        ]
        guard let first = arguments.first else { return false }
        let name = baseName(first)
        if helperNames.contains(where: { $0.name == name }) { return true }
        guard arguments.count > 1 else { return false }
        if commands.contains(arguments[1]) { return true }
        // `--profile P token`: only then is the command line rearranged here.
        let words = CommandLineWords.normalized(Array(arguments.dropFirst()))
        return words.first.map(commands.contains) ?? false
    }

    /// `arguments` as the process got them, argv[0] included.
    public static func parse(_ arguments: [String]) -> ReadRequest? {
        var remaining = ArraySlice(commandWords(arguments))
        guard let command = remaining.popFirst() else { return nil }
        var options = Options(remaining)
        switch command {
        case "token", "get-header", "kubectl-credential":
            // --no-prompt: the front never prompts anyway (a locked keyring is handed over).
            guard let profile = options.profile(), let minTTL = options.minTTL(), options.flag("--no-prompt") != nil,
                let idToken = options.flag("--id-token")
            else { return nil }
            var request = TokenRequest(shape: .header, choice: idToken ? .id : .access, profile: profile, minTTL: minTTL)
            if command == "kubectl-credential" { request.shape = .execCredential(nil) }
            if command == "token" {
                guard let format = options.value("--format"), let json = options.flag("--json") else { return nil }
                guard let shape = TokenOutput.Format(rawValue: format ?? (json ? "json" : "bare")) else { return nil }
                if json && shape != .json { return nil }  // cog-cred-cli says why
                request.shape = .token(shape)
            }
            return options.isEmpty ? .token(request) : nil
        case "exec":
            guard let profile = options.profile(), let minTTL = options.minTTL(), options.flag("--no-prompt") != nil,
                let idToken = options.flag("--id-token"), let command = options.afterTerminator(), !command.isEmpty
            else { return nil }
            return options.isEmpty ? .exec(profile: profile, minTTL: minTTL, choice: idToken ? .id : .access, command: command) : nil
        case "aws-credentials":
            guard let profile = options.profile(), let minTTL = options.minTTL(in: awsMinTTL), options.flag("--no-prompt") != nil,
                options.isEmpty
            else { return nil }
            return .awsCredentials(profile: profile, minTTL: minTTL)
        case "git-credential":
            guard let profile = options.profile(), let action = options.positional().flatMap(GitCredential.Action.init(rawValue:)),
                options.isEmpty
            else { return nil }
            return .git(action, profile: profile)
        case "docker-credential":
            switch options.positional().flatMap(DockerCredential.Action.init(rawValue:)) {
            case .get where options.isEmpty: return .dockerGet
            case .list where options.isEmpty: return .dockerList
            default: return nil
            }
        case "whoami":
            guard let profile = options.profile(), options.flag("--no-prompt") != nil, let json = options.flag("--json"), options.isEmpty
            else { return nil }
            return .whoami(profile: profile, json: json)
        case "status":
            guard let profile = options.profile(), options.flag("--no-prompt") != nil, let json = options.flag("--json"),
                let offline = options.flag("--offline"), options.isEmpty
            else { return nil }
            return .status(profile: profile, json: json, offline: offline)
        case "refresh":
            guard let profile = options.profile(), options.flag("--no-prompt") != nil, options.isEmpty else { return nil }
            return .refresh(profile: profile)
        case "sign-out", "logout":
            guard let profile = options.profile(), options.flag("--no-prompt") != nil, let global = options.flag("--global"),
                let local = options.flag("--local"), !(global && local), let yes = options.flag("--yes"), options.isEmpty
            else { return nil }
            return .signOut(profile: profile, scope: local ? .local : global ? .global : .revoke, confirmed: yes)
        default:
            return nil
        }
    }

    static func baseName(_ path: String) -> String {
        // By bytes, not Characters (see BusAddress.isLocalOnly).
        path.utf8.split(separator: UInt8(ascii: "/")).last.map { String(Substring($0)) } ?? path
    }
}

/// The words after a subcommand, taken out one option at a time. Each taker
/// returns nil when the words are not exactly what cog-cred-cli accepts (a
/// repeated option, a missing or invalid value), and the request is then
/// handed over whole.
private struct Options {
    var words: [String]

    init(_ words: ArraySlice<String>) {
        self.words = Array(words)
    }

    /// Nothing left that was not taken.
    var isEmpty: Bool { words.isEmpty }

    /// `--name VALUE` or `--name=VALUE`, at most once, before any `--`:
    /// `.some(nil)` when absent.
    mutating func value(_ name: String) -> String?? {
        var found: String? = nil
        var index = 0
        while index < words.count, words[index] != "--" {
            let word = words[index]
            if word == name, index + 1 < words.count, !words[index + 1].hasPrefix("-") || Int64(words[index + 1]) != nil {
                if found != nil { return nil }
                found = words[index + 1]
                words.removeSubrange(index...(index + 1))
            } else if word.hasPrefix(name + "=") {
                if found != nil { return nil }
                found = String(word.dropFirst(name.count + 1))
                words.remove(at: index)
            } else if word == name {
                return nil  // no value
            } else {
                index += 1
            }
        }
        return .some(found)
    }

    /// A flag, at most once: nil when repeated.
    mutating func flag(_ name: String) -> Bool? {
        let end = words.firstIndex(of: "--") ?? words.endIndex
        let count = words[..<end].filter { $0 == name }.count
        guard count <= 1 else { return nil }
        // Only before `--`: exec's command keeps its own words.
        if let index = words[..<end].firstIndex(of: name) { words.remove(at: index) }
        return count == 1
    }

    /// `--profile NAME`, checked as cog-cred-cli checks it.
    mutating func profile() -> String?? {
        guard let long = value("--profile"), let short = value("-p") else { return nil }
        if long != nil && short != nil { return nil }  // given twice
        let name = long ?? short
        if let name, ProfileValidation.profileNameProblem(name) != nil { return nil }
        return .some(name)
    }

    /// `--min-ttl SECONDS`, in `range`.
    mutating func minTTL(in range: ClosedRange<Int64> = ReadRequest.tokenMinTTL) -> Int64?? {
        guard let text = value("--min-ttl") else { return nil }
        guard let text else { return .some(nil) }
        guard let seconds = ReadRequest.seconds(text, in: range) else { return nil }
        return .some(seconds)
    }

    /// The one positional word (an action such as `get`), if that is all that is left.
    mutating func positional() -> String? {
        guard words.count >= 1, !words[0].hasPrefix("-") else { return nil }
        return words.removeFirst()
    }

    /// Everything after `--`, taken out.
    mutating func afterTerminator() -> [String]? {
        guard let terminator = words.firstIndex(of: "--") else { return nil }
        defer { words.removeSubrange(terminator...) }
        return Array(words[(terminator + 1)...])
    }
}
