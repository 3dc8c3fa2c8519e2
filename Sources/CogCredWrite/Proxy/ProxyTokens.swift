import Synchronization

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
public final class ProxyTokens: Sendable {
    /// The session's current token (`forceRefresh`: refreshed first, as
    /// after the upstream refused one), or what to answer instead.
    public typealias Fetch = @Sendable (_ forceRefresh: Bool) -> Result<String, ProxyAnswer>
    typealias Answer = @Sendable (Result<String, ProxyAnswer>) -> Void

    private let fetch: Fetch
    private let maxAge: Double
    private struct State {
        var held: (token: String, at: ContinuousClock.Instant)?
        var reading = false
        /// Who waits for the read under way: each with the token it must
        /// not get (one the upstream refused), if any.
        var waiting: [(rejected: String?, answer: Answer)] = []

        /// The token held, while it is fresh and is not `rejected`.
        func fresh(unless rejected: String?, maxAge: Double) -> String? {
            guard let held, held.token != rejected, seconds(since: held.at) < maxAge else { return nil }
            return held.token
        }
    }
    private let state = Mutex(State())

    public init(maxAge: Double = 1, fetch: @escaping Fetch) {
        self.fetch = fetch
        self.maxAge = maxAge
    }

    /// The token held, while it is fresh (and is not `rejected`); nil: `read`.
    func held(unless rejected: String? = nil) -> String? {
        state.withLock { $0.fresh(unless: rejected, maxAge: maxAge) }
    }

    /// A token other than `rejected` (nil: any), told to `answer` on the
    /// reading thread (or at once, when one is held): the session is read,
    /// and refreshed first when it would give `rejected` again.
    func read(unless rejected: String?, then answer: @escaping Answer) {
        let (held, start) = state.withLock { state -> (String?, Bool) in
            if let token = state.fresh(unless: rejected, maxAge: maxAge) { return (token, false) }
            state.waiting.append((rejected, answer))
            defer { state.reading = true }
            return (nil, !state.reading)
        }
        if let held { return answer(.success(held)) }
        if start { onThread { self.readUntilAnswered(force: rejected != nil) } }
    }

    /// Reads until every waiter has its answer: one read, and a forced one
    /// more for those it gave the token they must not get.
    private func readUntilAnswered(force: Bool) {
        var force = force
        while true {
            let result = fetch(force)
            let (told, again) = state.withLock { state -> ([Answer], Bool) in
                var told: [Answer] = []
                var again: [(rejected: String?, answer: Answer)] = []
                switch result {
                case .success(let token): state.held = (token, ContinuousClock.now)
                case .failure: state.held = nil
                }
                for waiter in state.waiting {
                    if !force, case .success(let token) = result, token == waiter.rejected {
                        again.append(waiter)
                    } else {
                        told.append(waiter.answer)
                    }
                }
                state.waiting = again
                state.reading = !again.isEmpty
                return (told, !again.isEmpty)
            }
            for answer in told { answer(result) }
            guard again else { return }
            force = true
        }
    }
}
