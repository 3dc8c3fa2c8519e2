/// How every HTTP client here reaches its service, made once per command
/// (the executable's Wiring) and held by each client: the user pool's, the
/// identity pool's and STS's, the OAuth endpoints', the JWKS fetch. The
/// transport, the timeouts of one attempt, the command's deadline, the CA
/// bundle to trust instead of the system's, when to try again, and the
/// proxy variables.
///
/// Whether plain HTTP may be used is the endpoint's own (Endpoint.resolve's
/// rule gives it with the URL), so a client takes it with its endpoint:
/// `post(allowsCleartext:)`.
public struct Connection: Sendable {
    public let transport: any HTTPTransport
    public let timeouts: Timeouts
    public let deadline: Deadline
    /// The CA certificates to trust, and what chose them.
    public let caBundle: CABundle
    public let retryPolicy: RetryPolicy
    /// The proxy variables each request's route is decided by.
    public let proxies: ProxySettings

    public init(
        transport: any HTTPTransport = CurlTransport(), timeouts: Timeouts, deadline: Deadline, caBundle: CABundle = .system,
        retryPolicy: RetryPolicy = RetryPolicy(), proxies: ProxySettings = .none
    ) {
        self.proxies = proxies
        self.transport = transport
        self.timeouts = timeouts
        self.deadline = deadline
        self.caBundle = caBundle
        self.retryPolicy = retryPolicy
    }

    /// The retrying path to an endpoint that may (`allowsCleartext`) or
    /// may not be plain `http://`.
    func post(allowsCleartext: Bool) -> RetryingPost {
        RetryingPost(connection: self, allowsCleartext: allowsCleartext)
    }
}
