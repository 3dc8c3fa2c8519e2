import ArgumentParser
import CogCredWrite

/// `cog-cred setup-kubectl`: the exec user in a kubeconfig, written with kubectl config.
struct SetupKubectl: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "setup-kubectl",
        abstract: "Write a kubeconfig user that gets its token from cog-cred (writes a kubeconfig).",
        discussion: """
            Writes, through kubectl config set-credentials, the user cog-cred-PROFILE (or \
            --user) whose exec plugin runs "cog-cred kubectl-credential --profile PROFILE" \
            (the profile always named, so $COG_CRED_PROFILE in kubectl's environment changes \
            nothing). Its apiVersion is what the kubectl on PATH wants: \
            client.authentication.k8s.io/v1 with interactiveMode Never from kubectl 1.26, \
            v1beta1 for older ones. With --cluster NAME, the context of that name (or \
            --context) is created or changed to use the cluster and this user, as kubelogin's \
            setup binds a context to its user; its namespace is kept and the current context \
            is not switched. Without --cluster, only the user is written (name the file with \
            --kubeconfig) and you bind it to a context yourself.

            The file is --kubeconfig, else kubectl's own choice ($KUBECONFIG's files, else \
            ~/.kube/config). kubectl writes it: a new file gets mode 0600, an existing one \
            keeps its mode and its other entries. Run again with the same settings, nothing \
            is written and it says so, naming the file; with others, the user and context \
            are replaced, not repeated. No token is written: kubectl runs the plugin each time.

            The profile must be configured, and --cluster must name a cluster in the \
            kubeconfig (78 otherwise). kubectl not installed, or crashing (Debian 12's \
            kubectl 1.20 does in every config set-credentials: write the user by hand, \
            docs/integrations/kubectl.md): 69.
            """)

    static let examples: [String] = [
        "cog-cred setup-kubectl --cluster prod",
        "cog-cred setup-kubectl --cluster prod --profile work --id-token",
        "cog-cred setup-kubectl --kubeconfig ~/.kube/work.yaml --user alice",
        "cog-cred setup-kubectl --cluster prod --context prod-cognito",
    ]

    @Option(help: ArgumentHelp("The kubeconfig cluster to use it for: a context of its name (or --context) gets this user.", valueName: "name"))
    var cluster: String?

    @Option(help: ArgumentHelp("The context to bind to the cluster and user (default: the cluster's name).", valueName: "name"))
    var context: String?

    @Option(help: ArgumentHelp("The kubeconfig to write (default: kubectl's: $KUBECONFIG, else ~/.kube/config).", valueName: "file"),
            completion: .file())
    var kubeconfig: String?

    @Option(help: ArgumentHelp("The kubeconfig user's name (default: cog-cred-PROFILE).", valueName: "name"))
    var user: String?

    @Flag(help: "Hand kubectl the ID token (clusters that authenticate with OIDC ID tokens).")
    var idToken = false

    @OptionGroup var profileOptions: ProfileOptions

    func validate() throws {
        if cluster == nil && kubeconfig == nil {
            throw ValidationError("name the cluster (--cluster NAME) or the file to write (--kubeconfig FILE)")
        }
        if context != nil && cluster == nil { throw ValidationError("--context needs --cluster: a context binds a cluster to the user") }
        for (flag, value) in [("--cluster", cluster), ("--context", context), ("--user", user), ("--kubeconfig", kubeconfig)] {
            // kubectl would take a leading "-" as one of its own flags.
            if let value, value.isEmpty || value.hasPrefix("-") || value.contains("\n") {
                throw ValidationError("invalid \(flag): empty, or starts with '-'")
            }
        }
    }

    func run() throws {
        let wiring = Wiring(profileOptions)
        let name = try wiring.configuredProfileName()
        let request = KubectlUserSetup.Request(profile: name, user: user, cluster: cluster, context: context,
                                               kubeconfig: kubeconfig, idToken: idToken)
        let outcome = try KubectlUserSetup(programs: SpawnedPrograms(), environment: wiring.environment).setUp(request)
        let file = outcome.file ?? kubeconfig ?? "kubectl's kubeconfig"
        let bound = outcome.context.map { " and context '\($0)' uses it for cluster '\(cluster ?? $0)'" } ?? ""
        guard outcome.changed else {
            Output.note("kubectl already has user '\(outcome.user)' (profile '\(name)', \(outcome.apiVersion))\(bound) in \(file); nothing changed.")
            return
        }
        Output.note("Wrote kubectl user '\(outcome.user)' (profile '\(name)', \(outcome.apiVersion)) in \(file).")
        if let context = outcome.context, let cluster {
            let flag = kubeconfig.map { " --kubeconfig \($0)" } ?? ""
            Output.note("Context '\(context)' uses it for cluster '\(cluster)': kubectl\(flag) --context \(context) get pods")
        } else {
            Output.note("Bind it to a context: kubectl config set-context --current --user=\(outcome.user)")
        }
    }
}
