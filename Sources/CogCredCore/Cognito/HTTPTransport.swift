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

    public init(
        method: String = "POST", url: String, headers: [(String, String)], body: Data, connectTimeout: Double, totalTimeout: Double
    ) {
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

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }
}
