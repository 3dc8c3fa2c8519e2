// Signing out: the session ended at Cognito, then its items deleted.

extension LocalSession {
    /// Ends the session at Cognito (unless `.local`), then deletes the
    /// profile's tokens: access first and refresh last, so an interrupted
    /// sign-out can be run again. The local items go even when the remote
    /// call fails, which the result says (`.failed`, with its words).
    /// Returns how many items existed and what Cognito was asked.
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
        var failure: String? = nil
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
                // nothing is left to revoke. Cognito's other answers, and
                // not reaching it, are said in the result; anything else is
                // thrown once the local items are gone, as the user asked.
                let cause = (error as? CognitoError) ?? { if case .cognito(let c, _)? = error as? AuthError { return c } else { return nil } }()
                if let cause {
                    if case .refused? = cause.reason { atCognito = .alreadyEnded } else { (atCognito, failure) = (.failed, cause.summary) }
                } else {
                    remoteFailure = error
                }
            }
        } else if scope != .local && profile.effectiveGrant == .clientCredentials {
            atCognito = .nothingToRevoke
        }
        let removed = try stored.deleteItemsHoldingLock(forgettingDevice: forgettingDevice)
        if let remoteFailure { throw remoteFailure }
        return SignOutResult(removed: removed, atCognito: atCognito, failure: failure)
    }
}
