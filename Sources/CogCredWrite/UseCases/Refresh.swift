// Refreshing: the stored refresh token for new tokens, stored before they
// are handed out (`refresh`, and every read that finds its token too old).

extension LocalSession {
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
        // The device the session was signed in on, asked for together:
        // a pool that tracks devices refuses a refresh without its key.
        let found = try store.read([.refresh, .device], profile: profileName, binding: profile.binding)
        switch found[.refresh] ?? .absent {
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
                return try stored.save(try oauth.refresh(refreshToken: refreshToken), requireRefreshToken: false)
            } catch let error as CognitoError {
                throw AuthError.cognito(error, operation: .refresh(profile: profileName))
            }
        }
        let cognito: any CognitoSession = try makeCognito()
        let deviceKey = found[.device]?.value.flatMap(RememberedDevice.init(json:))?.key
        do {
            return try stored.save(try refreshOnce(cognito, refreshToken, deviceKey: deviceKey), requireRefreshToken: false)
        } catch let error as CognitoError {
            // Another process rotated the refresh token first: its result is
            // in the store, so use that rather than fail.
            if error.reason == .refreshTokenReused, let stored = try storedSessionAfterRotation(replacing: refreshToken) {
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
        return try stored.save(
            AuthenticationResult(accessToken: result.accessToken, idToken: nil, refreshToken: nil, expiresIn: result.expiresIn),
            requireRefreshToken: false)
    }

    func refreshOnce(_ cognito: any CognitoSession, _ refreshToken: String, deviceKey: String?) throws -> AuthenticationResult {
        // The username only feeds SECRET_HASH: without a client secret,
        // skip the keyring reads it costs.
        let username = { () throws -> String? in profile.clientSecretInKeyring == true ? try cognitoUsername() : nil }
        if refreshMemory.prefersInitiateAuth(profile: profileName) {
            return try cognito.refresh(refreshToken: refreshToken, username: try username(), deviceKey: deviceKey)
        }
        do {
            return try cognito.getTokensFromRefreshToken(refreshToken: refreshToken, deviceKey: deviceKey)
        } catch where error.isUnsupportedOperation {
            let result = try cognito.refresh(refreshToken: refreshToken, username: try username(), deviceKey: deviceKey)
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
}
