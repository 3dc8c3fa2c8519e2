#if canImport(Glibc)
import Glibc
#endif

/// What the proxy answers itself, sending nothing upstream: no token can be
/// had (not signed in, the keyring locked, a refresh failing), or the
/// request is not one it serves. Its words are the command's (Wiring).
public struct ProxyAnswer: Error, Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var body: String

    public init(status: Int, contentType: String = "text/plain; charset=utf-8", body: String) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }
}

/// The token every request carries, from the profile's session, held at
/// most `maxAge` seconds between requests: so a sign-out, a locked keyring,
/// a deleted item or a re-pointed profile reaches the proxy within that,
/// while a busy proxy reads the session about once a second, not once a
/// request. One reader at a time: requests arriving while it reads wait
/// for its answer (many requests on an expired token make one refresh,
/// under the session's own lock besides).
public final class ProxyTokens: @unchecked Sendable {
    /// The session's current token (`forceRefresh`: refreshed first, as
    /// after the upstream refused one), or what to answer instead.
    public typealias Fetch = @Sendable (_ forceRefresh: Bool) -> Result<String, ProxyAnswer>

    private let fetch: Fetch
    private let maxAge: Double
    private var mutex = pthread_mutex_t()
    private var held: (token: String, at: ContinuousClock.Instant)?

    public init(maxAge: Double = 1, fetch: @escaping Fetch) {
        self.fetch = fetch
        self.maxAge = maxAge
        pthread_mutex_init(&mutex, nil)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    /// A token for the next request.
    func current() -> Result<String, ProxyAnswer> {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        if let held, seconds(since: held.at) < maxAge { return .success(held.token) }
        return read(forceRefresh: false)
    }

    /// A token other than `rejected`, which the upstream refused: the one
    /// held, if another request already replaced it, else a refreshed one.
    func replacing(_ rejected: String) -> Result<String, ProxyAnswer> {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        if let held, held.token != rejected, seconds(since: held.at) < maxAge { return .success(held.token) }
        return read(forceRefresh: true)
    }

    /// Under the mutex.
    private func read(forceRefresh: Bool) -> Result<String, ProxyAnswer> {
        let result = fetch(forceRefresh)
        switch result {
        case .success(let token): held = (token, ContinuousClock.now)
        case .failure: held = nil
        }
        return result
    }
}
