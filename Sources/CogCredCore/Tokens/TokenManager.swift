/// A profile's session: gets, refreshes, stores and removes its tokens.
///
/// The one rule it exists for: never hand out a token that is expired, and
/// refresh before one gets too close to its expiry. Dependencies are fields
/// so tests can run it on an in-memory store, a fake Cognito and a fake clock.
public struct TokenManager: Sendable {
    public let profileName: String
    public let profile: Profile
    let store: any TokenStore
    /// Made only when a call to Cognito is needed: building the real client
    /// may read the client secret from the keyring, which the common case
    /// (a stored token that is still fresh) never needs.
    let makeCognito: @Sendable () throws -> any CognitoClient
    /// The pool's OAuth 2.0 endpoints (client credentials, browser
    /// sign-in), made on first use like `makeCognito`.
    let makeOAuth: @Sendable () throws -> any OAuthClient
    /// The identity pool and STS (`aws-credentials`), made on first use.
    let makeIdentity: @Sendable () throws -> any CognitoIdentityClient
    let clock: any Clock
    let refreshMemory: any RefreshAPIMemory
    let lock: any RefreshLock
    /// Where warnings for the person go (stderr in the executable): the
    /// library itself never prints.
    let warn: @Sendable (String) -> Void

    public init(
        profileName: String, profile: Profile, store: any TokenStore,
        cognito: @escaping @Sendable () throws -> any CognitoClient,
        oauth: @escaping @Sendable () throws -> any OAuthClient = { throw ConfigError.missingDomain },
        identity: @escaping @Sendable () throws -> any CognitoIdentityClient = { throw CognitoError.deadlineExceeded },
        clock: any Clock = SystemClock(),
        refreshMemory: any RefreshAPIMemory = InMemoryRefreshMemory(), lock: any RefreshLock = NoRefreshLock(),
        warn: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.profileName = profileName
        self.profile = profile
        self.store = store
        self.makeCognito = cognito
        self.makeOAuth = oauth
        self.makeIdentity = identity
        self.clock = clock
        self.refreshMemory = refreshMemory
        self.lock = lock
        self.warn = warn
    }

    public init(
        profileName: String, profile: Profile, store: any TokenStore, cognito: any CognitoClient, clock: any Clock = SystemClock(),
        refreshMemory: any RefreshAPIMemory = InMemoryRefreshMemory(), lock: any RefreshLock = NoRefreshLock(),
        warn: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.init(
            profileName: profileName, profile: profile, store: store, cognito: { cognito }, clock: clock,
            refreshMemory: refreshMemory, lock: lock, warn: warn)
    }

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

