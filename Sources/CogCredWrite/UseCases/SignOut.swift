// Signing out: the session ended at Cognito, then its items deleted.

extension LocalSession {
    /// Ends the session at Cognito (unless `.local`), then deletes the
    /// profile's tokens: access first and refresh last, so an interrupted
    /// sign-out can be run again. The local items go even when the remote
    /// call fails; that failure is thrown afterwards. Returns how many items
    /// existed and what Cognito was asked.
    ///
    /// This machine stays a remembered device of the user's, as in Amazon's
    /// SDKs (the next sign-in skips MFA), unless `forgettingDevice`: a profile
    /// deleted or pointed at another pool or client.
    ///
    /// All of it holds the profile's refresh lock: a refresh running in
    /// another process either ends before (and its tokens are deleted here)
    /// or starts after (and finds no refresh token). Without the lock, a
    /// refresh in flight would write the tokens back after the sign-out.
    @discardableResult
    public func signOut(_ scope: SignOutScope, forgettingDevice: Bool) throws -> SignOutResult {
        try lock.withLock(profile: profileName) { try signOutHoldingLock(scope, forgettingDevice: forgettingDevice) }
    }

    func signOutHoldingLock(_ scope: SignOutScope, forgettingDevice: Bool) throws -> SignOutResult {
        var remoteFailure: (any Error)? = nil
        var atCognito = SignOutResult.AtCognito.notAsked
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
                    atCognito = .revoked
                } else {
                    let cognito: any CognitoSession = try makeCognito()
                    if scope == .global {
                        let access = try usable(.access, RefreshPolicy()) ?? refreshHoldingLock().access
                        try cognito.globalSignOut(accessToken: access.value)
                        atCognito = .signedOutEverywhere
                    } else {
                        try cognito.revokeToken(refreshToken: refreshToken)
                        atCognito = .revoked
                    }
                }
            } catch {
                // NotAuthorized means the session is already dead at Cognito:
                // nothing is left to revoke. Anything else is reported after
                // the local items are gone, as the user asked.
                let cause = (error as? CognitoError) ?? { if case .cognito(let c, _)? = error as? AuthError { return c } else { return nil } }()
                if case .refused? = cause?.reason { atCognito = .alreadyEnded } else { remoteFailure = error }
            }
        }
        let removed = try stored.deleteItemsHoldingLock(forgettingDevice: forgettingDevice)
        switch remoteFailure {
        case nil: break
        case let error as CognitoError: throw AuthError.remoteSignOutFailed(error)
        case let error as AuthError:
            if case .cognito(let cause, _) = error { throw AuthError.remoteSignOutFailed(cause) }
            throw error
        case let error?: throw error
        }
        return SignOutResult(removed: removed, atCognito: atCognito)
    }
}
