// `setup-kubectl`: the exec user of docs/integrations/kubectl.md in a
// kubeconfig, written by kubectl itself (`kubectl config set-credentials`,
// `set-context`): its own file format, its own choice of file among
// $KUBECONFIG's, and its own mode (0600 for a file it creates; an existing
// file keeps its mode).

public struct KubectlUserSetup: Sendable {
    public struct Request: Sendable, Equatable {
        public var profile: String
        /// The kubeconfig user's name.
        public var user: String
        /// With a cluster, a context binds it to the user.
        public var cluster: String?
        public var context: String?
        /// nil: kubectl's own rule ($KUBECONFIG, else ~/.kube/config).
        public var kubeconfig: String?
        public var idToken: Bool

        public init(profile: String, user: String? = nil, cluster: String? = nil, context: String? = nil,
                    kubeconfig: String? = nil, idToken: Bool = false) {
            self.profile = profile
            self.user = user ?? Self.defaultUser(profile: profile)
            self.cluster = cluster
            self.context = cluster.map { context ?? $0 }
            self.kubeconfig = kubeconfig
            self.idToken = idToken
        }

        /// One user per profile: setting up another profile adds another user.
        public static func defaultUser(profile: String) -> String { "cog-cred-\(profile)" }
    }

    public struct Outcome: Sendable, Equatable {
        public let user: String
        public let apiVersion: String
        /// The context now using the user, when a cluster was named.
        public let context: String?
        /// false: the kubeconfig already had the user and context exactly
        /// so, and nothing was written.
        public var changed = true
        /// The kubeconfig holding the user (kubectl's choice among
        /// $KUBECONFIG's files); nil when kubectl would not say.
        public var file: String?
    }

    static let v1 = "client.authentication.k8s.io/v1"
    static let v1beta1 = "client.authentication.k8s.io/v1beta1"

    let programs: any ProgramRunning
    /// For the kubeconfig kubectl uses without --kubeconfig: $KUBECONFIG, $HOME.
    let environment: [String: String]

    public init(programs: any ProgramRunning, environment: [String: String] = [:]) {
        self.programs = programs
        self.environment = environment
    }

    /// The exec apiVersion for a kubectl minor version: v1 (with
    /// interactiveMode, which v1 requires) from kubectl 1.26, whose
    /// set-credentials has --exec-interactive-mode; v1beta1 before (1.11 to
    /// 1.25, Debian 12's 1.20 knows nothing else). kubectl-credential answers
    /// in whichever kubectl asks for.
    static func apiVersion(kubectlMinor minor: Int?) -> String {
        guard let minor else { return v1 }
        return minor >= 26 ? v1 : v1beta1
    }

    /// The kubectl command lines, in order; kubectl replaces a user or
    /// context of the same name, so a second run leaves one of each.
    static func commands(_ request: Request, apiVersion: String) -> [[String]] {
        let file = request.kubeconfig.map { ["--kubeconfig", $0] } ?? []
        var arguments = ["kubectl-credential", "--profile", request.profile]
        if request.idToken { arguments.append("--id-token") }
        var credentials = file + ["config", "set-credentials", request.user, "--exec-command=cog-cred",
                                  "--exec-api-version=\(apiVersion)"] + arguments.map { "--exec-arg=\($0)" }
        // Never: kubectl's "interactive": false, so a locked keyring or an
        // expired session fails at once with the reason instead of a prompt
        // kubectl cannot show (kubectl-credential).
        if apiVersion == v1 { credentials.append("--exec-interactive-mode=Never") }
        var commands = [credentials]
        if let cluster = request.cluster, let context = request.context {
            commands.append(file + ["config", "set-context", context, "--cluster=\(cluster)", "--user=\(request.user)"])
        }
        return commands
    }

    public func setUp(_ request: Request) throws(SetupError) -> Outcome {
        let file = request.kubeconfig.map { ["--kubeconfig", $0] } ?? []
        let apiVersion = Self.apiVersion(kubectlMinor: try kubectlMinor())
        if let cluster = request.cluster {
            // A context naming a cluster that is not there would fail only at
            // kubectl's next use, far from the typo.
            let listed = try kubectl(file + ["config", "get-clusters"])
            let names = listed.output.split(separator: "\n").dropFirst().map { String($0) }
            guard names.contains(cluster) else {
                let `where` = request.kubeconfig ?? "the kubeconfig"
                throw SetupError("no cluster '\(cluster)' in \(`where`) (kubectl config get-clusters lists them)", category: .configuration)
            }
        }
        var outcome = Outcome(user: request.user, apiVersion: apiVersion, context: request.context)
        // kubectl rewrites its file on every set-credentials, so a second
        // run is told apart by what kubectl reads, not by the file.
        if try isSetUp(request, apiVersion: apiVersion) {
            outcome.changed = false
        } else {
            for command in Self.commands(request, apiVersion: apiVersion) { _ = try kubectl(command) }
        }
        outcome.file = try fileHolding(request.user, request)
        return outcome
    }

