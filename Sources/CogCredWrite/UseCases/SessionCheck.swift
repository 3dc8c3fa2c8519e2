// `status`: does Cognito still honour the stored session? What is stored
// cannot say: a sign-out everywhere from another machine, a revoked
// refresh token or a deleted user leave the keyring as it was. One call
// with the session's own tokens asks.

/// What Cognito said of the stored session.
public enum SessionCheck: Sendable {
    /// It stands; `way` is the call that said so.
    case stands(way: SessionCheckWay)
    /// Cognito refused it: signed out everywhere, revoked, expired, or the
    /// user is gone. The stored items stay as they are (a server's answer
    /// never deletes a session); signing in again replaces them.
    case refused(any CogCredFailure)
    /// Cognito could not be asked: no connection, a timeout, a 5xx,
    /// throttling. The session may well stand.
    case couldNotCheck(any CogCredFailure)
    /// A machine profile: its token is the app client's own, with no
    /// session behind it to ask about.
    case noSession

    /// As said to a person: each failure in `words`.
    public func outcome(_ words: (any CogCredFailure) -> String) -> CheckOutcome {
        switch self {
        case .stands(let way): return .stands(way: way)
        case .refused(let failure): return .refused(AgentFailure(failure.category, words(failure)))
        case .couldNotCheck(let failure): return .couldNotCheck(AgentFailure(failure.category, words(failure)))
        case .noSession: return .noSession
        }
    }

    /// An outcome said by an agent, its failures as it worded them.
    public init(_ outcome: CheckOutcome) {
        switch outcome {
        case .stands(let way): self = .stands(way: way)
        case .refused(let failure): self = .refused(failure)
        case .couldNotCheck(let failure): self = .couldNotCheck(failure)
        case .noSession: self = .noSession
        }
    }
}

extension LocalSession {
    /// Asks Cognito whether the signed-in session still stands. Call it
    /// only when `status()` says signed in.
    public func checkSession() throws -> SessionCheck {
        guard profile.effectiveGrant != .clientCredentials else { return .noSession }
        let operation = AuthOperation.checkSession(profile: profileName)
        if let access = try liveAccessToken() {
            let scopes = Set((access.claims.scope ?? "").split(separator: " ").map(String.init))
            // Building a client may fail (no domain, an endpoint not
            // allowed): the profile's fault, said as such.
            var verdict: SessionCheck?
            if scopes.contains(OAuthScope.cognitoUserAdmin) {
                let cognito: any CognitoSession = try makeCognito()
                verdict = ask(.getUser, operation) { () throws(CognitoError) in try cognito.confirmSession(accessToken: access.value) }
            } else if scopes.contains(OAuthScope.openID), profile.domain != nil {
                let oauth = try makeOAuth()
                verdict = ask(.userInfo, operation) { () throws(CognitoError) in try oauth.userInfo(accessToken: access.value) }
            }
            if let verdict { return verdict }
        }
        do {
            try refresh()
            return .stands(way: .refresh)
        } catch let error as AuthError where error.category == .notAuthenticated {
            return .refused(error)
        } catch let error as AuthError where error.category == .temporary {
            return .couldNotCheck(error)
        }
    }

    /// The stored access token, if it has a minute left: one nearer its
    /// end could be refused for its age alone before the answer came.
    func liveAccessToken() throws -> IssuedToken? {
        guard let value = try store.read(.access, profile: profileName, binding: profile.binding),
            let token = IssuedToken(value), let exp = token.claims.exp, exp > clock.now() + 60
        else { return nil }
        return token
    }

    /// The verdict of one call, or nil when its answer says nothing of the
    /// session (a token without the scope the call needs, an answer the
    /// endpoint gives for other reasons): then a refresh decides.
    func ask(_ way: SessionCheckWay, _ operation: AuthOperation, _ call: () throws(CognitoError) -> Void) -> SessionCheck? {
        do {
            try call()
            return .stands(way: way)
        } catch {
            let failure = AuthError.cognito(error, operation: operation)
            if error.isTemporary { return .couldNotCheck(failure) }
            switch error.reason {
            // A token without the scope the call needs: not a revocation.
            case .refused(.missingScope)?: return nil
            case .refused?, .userNotFound?, .oauth(.invalidToken)?: return .refused(failure)
            default: return nil
            }
        }
    }
}
