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
/// request. The session is read on a thread of its own, never a loop's (a
/// keyring that hangs, or a refresh that waits on Cognito, holds only the
/// requests that need a token), and one read at a time: requests that
/// ask meanwhile get its answer (many requests on an expired token make
/// one refresh, under the session's own lock besides).
public final class ProxyTokens: @unchecked Sendable {
    /// The session's current token (`forceRefresh`: refreshed first, as
    /// after the upstream refused one), or what to answer instead.
    public typealias Fetch = @Sendable (_ forceRefresh: Bool) -> Result<String, ProxyAnswer>
    typealias Answer = @Sendable (Result<String, ProxyAnswer>) -> Void

    private let fetch: Fetch
    private let maxAge: Double
    private var mutex = pthread_mutex_t()
    private var held: (token: String, at: ContinuousClock.Instant)?
    private var reading = false
    /// Who waits for the read under way: each with the token it must not
    /// get (one the upstream refused), if any.
    private var waiting: [(rejected: String?, answer: Answer)] = []

    public init(maxAge: Double = 1, fetch: @escaping Fetch) {
        self.fetch = fetch
        self.maxAge = maxAge
        pthread_mutex_init(&mutex, nil)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    /// The token held, while it is fresh (and is not `rejected`); nil: `read`.
    func held(unless rejected: String? = nil) -> String? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return fresh(unless: rejected)
    }

    /// Under the mutex.
    private func fresh(unless rejected: String?) -> String? {
        guard let held, held.token != rejected, seconds(since: held.at) < maxAge else { return nil }
        return held.token
    }

    /// A token other than `rejected` (nil: any), told to `answer` on the
    /// reading thread (or at once, when one is held): the session is read,
    /// and refreshed first when it would give `rejected` again.
    func read(unless rejected: String?, then answer: @escaping Answer) {
        pthread_mutex_lock(&mutex)
        if let token = fresh(unless: rejected) {
            pthread_mutex_unlock(&mutex)
            return answer(.success(token))
        }
        waiting.append((rejected, answer))
        let start = !reading
        reading = true
        pthread_mutex_unlock(&mutex)
        if start { startReading(force: rejected != nil) }
    }

    private func startReading(force: Bool) {
        final class Job {
            let tokens: ProxyTokens
            let force: Bool
            init(_ tokens: ProxyTokens, _ force: Bool) { (self.tokens, self.force) = (tokens, force) }
        }
        var thread = pthread_t()
        let job = Unmanaged.passRetained(Job(self, force)).toOpaque()
        if pthread_create(&thread, nil, { context in
            let job = Unmanaged<Job>.fromOpaque(context!).takeRetainedValue()
            job.tokens.readUntilAnswered(force: job.force)
            return nil
        }, job) == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Job>.fromOpaque(job).release()
            readUntilAnswered(force: force)
        }
    }

    /// Reads until every waiter has its answer: one read, and a forced one
    /// more for those it gave the token they must not get.
    private func readUntilAnswered(force: Bool) {
        var force = force
        while true {
            let result = fetch(force)
            pthread_mutex_lock(&mutex)
            var told: [Answer] = []
            var again: [(rejected: String?, answer: Answer)] = []
            switch result {
            case .success(let token): held = (token, ContinuousClock.now)
            case .failure: held = nil
            }
            for waiter in waiting {
                if !force, case .success(let token) = result, token == waiter.rejected {
                    again.append(waiter)
                } else {
                    told.append(waiter.answer)
                }
            }
            waiting = again
            reading = !again.isEmpty
            pthread_mutex_unlock(&mutex)
            for answer in told { answer(result) }
            guard !again.isEmpty else { return }
            force = true
        }
    }
}
