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
    }

    static let v1 = "client.authentication.k8s.io/v1"
    static let v1beta1 = "client.authentication.k8s.io/v1beta1"

    let programs: any ProgramRunning

    public init(programs: any ProgramRunning) {
        self.programs = programs
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
        for command in Self.commands(request, apiVersion: apiVersion) { _ = try kubectl(command) }
        return Outcome(user: request.user, apiVersion: apiVersion, context: request.context)
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
