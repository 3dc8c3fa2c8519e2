// Handing out a token: the stored one while it is fresh, else one refresh
// under the profile's lock (`token`, `get-header`, the helpers, `exec`).

extension LocalSession {
    /// The read side: what is stored of `kinds`, bound to this profile's pool
    /// and client, if fresh for `policy`. Its failures are passed on as the
    /// errors they are (SecretServiceError, StoredSessionError), which the
    /// command line maps to exit codes.
    func stored(_ kinds: [SecretKind], policy: RefreshPolicy) throws -> [SecretKind: IssuedToken]? {
        // `some`: the store and clock opened from their existentials.
        func read(_ store: some TokenStore, _ clock: some Clock) throws -> [SecretKind: IssuedToken]? {
            do {
                return try StoredTokens(profileName: profileName, profile: profile, store: store, clock: clock).usable(kinds, policy: policy)
            } catch {
                switch error {
                case .store(let error): throw error
                case .session(let error): throw error
                }
            }
        }
        return try read(store, clock)
    }

    /// A token with more than the policy's margin of life left, refreshing
    /// (at most once) when the stored one has less; or, when that refresh
    /// fails for a passing reason, the stored one while it still works
    /// (`stillWorking`).
    public func currentToken(_ choice: TokenChoice, policy: RefreshPolicy) throws -> IssuedToken {
        if choice == .id && profile.effectiveGrant == .clientCredentials { throw AuthError.noIDToken(profile: profileName) }
        return try storedOrRefreshed(
            { try usable(choice.kind, policy) },
            stillWorking: stillWorking(policy) { try usable(choice.kind, $0).map { ($0, $0.claims.exp) } }
        ) { result in
            guard let fresh = choice == .access ? result.access : result.id else { throw AuthError.malformedToken(choice.kind) }
            // A token whose whole life is shorter than the margin is still handed
            // out after one refresh, as long as it has not expired.
            guard let exp = fresh.claims.exp, exp > clock.now() else { throw AuthError.freshTokenExpired(choice.kind) }
            noteLifeShorterThanAsked(fresh, policy)
            return fresh
        }
    }

    /// What `check` finds in the store; failing that, one refresh under the
    /// profile's lock. The common case (a fresh token) takes no lock; after
    /// taking it, `check` runs again, since another process may have
    /// refreshed while this one waited. A refresh that fails for a passing
    /// reason (no connection, a timeout, a 5xx, throttling) falls back on
    /// `stillWorking`, with one warning that says until when.
    ///
    /// A refresh due only because the token is inside its margin (it still
    /// works, and the caller set no `--min-ttl` it misses) gets
    /// `marginRefreshBudget` seconds, retries included, rather than the
    /// command's deadline: past that the token that works is handed out at
    /// once, so an endpoint that never answers does not hold every git,
    /// docker and kubectl call for the whole deadline.
    func storedOrRefreshed<T>(
        _ check: () throws -> T?, stillWorking: (() throws -> (T, expires: Int64?)?)? = nil,
        _ fromRefresh: (RefreshedTokens) throws -> T
    ) throws -> T {
        // Handed the lock by the front, which found under it that a refresh
        // is due: both looks would only repeat its read.
        let refreshDue = lock.takeRefreshDue(profile: profileName)
        if !refreshDue, let found = try check() { return found }
        return try lock.withLock(profile: profileName) {
            if !refreshDue, let found = try check() { return found }
            // A failed read here is the refresh's to report, as before.
            let dueOnlyByMargin = (try? stillWorking?()) != nil
            do {
                let refreshed = try dueOnlyByMargin
                    ? RequestBudget.within(seconds: Self.marginRefreshBudget, refreshHoldingLock) : refreshHoldingLock()
                return try fromRefresh(refreshed)
            } catch AuthError.cognito(let cause, let operation) where cause.isTemporary && !cause.isUntrustedCertificate {
                guard let (token, expires) = try stillWorking?() else { throw AuthError.cognito(cause, operation: operation) }
                let until = expires.map { "; it expires at \(rfc3339($0)) (in \(Self.minutes($0 - clock.now())))" } ?? ""
                warn("cog-cred: warning: could not refresh (\(cause.summary)); handing out the stored token\(until)")
                return token
            }
        }
    }

    /// The fallback for `policy`: what is stored and has not expired, unless
    /// the caller asked for a set life (`--min-ttl`), which a token due for
    /// refresh does not have.
    func stillWorking<T>(_ policy: RefreshPolicy, _ read: @escaping (RefreshPolicy) throws -> (T, expires: Int64?)?)
        -> (() throws -> (T, expires: Int64?)?)?
    {
        guard policy.minTTL == nil else { return nil }
        return { try read(RefreshPolicy(minTTL: 0)) }
    }

    /// A minimum life (`--min-ttl`) not shorter than the pool's tokens live: no stored token can
    /// meet it, so every call would refresh in silence. Said once, when a
    /// refresh shows it (a token just issued has its whole life left).
    func noteLifeShorterThanAsked(_ fresh: IssuedToken, _ policy: RefreshPolicy) {
        // Usable means more than minTTL left (RefreshPolicy), so a life of
        // exactly minTTL never is either.
        guard let minTTL = policy.minTTL, let exp = fresh.claims.exp, let iat = fresh.claims.iat, exp - iat <= minTTL else { return }
        warn("cog-cred: note: the \(minTTL) s of life asked for is not less than this pool's tokens live (\(exp - iat) s), so every call refreshes; ask for less than \(exp - iat) s")
    }

    /// Seconds a refresh due only by the margin may take, retries included.
    static let marginRefreshBudget = 2.0

    static func minutes(_ seconds: Int64) -> String {
        seconds < 120 ? "\(max(seconds, 0)) s" : "\(seconds / 60) min"
    }

    /// The stored token of `kind` if it has more than the policy's margin left.
    func usable(_ kind: SecretKind, _ policy: RefreshPolicy) throws -> IssuedToken? {
        try stored([kind], policy: policy)?[kind]
    }

    /// The access token and the ID token, both with more than the margin
    /// left, after at most one refresh: what `exec` hands a command; or,
    /// as for one token, both while they still work. `authorizing .id`
    /// (`--id-token`, the token the command is to present) refuses a
    /// machine, which has no ID token, before anything is read.
    public func currentTokens(policy: RefreshPolicy, authorizing choice: TokenChoice) throws -> RefreshedTokens {
        if choice == .id && profile.effectiveGrant == .clientCredentials { throw AuthError.noIDToken(profile: profileName) }
        let fromStore = { (policy: RefreshPolicy) throws -> RefreshedTokens? in
            guard let both = try stored(profile.handedOutKinds, policy: policy), let access = both[.access] else { return nil }
            return RefreshedTokens(access: access, id: both[.id])
        }
        let stillWorking = stillWorking(policy) { policy in
            try fromStore(policy).map { ($0, [$0.access.claims.exp, $0.id?.claims.exp].compactMap { $0 }.min()) }
        }
        return try storedOrRefreshed({ try fromStore(policy) }, stillWorking: stillWorking) { fresh in
            guard let exp = fresh.access.claims.exp, exp > clock.now() else { throw AuthError.freshTokenExpired(.access) }
            noteLifeShorterThanAsked(fresh.access, policy)
            return fresh
        }
    }
}
