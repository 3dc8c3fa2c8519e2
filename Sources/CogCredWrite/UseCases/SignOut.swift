// Signing out: the session ended at Cognito, then its items deleted.

extension TokenManager {
    /// How far sign-out reaches.
    public enum SignOutScope: Sendable {
        /// Only the local items.
        case local
        /// RevokeToken: this refresh token and the tokens issued from it.
        case revoke
        /// GlobalSignOut: every token of the user, on every device.
        case global
    }

    /// What a sign-out did: the items it deleted, and what Cognito was
    /// asked and said, so that "revoked" is said only when it was.
    public struct SignOutResult: Sendable, Equatable {
        public enum AtCognito: String, Sendable, CaseIterable {
            /// The refresh token was revoked (RevokeToken or /oauth2/revoke) and Cognito accepted it.
            case revoked
            /// GlobalSignOut was sent and accepted.
            case signedOutEverywhere = "signed-out-everywhere"
            /// Cognito said the session had already ended (NotAuthorized).
            case alreadyEnded = "already-ended"
            /// Nothing was sent: `--local`, no refresh token stored (a
            /// machine has none), or tokens of another pool or client.
            case notAsked = "not-asked"
        }

        public var removed: Int
        public var atCognito: AtCognito

        public init(removed: Int, atCognito: AtCognito) {
            self.removed = removed
            self.atCognito = atCognito
        }
    }

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
    public func signOut(_ scope: SignOutScope = .local, forgettingDevice: Bool = false) throws -> SignOutResult {
        if let agent { return try agent.signOut(profile: profileName, scope: scope, forgettingDevice: forgettingDevice) }
        return try lock.withLock(profile: profileName) { try signOutHoldingLock(scope, forgettingDevice: forgettingDevice) }
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
        var removed = 0
        // AWS credentials of the identity pool go with the session they came from.
        let kinds: [SecretKind] = [.awsCredentials, .identityID, .access, .id, .refresh] + (forgettingDevice ? [.device] : [])
        for kind in kinds where try store.delete(kind, profile: profileName) {
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
        return SignOutResult(removed: removed, atCognito: atCognito)
    }
}
