#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One HTTP exchange. Small enough to fake in tests; the real one is
/// `CurlTransport`.
public protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse
}

public struct HTTPRequest: Sendable {
    /// "POST" (Cognito actions) or "GET" (the JWKS).
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: Data
    /// Seconds allowed to connect.
    public var connectTimeout: Double
    /// Seconds allowed for the whole exchange.
    public var totalTimeout: Double
    /// The CA certificates to trust, and what chose them.
    public var caBundle: CABundle
    /// Plain `http://` may be used (Endpoint.Resolved.allowsCleartext);
    /// otherwise the transport speaks HTTPS only.
    public var allowsCleartext: Bool
    /// What is asked, in the service's words (a Cognito action such as
    /// "InitiateAuth"), for the person waiting and the debug trace; nil
    /// where the URL says it (the token endpoint, the JWKS).
    public var action: String?
    /// 1 for the first try, 2 for the first retry...
    public var attempt: Int
    /// Sending it twice can do nothing the first did not (RetryingPost's
    /// rule). One that must not go out twice (a code, a challenge's
    /// answer) rides only a connection idle under a second, and is never
    /// re-sent by the HTTP library itself (CurlTransport).
    public var repeatable: Bool
    /// Straight to the host or through a proxy (ProxySettings decides).
    public var route: ProxyRoute

    public init(
        method: String = "POST", url: String, headers: [(String, String)], body: Data, connectTimeout: Double, totalTimeout: Double,
        caBundle: CABundle = .system, allowsCleartext: Bool = false, action: String? = nil, attempt: Int = 1, repeatable: Bool = false,
        route: ProxyRoute = .direct(exempted: nil)
    ) {
        self.route = route
        self.repeatable = repeatable
        self.action = action
        self.attempt = attempt
        self.caBundle = caBundle
        self.allowsCleartext = allowsCleartext
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    public var body: Data

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// The request never got a complete HTTP answer.
public struct TransportError: Error, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case connectionFailed
        case timedOut
        case tls
        case other
        /// The proxy itself could not be reached (`proxy` says which).
        case proxyUnreachable
        /// The proxy wants credentials, or refused those given (HTTP 407,
        /// or a SOCKS server rejecting the user): not worth repeating.
        case proxyRefused
        /// A proxy variable libcurl could not use; nothing was sent.
        case proxySetting
    }

    public var kind: Kind
    /// The HTTP library's own description, e.g. "Failed to connect to 127.0.0.1 port 9 ...".
    public var detail: String
    /// True when the request cannot have reached the server: the HTTP
    /// library never got to send it (CurlTransport says how it knows).
    /// Then even a request that is not idempotent may be sent again.
    public var nothingSent: Bool
    /// Where and for how long the request was tried, all attempts together,
    /// once RetryingPost gave up: what the person waited for, which one
    /// attempt's own time would understate.
    public var gaveUp: GaveUp?
    /// The proxy the request went through, when one was in the way.
    public var proxy: Proxy?
    /// A TLS failure's: the CA certificates the server's were checked against.
    public var caBundle: CABundle?

    public struct GaveUp: Sendable, Equatable {
        public var url: String
        public var attempts: Int
        public var seconds: Double

        public init(url: String, attempts: Int, seconds: Double) {
            (self.url, self.attempts, self.seconds) = (url, attempts, seconds)
        }

        /// "4 attempts over 3.9 s": the whole wait, as errors say it.
        public var wait: String { "\(attempts) \(attempts == 1 ? "attempt" : "attempts") over \((seconds * 10).rounded() / 10) s" }
    }

    public init(_ kind: Kind, _ detail: String, nothingSent: Bool = false, proxy: Proxy? = nil) {
        self.kind = kind
        self.detail = detail
        self.nothingSent = nothingSent
        self.proxy = proxy
    }
}

/// Seconds since `start` on the monotonic clock.
public func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// One request (a POST, or the JWKS's GET) with the retry rules every
/// client here shares: a refused connection is always sent again (nothing
/// reached the server), a 5xx or a lost answer only when the request may be
/// repeated (`repeatable`), all within the command's deadline (or a shorter
/// `RequestBudget`). What the person waiting sees of it is the transport's
/// observer's (ObservedTransport).
struct RetryingPost: Sendable {
    let connection: Connection
    /// The endpoint may be plain `http://` (Endpoint.Resolved.allowsCleartext).
    let allowsCleartext: Bool

