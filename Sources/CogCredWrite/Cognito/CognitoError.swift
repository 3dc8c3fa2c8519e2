/// A Cognito call that did not succeed.
///
/// Keeps Cognito's own error code (`__type`, without any `prefix#`) and
/// message, so that what the service said is never lost behind our wording.
public enum CognitoError: Error, Sendable, Equatable {
    /// Cognito answered with a JSON error.
    case service(code: String, message: String, httpStatus: Int)
    /// No complete answer: connection refused, timeout, TLS failure.
    case transport(TransportError)
    /// An answer that is not what Cognito sends: HTML, truncated or empty JSON.
    case badResponse(httpStatus: Int, detail: String)
    /// The command's overall time budget ran out before the request was sent.
    case deadlineExceeded
    /// SECRET_HASH could not be had from the agent that keeps the client
    /// secret (AgentClient.secretHash): nothing was sent to Cognito.
    case noSecretHash(AgentFailure)

    /// Cognito's error code, when it sent one.
    public var code: String? {
        if case .service(let code, _, _) = self { return code }
        return nil
    }

    /// A 4xx answer that is not a Cognito JSON error: whatever answered is
    /// not Cognito (a web server's 404 page, a proxy's 403), so the
    /// profile's endpoint is wrong, and trying again will not help.
    public var isNotCognito: Bool {
        if case .badResponse(let status, _) = self { return (400..<500).contains(status) }
        return false
    }

    /// Worth trying again later: the fault is not in what was asked.
    public var isTemporary: Bool {
        switch self {
        case .badResponse where isNotCognito: return false
        case .transport(let failure): return failure.kind != .proxyRefused && failure.kind != .proxySetting
        case .badResponse, .deadlineExceeded: return true
        case .service(_, _, let status):
            return status >= 500 || reason == .throttled || reason == .serviceFault
        case .noSecretHash: return false
        }
    }

    /// The endpoint's certificate could not be verified: a private CA, or
    /// someone in between; not a passing fault.
    public var isUntrustedCertificate: Bool {
        if case .transport(let failure) = self { return failure.kind == .tls }
        return false
    }

    /// The service does not offer the action: an emulator's HTML 5xx page for
    /// an unknown action, or an explicit unknown-operation error. Never retried.
    public var isUnsupportedOperation: Bool {
        switch self {
        case .badResponse(let status, _): return status >= 500
        case .service: return reason == .unsupportedOperation
        case .transport, .deadlineExceeded, .noSecretHash: return false
        }
    }

    /// Codes worth trying again: throttling, and a fault on Cognito's side (`Reason.serviceFault`).
    static let temporaryCodes: Set<String> = throttlingCodes.union([
        "InternalErrorException", "ServiceUnavailableException", "RequestTimeoutException",
    ])

    /// Cognito turned the request away before acting on it: safe to send again later.
    static let throttlingCodes: Set<String> = ["TooManyRequestsException", "LimitExceededException", "ThrottlingException"]

    static let untrustedCertificate = "the TLS certificate of the Cognito endpoint could not be verified"

    /// What went wrong, in words for a person, without any wording that
    /// depends on which command was running (the callers add that).
    public var summary: String {
        switch self {
        case .service(let code, let message, _):
            return message.isEmpty ? code : "\(code): \(message.oneLine())"
        case .transport(let error):
            // The URL and the whole wait, once retries gave up (curl's
            // detail times one attempt only).
            let at = error.gaveUp.map { " at \($0.url.oneLine(limit: 200))" } ?? ""
            let waited = error.gaveUp.map { "; \($0.wait)" } ?? ""
            let detail = error.detail.oneLine() + waited
            // Through a proxy, the proxy is named too: a person may not know one is in the way.
            let via = error.proxy.map { " through \($0.named)" } ?? ""
            switch error.kind {
            case .timedOut: return "Cognito\(at) did not answer in time\(via) (\(detail))"
            case .tls: return "\(CognitoError.untrustedCertificate)\(at) (\(detail))"
            case .connectionFailed, .other: return "cannot reach Cognito\(at)\(via) (\(detail))"
            case .proxyUnreachable:
                return "cannot reach \(error.proxy?.named ?? "the proxy")\(at.isEmpty ? "" : " on the way to Cognito\(at)") (\(detail))"
            case .proxyRefused:
                let source = error.proxy?.source ?? "the environment"
                let refusal = error.proxy?.givesCredentials == true
                    ? "refused the user name and password \(source) gives"
                    : "asks for a user name and password, and \(source) gives none"
                return "\(error.proxy?.named ?? "the proxy") \(refusal) (\(error.detail.oneLine(limit: 120)))"
            case .proxySetting: return error.detail.oneLine()
            }
        case .badResponse(let status, let detail):
            return "Cognito sent an answer that cannot be read (HTTP \(status), \(detail.oneLine(limit: 120)))"
        case .deadlineExceeded:
            return "the command ran out of time before Cognito answered"
        case .noSecretHash(let failure):
            return failure.message
        }
    }
}
