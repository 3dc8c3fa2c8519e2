// Handing out a token: the stored one while it is fresh, else one refresh
// under the profile's lock (`token`, `get-header`, the helpers, `exec`).

extension TokenManager {
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
    /// (at most once) when the stored one has less.
    public func currentToken(_ choice: TokenChoice, policy: RefreshPolicy = RefreshPolicy()) throws -> IssuedToken {
        if choice == .id && profile.effectiveGrant == .clientCredentials { throw AuthError.noIDToken(profile: profileName) }
        return try storedOrRefreshed({ try usable(choice.kind, policy) }) { result in
            guard let fresh = choice == .access ? result.access : result.id else { throw AuthError.malformedToken(choice.kind) }
            // A token whose whole life is shorter than the margin is still handed
            // out after one refresh, as long as it has not expired.
            guard let exp = fresh.claims.exp, exp > clock.now() else { throw AuthError.freshTokenExpired(choice.kind) }
            return fresh
        }
    }

    /// What `check` finds in the store; failing that, one
    /// refresh under the profile's lock. The common case (a fresh token)
    /// takes no lock; after taking it, `check` runs again, since another
    /// process may have refreshed while this one waited.
    func storedOrRefreshed<T>(_ check: () throws -> T?, _ fromRefresh: (RefreshedTokens) throws -> T) throws -> T {
        // Handed the lock by the front, which found under it that a refresh
        // is due: both looks would only repeat its read.
        let refreshDue = lock.takeRefreshDue(profile: profileName)
        if !refreshDue, let found = try check() { return found }
        return try lock.withLock(profile: profileName) {
            if !refreshDue, let found = try check() { return found }
            return try fromRefresh(try refreshHoldingLock())
        }
    }

    /// The stored token of `kind` if it has more than the policy's margin left.
    func usable(_ kind: SecretKind, _ policy: RefreshPolicy) throws -> IssuedToken? {
        try stored([kind], policy: policy)?[kind]
    }

    /// The access token and the ID token, both with more than the margin
    /// left, after at most one refresh: what `exec` hands a command.
    public func currentTokens(policy: RefreshPolicy = RefreshPolicy()) throws -> RefreshedTokens {
        let fromStore = { () throws -> RefreshedTokens? in
            guard let both = try stored(profile.handedOutKinds, policy: policy), let access = both[.access] else { return nil }
            return RefreshedTokens(access: access, id: both[.id])
        }
        return try storedOrRefreshed(fromStore) { fresh in
            guard let exp = fresh.access.claims.exp, exp > clock.now() else { throw AuthError.freshTokenExpired(.access) }
            return fresh
        }
    }
}