    /// The exec user's settings as `commands` writes them, read back as
    /// kubectl's `config view -o json` shows them.
    static func execSettings(_ request: Request, apiVersion: String) -> [String: JSONValue] {
        var arguments = ["kubectl-credential", "--profile", request.profile]
        if request.idToken { arguments.append("--id-token") }
        var exec: [String: JSONValue] = [
            "command": .string("cog-cred"), "apiVersion": .string(apiVersion), "args": .array(arguments.map { .string($0) }),
        ]
        if apiVersion == v1 { exec["interactiveMode"] = .string("Never") }
        return exec
    }

    /// Whether the kubeconfig kubectl reads already has the user (the
    /// settings `commands` writes; others, such as env, are kubectl's to
    /// keep either way) and, with a cluster, the context binding it. A
    /// kubeconfig kubectl cannot show is not: the write then says why.
    func isSetUp(_ request: Request, apiVersion: String) throws(SetupError) -> Bool {
        let file = request.kubeconfig.map { ["--kubeconfig", $0] } ?? []
        let result = try programs.run(["kubectl"] + file + ["config", "view", "-o", "json"])
        guard result.status == 0, let view = JSONValue.parse(Array(result.output.utf8)) else { return false }
        let named = { (list: String, name: String) in view[list]?.arrayValue?.first { $0["name"]?.stringValue == name } }
        guard let exec = named("users", request.user)?["user"]?["exec"] else { return false }
        for (key, value) in Self.execSettings(request, apiVersion: apiVersion) where exec[key] != value { return false }
        guard let cluster = request.cluster, let context = request.context else { return true }
        let bound = named("contexts", context)?["context"]
        return bound?["cluster"]?.stringValue == cluster && bound?["user"]?.stringValue == request.user
    }

    /// The files kubectl reads, in its order: --kubeconfig; else
    /// $KUBECONFIG's (":"-separated); else ~/.kube/config.
    func files(_ request: Request) -> [String] {
        if let kubeconfig = request.kubeconfig { return [kubeconfig] }
        if let variable = environment["KUBECONFIG"] {
            var seen: [String] = []
            for path in variable.split(separator: ":").map(String.init) where !seen.contains(path) { seen.append(path) }
            if !seen.isEmpty { return seen }
        }
        return environment["HOME"].map { [$0 + "/.kube/config"] } ?? []
    }

    /// The file that holds the user: kubectl writes a user where it is
    /// already defined (the first of its files that has it), so that file;
    /// with one file, that one.
    func fileHolding(_ user: String, _ request: Request) throws(SetupError) -> String? {
        let candidates = files(request)
        if candidates.count <= 1 { return candidates.first }
        for candidate in candidates {
            let result = try programs.run(["kubectl", "--kubeconfig", candidate, "config", "view", "-o", "json"])
            guard result.status == 0, let view = JSONValue.parse(Array(result.output.utf8)) else { continue }
            if view["users"]?.arrayValue?.contains(where: { $0["name"]?.stringValue == user }) == true { return candidate }
        }
        return nil
    }

    /// kubectl's client minor version, nil when it does not say.
    func kubectlMinor() throws(SetupError) -> Int? {
        let result = try programs.run(["kubectl", "version", "--client", "-o", "json"])
        guard result.status == 0, let json = JSONValue.parse(Array(result.output.utf8)),
            let minor = json["clientVersion"]?["minor"]?.stringValue
        else { return nil }
        return Int(minor.prefix { $0.isNumber })
    }

    func kubectl(_ arguments: [String]) throws(SetupError) -> ProgramResult {
        let result = try programs.run(["kubectl"] + arguments)
        if result.errorOutput.hasPrefix("panic:") {
            // Debian 12's kubectl 1.20 (kubernetes-client) crashes in every
            // `config set-credentials`, whatever its flags: no use to retry.
            throw SetupError("kubectl crashed (\(result.firstErrorLine)); with Debian 12's kubectl 1.20, which always does in config set-credentials, write the user by hand (docs/integrations/kubectl.md)", category: .programUnavailable)
        }
        guard result.status == 0 else { throw SetupError("kubectl: \(result.firstErrorLine)", category: .configuration) }
        return result
    }
}
