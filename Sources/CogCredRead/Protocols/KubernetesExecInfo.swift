/// What kubectl (and every client-go program, the Python client too) tells an
/// exec credential plugin in `KUBERNETES_EXEC_INFO`: the ExecCredential
/// apiVersion the kubeconfig names, which the answer must carry, and whether
/// the plugin may talk to the user.
///
///     {"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1",
///      "spec":{"interactive":false}}
///
/// kubectl 1.20 knows v1beta1 only; v1 arrived in 1.22 and is what a
/// kubeconfig must name from 1.26 on. An answer in another version than the
/// one asked for is rejected ("plugin returned version ..."), so the answer
/// follows the question, as kubelogin's does.
public struct KubernetesExecInfo: Equatable, Sendable {
    public static let variable = "KUBERNETES_EXEC_INFO"

    /// The versions cog-cred answers in; the ExecCredential is the same shape in both.
    public enum APIVersion: String, CaseIterable, Sendable {
        case v1beta1 = "client.authentication.k8s.io/v1beta1"
        case v1 = "client.authentication.k8s.io/v1"
    }

    public var apiVersion: APIVersion
    /// False when kubectl runs with no terminal to ask on (interactiveMode
    /// Never, or IfAvailable without one): nothing may prompt then.
    public var interactive: Bool

    /// Run by hand (no variable): v1, and whoever runs it may be asked.
    public static let standalone = KubernetesExecInfo(apiVersion: .v1, interactive: true)

    public init(apiVersion: APIVersion, interactive: Bool) {
        self.apiVersion = apiVersion
        self.interactive = interactive
    }

    /// The variable's value (nil when unset), or why it cannot be answered.
    public static func parse(_ text: String?) -> Result<KubernetesExecInfo, KubernetesExecInfoError> {
        guard let text else { return .success(.standalone) }
        guard case .object(let members)? = JSONValue.parse(Array(text.utf8)) else {
            return .failure(.notJSON)
        }
        guard case .string(let kind)? = members["kind"], kind == "ExecCredential" else {
            return .failure(.notExecCredential)
        }
        guard case .string(let version)? = members["apiVersion"] else { return .failure(.unsupportedVersion("")) }
        guard let apiVersion = APIVersion(rawValue: version) else { return .failure(.unsupportedVersion(version)) }
        // spec.interactive is always sent by kubectl; a missing one is taken
        // as "no", the safe reading for a plugin that would prompt.
        var interactive = false
        if case .object(let spec)? = members["spec"], case .bool(let value)? = spec["interactive"] {
            interactive = value
        }
        return .success(KubernetesExecInfo(apiVersion: apiVersion, interactive: interactive))
    }
}

/// `KUBERNETES_EXEC_INFO` holds something kubectl would not send.
public enum KubernetesExecInfoError: CogCredFailure, Equatable {
    case notJSON
    case notExecCredential
    case unsupportedVersion(String)

    public var category: FailureCategory { .dataError }

    public var message: String {
        let supported = KubernetesExecInfo.APIVersion.allCases.map { $0.rawValue }.joined(separator: " and ")
        switch self {
        case .notJSON:
            return "KUBERNETES_EXEC_INFO is not a JSON object (kubectl sets it; unset it to run kubectl-credential by hand)"
        case .notExecCredential:
            return "KUBERNETES_EXEC_INFO is not an ExecCredential (its \"kind\" must be \"ExecCredential\")"
        case .unsupportedVersion(let version):
            // The version is the caller's text: one bounded line of it (a
            // newline in it once made this error two lines; found by fuzzing).
            let shown = version.isEmpty ? "no apiVersion" : "apiVersion \(version.oneLine(limit: 100))"
            return "KUBERNETES_EXEC_INFO asks for \(shown); cog-cred answers \(supported): set one of them in the kubeconfig's exec section"
        }
    }
}
