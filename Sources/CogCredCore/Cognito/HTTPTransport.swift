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
    /// A PEM file of CA certificates to trust instead of the system's.
    public var caBundle: String?
    /// Plain `http://` may be used (Endpoint.Resolved.allowsCleartext);
    /// otherwise the transport speaks HTTPS only.
    public var allowsCleartext: Bool

    public init(
        method: String = "POST", url: String, headers: [(String, String)], body: Data, connectTimeout: Double, totalTimeout: Double,
        caBundle: String? = nil, allowsCleartext: Bool = false
    ) {
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
    }

    public var kind: Kind
    /// The HTTP library's own description, e.g. "Failed to connect to 127.0.0.1 port 9 ...".
    public var detail: String
    /// True when the request cannot have reached the server (refused, no
    /// such host): then even a request that is not idempotent may be sent again.
    public var nothingSent: Bool

    public init(_ kind: Kind, _ detail: String, nothingSent: Bool = false) {
        self.kind = kind
        self.detail = detail
        self.nothingSent = nothingSent
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

    /// "Full jitter": a random pause up to the exponential bound, so many
    /// clients that failed together do not retry together.
    func pause(afterAttempt attempt: Int) -> Double {
        let bound = min(maxPause, basePause * Double(1 << min(attempt - 1, 10)))
        return Double.random(in: (bound / 2)...bound)
    }

    func sleep(_ seconds: Double) { sleeper(seconds) }

    public static let sleep: @Sendable (Double) -> Void = { seconds in
        var interval = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var left = timespec()
        while nanosleep(&interval, &left) != 0 && errno == EINTR { interval = left }
    }
}