    /// The first answer below 500, or the last failure.
    func send(_ url: String, method: String = "POST", headers: [(String, String)], body: Data, repeatable: Bool) throws(CognitoError)
        -> HTTPResponse
    {
        try send(url, method: method, headers: headers, body: body, repeatable: repeatable, retryIf: { RetryingPost.retries($0, repeatable: repeatable) }) {
            response throws(CognitoError) in
            guard response.status < 500 else { throw .badResponse(httpStatus: response.status, detail: "a server error") }
            return response
        }
    }

    /// What `read` makes of the first answer it accepts; what it throws (or
    /// the transport's failure) is tried again while `retryIf` says so.
    func send<Answer>(
        _ url: String, method: String = "POST", action: String? = nil, headers: [(String, String)], body: Data, repeatable: Bool,
        retryIf: (CognitoError) -> Bool,
        read: (HTTPResponse) throws(CognitoError) -> Answer
    ) throws(CognitoError) -> Answer {
        let (transport, timeouts, deadline, retryPolicy) = (connection.transport, connection.timeouts, connection.deadline, connection.retryPolicy)
        let route: ProxyRoute
        do { route = try connection.proxies.route(for: url) } catch {
            throw .transport(TransportError(.proxySetting, "invalid \(error.variable): \(error.problem)", nothingSent: true))
        }
        var attempt = 0
        let start = ContinuousClock.now
        while true {
            let remaining = RequestBudget.remaining(deadline)
            guard remaining > 0.05 else { throw .deadlineExceeded }
            let request = HTTPRequest(
                method: method, url: url, headers: headers, body: body, connectTimeout: min(timeouts.connect, remaining),
                totalTimeout: min(timeouts.request, remaining), caBundle: connection.caBundle, allowsCleartext: allowsCleartext,
                action: action, attempt: attempt + 1, repeatable: repeatable, route: route)
            let failure: CognitoError
            do throws(CognitoError) {
                let response: HTTPResponse
                do { response = try transport.send(request) } catch {
                    var error = error
                    if error.kind == .tls { error.caBundle = request.caBundle }
                    throw .transport(error)
                }
                return try read(response)
            } catch {
                failure = error
            }
            attempt += 1
            let pause = retryPolicy.pause(afterAttempt: attempt)
            guard attempt < retryPolicy.maxAttempts, retryIf(failure), RequestBudget.remaining(deadline) > pause + 0.1 else {
                guard case .transport(var lost) = failure else { throw failure }
                lost.gaveUp = TransportError.GaveUp(url: LibcurlURL.shown(url, query: false), attempts: attempt, seconds: seconds(since: start))
                throw .transport(lost)
            }
            retryPolicy.sleep(pause)
        }
    }

    static func retries(_ error: CognitoError, repeatable: Bool) -> Bool {
        switch error {
        case .transport(let failure):
            switch failure.kind {
            case .tls, .proxyRefused, .proxySetting: return false
            case .connectionFailed where failure.nothingSent, .proxyUnreachable where failure.nothingSent: return true
            default: return repeatable
            }
        case .service(_, _, let status), .badResponse(let status, _):
            return status >= 500 && repeatable
        case .deadlineExceeded, .noSecretHash:
            return false
        }
    }
}

/// When and how often to try a request again.
public struct RetryPolicy: Sendable {
    public var maxAttempts: Int
    /// The first pause; each later one doubles, up to `maxPause`.
    public var basePause: Double
    public var maxPause: Double
    let sleeper: @Sendable (Double) -> Void

    public init(maxAttempts: Int = 4, basePause: Double = 0.2, maxPause: Double = 2, sleeper: @escaping @Sendable (Double) -> Void = RetryPolicy.sleep) {
        self.maxAttempts = maxAttempts
        self.basePause = basePause
        self.maxPause = maxPause
        self.sleeper = sleeper
    }

    /// "Equal jitter": a random pause between half the exponential bound
    /// and the bound, so many clients that failed together do not retry
    /// together, and none retries at once.
    func pause(afterAttempt attempt: Int) -> Double {
        let bound = min(maxPause, basePause * Double(1 << min(attempt - 1, 10)))
        return Double.random(in: (bound / 2)...bound)
    }

    func sleep(_ seconds: Double) { sleeper(seconds) }

    public static let sleep: @Sendable (Double) -> Void = { seconds in CogCredRead.sleep(seconds: seconds) }
}