    /// The Cognito client, for account calls made beside the token logic.
    public func cognito() throws -> any CognitoClient { try makeCognito() }

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
        if let found = try check() { return found }
        return try lock.withLock(profile: profileName) {
            if let found = try check() { return found }
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

    /// The tokens a refresh stored.
    public struct RefreshedTokens: Sendable, Equatable {
        public var access: IssuedToken
        public var id: IssuedToken?
    }

    /// Refreshes now with the stored refresh token and stores the result
    /// (a rotated refresh token first). One refresh operation is one
    /// GetTokensFromRefreshToken, or, where the service lacks that action,
    /// one InitiateAuth REFRESH_TOKEN_AUTH after it (remembered per profile so
    /// later refreshes go straight there). On any failure the stored tokens
    /// are left exactly as they were.
    @discardableResult
    public func refresh() throws -> RefreshedTokens {
        try lock.withLock(profile: profileName) { try refreshHoldingLock() }
    }

    func refreshHoldingLock() throws -> RefreshedTokens {
        if profile.effectiveGrant == .clientCredentials { return try fetchClientCredentials() }
        store.prepareWrites()
        let refreshToken: String
        switch try store.read([.refresh], profile: profileName, binding: profile.binding)[.refresh] ?? .absent {
        case .found(let value) where !value.isEmpty: refreshToken = value
        case .boundElsewhere(let unbound):
            // Never send one pool's refresh token to another pool's client.
            throw StoredSessionError.boundElsewhere(profile: profileName, unbound: unbound)
        default: throw AuthError.notSignedIn(profile: profileName)
        }
        if profile.effectiveAuthFlow == .browser {
            // Signed in at the managed login: renewed at its token endpoint.
            let oauth = try makeOAuth()
            do {
                return try save(try oauth.refresh(refreshToken: refreshToken), requireRefreshToken: false)
            } catch let error as CognitoError {
                throw AuthError.cognito(error, operation: .refresh(profile: profileName))
            }
        }
        let cognito = try makeCognito()
        do {
            return try save(try refreshOnce(cognito, refreshToken), requireRefreshToken: false)
        } catch let error as CognitoError {
            // Another process rotated the refresh token first: its result is
            // in the store, so use that rather than fail.
            if error.code == "RefreshTokenReuseException", let stored = try storedSessionAfterRotation(replacing: refreshToken) {
                return stored
            }
            throw AuthError.cognito(error, operation: .refresh(profile: profileName))
        }
    }

    /// A machine profile's "refresh": a new access token from the token
    /// endpoint with the client's own credentials. There is no refresh
    /// token or ID token to keep.
    func fetchClientCredentials() throws -> RefreshedTokens {
        let oauth = try makeOAuth()
        store.prepareWrites()
        let result: AuthenticationResult
        do {
            result = try oauth.clientCredentials(scopes: profile.scopes)
        } catch {
            throw AuthError.cognito(error, operation: .clientCredentials)
        }
        return try save(
            AuthenticationResult(accessToken: result.accessToken, idToken: nil, refreshToken: nil, expiresIn: result.expiresIn),
            requireRefreshToken: false)
    }

    func refreshOnce(_ cognito: any CognitoClient, _ refreshToken: String) throws -> AuthenticationResult {
        // The username only feeds SECRET_HASH: without a client secret,
        // skip the keyring reads it costs.
        let username = { () throws -> String? in profile.clientSecretInKeyring == true ? try cognitoUsername() : nil }
        if refreshMemory.prefersInitiateAuth(profile: profileName) {
            return try cognito.refresh(refreshToken: refreshToken, username: try username())
        }
        do {
            return try cognito.getTokensFromRefreshToken(refreshToken: refreshToken)
        } catch where error.isUnsupportedOperation {
            let result = try cognito.refresh(refreshToken: refreshToken, username: try username())
            refreshMemory.rememberInitiateAuth(profile: profileName)
            return result
        }
    }

    /// The stored tokens, if another process has stored a new refresh token
    /// and an access token that has not expired.
    func storedSessionAfterRotation(replacing old: String) throws -> RefreshedTokens? {
        let found = try store.read([.refresh, .access, .id], profile: profileName, binding: profile.binding)
        guard let current = found[.refresh]?.value, current != old,
            let access = found[.access]?.value.flatMap(IssuedToken.init), let exp = access.claims.exp, exp > clock.now()
        else { return nil }
        return RefreshedTokens(access: access, id: found[.id]?.value.flatMap(IssuedToken.init))
    }

    /// The name Cognito knows the signed-in user by (the access token's
    /// `username` claim), which SECRET_HASH on a refresh must use: with email
    /// or phone aliases it is not what the user typed. Expired tokens still
    /// say whose they are.
    func cognitoUsername() throws -> String? {
        let found = try store.read([.access, .id], profile: profileName, binding: profile.binding)
        if let name = found[.access]?.value.flatMap(IssuedToken.init)?.claims.username { return name }
        if let name = found[.id]?.value.flatMap(IssuedToken.init)?.claims.cognitoUsername { return name }
        return profile.username
    }

    /// How far sign-out reaches.
    public enum SignOutScope: Sendable {
        /// Only the local items.
        case local
        /// RevokeToken: this refresh token and the tokens issued from it.
        case revoke
        /// GlobalSignOut: every token of the user, on every device.
        case global
    }

    /// Ends the session at Cognito (unless `.local`), then deletes the
    /// profile's tokens: access first and refresh last, so an interrupted
    /// sign-out can be run again. The local items go even when the remote
    /// call fails; that failure is thrown afterwards. Returns how many items
    /// existed.
    ///
    /// All of it holds the profile's refresh lock: a refresh running in
    /// another process either ends before (and its tokens are deleted here)
    /// or starts after (and finds no refresh token). Without the lock, a
    /// refresh in flight would write the tokens back after the sign-out.
    @discardableResult
    public func signOut(_ scope: SignOutScope = .local) throws -> Int {
        try lock.withLock(profile: profileName) { try signOutHoldingLock(scope) }
    }

    func signOutHoldingLock(_ scope: SignOutScope) throws -> Int {
        var remoteFailure: (any Error)? = nil
        // Tokens bound to another pool or client are only deleted: sending
        // them to this profile's client would fail, or reach the wrong pool.
        if scope != .local, let refreshToken = try store.read(.refresh, profile: profileName, binding: profile.binding) {
            do {
                if profile.effectiveAuthFlow == .browser {
                    // The managed login's tokens are revoked where they were
                    // issued (its access tokens may lack the scope
                    // GlobalSignOut needs); `--global` also ends its browser
                    // session through `logoutURL`, which the caller opens.
                    try makeOAuth().revoke(refreshToken: refreshToken)
                } else {
                    let cognito = try makeCognito()
                    if scope == .global {
                        let access = try usable(.access, RefreshPolicy()) ?? refreshHoldingLock().access
                        try cognito.globalSignOut(accessToken: access.value)
                    } else {
                        try cognito.revokeToken(refreshToken: refreshToken)
                    }
                }
            } catch {
                // NotAuthorized means the session is already dead at Cognito:
                // nothing is left to revoke. Anything else is reported after
                // the local items are gone, as the user asked.
                let cause = (error as? CognitoError) ?? { if case .cognito(let c, _)? = error as? AuthError { return c } else { return nil } }()
                if cause?.code != "NotAuthorizedException" { remoteFailure = error }
            }
        }
        var removed = 0
        // AWS credentials of the identity pool go with the session they came from.
        for kind in [SecretKind.awsCredentials, .identityID, .access, .id, .refresh] where try store.delete(kind, profile: profileName) {
            removed += 1
        }
        switch remoteFailure {
        case nil: break
        case let error as CognitoError: throw AuthError.remoteSignOutFailed(error)
        case let error as AuthError:
            if case .cognito(let cause, _) = error { throw AuthError.remoteSignOutFailed(cause) }
            throw error
        case let error?: throw error
        }
        return removed
    }

    /// Stores a Cognito result: checks every token first, then writes refresh,
    /// ID, access in that order, so an interruption at any point leaves a
    /// usable refresh token. A result without a refresh token keeps the old one.
    func save(_ result: AuthenticationResult, requireRefreshToken: Bool) throws -> RefreshedTokens {
        guard let access = IssuedToken(result.accessToken) else { throw AuthError.malformedToken(.access) }
        var id: IssuedToken? = nil
        if let idToken = result.idToken {
            guard let token = IssuedToken(idToken) else { throw AuthError.malformedToken(.id) }
            id = token
        }
        let newRefresh = result.refreshToken.flatMap { $0.isEmpty ? nil : $0 }
        if requireRefreshToken && newRefresh == nil {
            throw AuthError.cognito(.badResponse(httpStatus: 200, detail: "no refresh token in the answer"), operation: .signIn)
        }
        let context = ItemContext(
            userPoolID: profile.userPoolID, clientID: profile.clientID,
            username: access.claims.subjectName ?? id?.claims.subjectName)
        let tokens = RefreshedTokens(access: access, id: id)
        if requireRefreshToken {
            // A sign-in, perhaps of another user: the identity pool's items
            // are the previous user's (their identity and IAM credentials),
            // and go before anything of the new session is stored.
            try store.delete(.awsCredentials, profile: profileName)
            try store.delete(.identityID, profile: profileName)
        }
        if let newRefresh {
            if requireRefreshToken {
                try store.write(.refresh, profile: profileName, secret: newRefresh, context: context)
            } else if !storeRotatedRefreshToken(newRefresh, context) {
                // The old refresh token is spent and the new one is not
                // stored: the session ends when these tokens expire. Hand
                // them out anyway (the keyring may have been only slow), and
                // store what can be stored.
                warn("cog-cred: warning: the new refresh token could not be stored in the Secret Service; these tokens work until they expire, then sign in again")
                if let id { try? store.write(.id, profile: profileName, secret: id.value, context: context) }
                try? store.write(.access, profile: profileName, secret: access.value, context: context)
                return tokens
            }
        }
        if let id {
            try store.write(.id, profile: profileName, secret: id.value, context: context)
        } else if requireRefreshToken {
            // A new sign-in without an ID token must not leave the previous user's.
            try store.delete(.id, profile: profileName)
        }
        try store.write(.access, profile: profileName, secret: access.value, context: context)
        return tokens
    }

    /// Stores a rotated refresh token, the only copy of the session there
    /// is: a failed or timed-out write is tried again with a longer time
    /// limit, and the result read back. True when it is in the store.
    func storeRotatedRefreshToken(_ token: String, _ context: ItemContext) -> Bool {
        if (try? store.write(.refresh, profile: profileName, secret: token, context: context)) != nil { return true }
        guard (try? store.writePatiently(.refresh, profile: profileName, secret: token, context: context)) != nil else {
            return false
        }
        return (try? store.read(.refresh, profile: profileName, binding: context.binding)) == token
    }

    /// What is stored, without any secret in it.
    public func status() throws(SecretServiceError) -> SessionStatus {
        var kinds: [SecretKind] = [.refresh, .access, .id]
        if profile.identityPoolID != nil { kinds += [.identityID, .awsCredentials] }
        let found = try store.read(kinds, profile: profileName, binding: profile.binding)
        let refresh = found[.refresh]?.value
        let access = found[.access]?.value.flatMap(IssuedToken.init)?.claims
        let id = found[.id]?.value.flatMap(IssuedToken.init)?.claims
        let aws = AWSCredentials(found: found, identityPoolID: profile.identityPoolID)
        return SessionStatus(
            profile: profileName,
            // A machine has no refresh token: its access token is its session.
            signedIn: profile.effectiveGrant == .clientCredentials ? access != nil : refresh.map { !$0.isEmpty } ?? false,
            boundElsewhere: found.values.contains { if case .boundElsewhere = $0 { return true } else { return false } },
            username: access?.subjectName ?? id?.subjectName ?? profile.username,
            accessTokenExpiresAt: access?.exp,
            idTokenExpiresAt: id?.exp,
            email: id?.email,
            emailVerified: id?.emailVerified,
            cognitoUsername: id?.cognitoUsername,
            sub: id?.sub ?? access?.sub,
            authTime: id?.authTime ?? access?.authTime,
            scope: access?.scope,
            identityID: found[.identityID]?.value,
            awsCredentialsExpireAt: aws?.expiration,
            now: clock.now())
    }
}

/// The state of a profile's session: what `status` shows.
public struct SessionStatus: Sendable, Equatable {
    public var profile: String
    /// A refresh token is stored, so tokens can be had without a password.
    public var signedIn: Bool
    /// Tokens are stored for the profile, but issued by another pool or
    /// client than it names now (or saved unbound by cog-cred 0.1).
    public var boundElsewhere: Bool
    public var username: String?
    public var accessTokenExpiresAt: Int64?
    public var idTokenExpiresAt: Int64?
    public var email: String?
    public var emailVerified: Bool?
    /// `cognito:username` from the ID token.
    public var cognitoUsername: String?
    public var sub: String?
    /// When the user last typed a password (or passed MFA).
    public var authTime: Int64?
    /// The access token's granted scopes (space-separated).
    public var scope: String?
    /// The user's identity in the profile's identity pool, once asked for.
    public var identityID: String?
    /// When the stored AWS credentials expire.
    public var awsCredentialsExpireAt: Int64?
    public var now: Int64
}
