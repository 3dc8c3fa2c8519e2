import CogCredWrite
import Dispatch
import Synchronization

/// What a person sees of the requests a command makes: nothing while they
/// are quick; one line once a call, its retries included, has waited about
/// two seconds (the endpoint, the action, the attempt then in flight), and
/// one for each retry it makes after that; a
/// failure's error then names the URL and the whole wait (CognitoError.summary
/// when no answer came, `waited(adding:)` when the answers were refusals
/// to try later). With the debug trace on, a line for each exchange as
/// well. Never a header, a body or a query: nothing secret.
final class NetworkReport: TransportObserver {
    static let shared = NetworkReport()
    /// Seconds a call may take before it is mentioned.
    static let patience = 2.0

    private struct State {
        /// When the call's first attempt started.
        var callStart = ContinuousClock.now
        /// The call has been mentioned: its retries are said as they start.
        var mentioned = false
        /// Bumped by every start and end, so a pending mention of an
        /// exchange that ended since stays silent.
        var generation = 0
        /// The last call: where, and how long all its attempts took.
        var last: TransportError.GaveUp?
    }

    private let state = Mutex(State())

    func willSend(_ request: HTTPRequest) {
        let now = ContinuousClock.now
        let (generation, mentioned, delay) = state.withLock { s in
            if request.attempt == 1 { (s.callStart, s.mentioned) = (now, false) }
            s.generation += 1
            s.last = TransportError.GaveUp(url: NetworkReport.url(request), attempts: request.attempt, seconds: seconds(since: s.callStart))
            return (s.generation, s.mentioned, max(0, NetworkReport.patience - seconds(since: s.callStart)))
        }
        // HTTPS names the certificates it trusts, and what chose them.
        let trust = request.url.lowercased().hasPrefix("https://") ? ", trusting \(request.caBundle.described)" : ""
        DebugTrace.line("\(request.method) \(NetworkReport.place(request)) (attempt \(request.attempt)), \(request.route.described)\(trust)")
        if mentioned {
            // A retry of a call already said to be slow: said at once, so a
            // long wait never runs silent after its first line.
            Output.note("cog-cred: still waiting for \(NetworkReport.describe(request))")
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [self] in
            state.withLock { s in
                guard s.generation == generation, !s.mentioned else { return }
                s.mentioned = true
                // Said under the lock, so a retry's line cannot come first.
                Output.note("cog-cred: still waiting for \(NetworkReport.describe(request))")
            }
        }
    }

    func didFinish(_ request: HTTPRequest, _ outcome: Result<HTTPResponse, TransportError>, seconds took: Double) {
        state.withLock { s in
            s.generation += 1
            s.last?.seconds = seconds(since: s.callStart)
        }
        let result = switch outcome {
        case .success(let response): "HTTP \(response.status)"
        case .failure(let error): "no answer (\(error.detail.oneLine(limit: 160)))"
        }
        DebugTrace.line("\(request.method) \(NetworkReport.place(request)) (attempt \(request.attempt)): \(result) in \(DebugTrace.milliseconds(took))")
    }

    /// A temporary failure's line, with where and how long the last call
    /// waited when it was tried again or was slow (a 5xx or throttling
    /// answered each time), unless the line names its URL already.
    func waited(adding line: String) -> String {
        guard let last = state.withLock({ $0.last }), last.attempts > 1 || last.seconds >= NetworkReport.patience,
            !line.contains(last.url)
        else { return line }
        return "\(line) (\(last.url): \(last.wait))"
    }

    /// "https://cognito-idp.../ InitiateAuth": the URL without any query,
    /// and the action when the URL does not say it.
    static func place(_ request: HTTPRequest) -> String {
        request.action.map { "\(url(request)) \($0)" } ?? url(request)
    }

    /// "https://cognito-idp.../ (InitiateAuth, attempt 2)", for the person waiting.
    static func describe(_ request: HTTPRequest) -> String {
        "\(url(request)) (\(request.action.map { "\($0), " } ?? "")attempt \(request.attempt))"
    }

    /// The URL as far as its path, without credentials: userinfo, a query
    /// or a fragment could carry something secret.
    static func url(_ request: HTTPRequest) -> String {
        LibcurlURL.shown(request.url, query: false).oneLine(limit: 200)
    }
}
