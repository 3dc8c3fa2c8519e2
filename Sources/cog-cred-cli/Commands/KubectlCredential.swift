import ArgumentParser
import CogCredWrite

#if canImport(Glibc)
import Glibc
#endif

/// `cog-cred kubectl-credential`: an ExecCredential for kubectl's exec plugin.
struct KubectlCredential: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "kubectl-credential",
        abstract: "Print an ExecCredential for kubectl's exec plugin.",
        discussion: """
            Answers in the apiVersion kubectl asks for in KUBERNETES_EXEC_INFO: \
            client.authentication.k8s.io/v1beta1 (kubectl 1.11 to 1.25; the only one kubectl \
            1.20 knows) or client.authentication.k8s.io/v1 (kubectl 1.22 and later); v1 when \
            the variable is unset. With "interactive": false in it, nothing prompts. \
            docs/integrations/kubectl.md has both kubeconfig forms.
            """)
    static let examples = [
        "cog-cred kubectl-credential --profile work",
        "cog-cred kubectl-credential --id-token",
    ]

    @OptionGroup var profileOptions: ProfileOptions
    @OptionGroup var freshness: FreshnessOptions

    @Flag(help: "Use the ID token (clusters that authenticate with OIDC ID tokens).")
    var idToken = false

    func run() throws {
        let info = try KubernetesExecInfo.parse(getenv(KubernetesExecInfo.variable).map { String(cString: $0) }).get()
        // kubectl says whether anyone is there to answer the keyring's prompt.
        let token = try Wiring(profileOptions, promptingToUnlock: info.interactive).tokenManager().currentToken(idToken ? .id : .access, policy: freshness.policy)
        Output.data(TokenOutput.execCredential(token, apiVersion: info.apiVersion))
    }
}
