// Signing in through the pool's managed login in a browser: the
// authorization code flow with PKCE, driven here, the person reached
// through `BrowserSignInPerson` (the terminal and browser in the executable).

/// Where the browser runs.
public enum BrowserSignInMode: Sendable, Equatable {
    /// Started on this machine, coming back to a listener at the redirect
    /// URI within `timeout` seconds.
    case here(timeout: Int)
    /// Wherever the person opens the address; they paste back where the
    /// browser ended (`--no-browser`).
    case elsewhere
}

/// The person's side of a browser sign-in.
public protocol BrowserSignInPerson {
    /// Starts a browser here at `address`; false when none could be started.
    func openBrowser(_ address: String) -> Bool
    /// Shows the authorize address: to open by hand, or in case the browser
    /// that was `opened` does not come up.
    func show(authorizeURL: String, opened: Bool)
    /// With the browser elsewhere: shows the authorize address and returns
    /// what the person pasted back (the address the browser ended on, or
    /// just its code).
    func pastedCallback(authorizeURL: String) throws -> String
    /// No browser could be started here (over SSH, no display): the paste
    /// flow at once when the person can paste (a terminal), else nil and the
    /// listener waits, having said so.
    func pasteInstead(authorizeURL: String, waiting timeout: Int) throws -> String?
    /// A line for the person while waiting (a request refused).
    func note(_ line: String)
}

extension TokenManager {
    /// Signs in through the managed login: a fresh request, the browser's
    /// answer (at the listener, or pasted), then `signIn(_:of:issuers:)`.
    /// `issuers` are the ones the ID token may name (the pool at its
    /// endpoint), asked once the request is made. A pasted text that is no
    /// answer throws `AuthorizationRequest.CallbackError.notACallback`.
    public func signInWithBrowser(_ mode: BrowserSignInMode, issuers: () throws -> [String], person: some BrowserSignInPerson)
        throws -> RefreshedTokens
    {
        let request = try authorizationRequest()
        let issuers = try issuers()
        switch mode {
        case .elsewhere:
            let pasted = try PersonTime.waiting { try person.pastedCallback(authorizeURL: request.url) }
            return try signIn(pasted: pasted, of: request, issuers: issuers)
        case .here(let timeout):
            // Listening before the browser starts: it may come back at once.
            let loopback = try LoopbackSignIn(request)
            let opened = person.openBrowser(loopback.startAddress)
            // Never the whole timeout in silence for a browser that cannot come.
            if !opened, let pasted = try person.pasteInstead(authorizeURL: request.url, waiting: timeout) {
                return try signIn(pasted: pasted, of: request, issuers: issuers)
            }
            person.show(authorizeURL: request.url, opened: opened)
            // The person's time at the browser is not the exchange's (PersonTime).
            guard let callback = try PersonTime.waiting({ try loopback.answer(within: Double(timeout), note: { person.note($0) }) }) else {
                throw AuthError.browserTimedOut(seconds: timeout)
            }
            return try signIn(callback, of: request, issuers: issuers)
        }
    }

    /// What the person pasted back: the address the browser ended on, or its code.
    func signIn(pasted: String, of request: AuthorizationRequest, issuers: [String]) throws -> RefreshedTokens {
        let callback: AuthorizationRequest.Callback
        do {
            callback = try request.pasted(pasted)
        } catch .stateMismatch {
            throw AuthError.stateMismatch
        }
        return try signIn(callback, of: request, issuers: issuers)
    }

    /// The authorization-code request for this profile's managed login:
    /// fresh state, nonce and PKCE verifier each time.
    public func authorizationRequest(identityProvider: String? = nil) throws -> AuthorizationRequest {
        let domain = try managedLoginDomain()
        return AuthorizationRequest(
            domain: domain.url, clientID: profile.clientID, redirectURI: profile.effectiveRedirectURI,
            scopes: profile.scopes ?? Profile.defaultBrowserScopes, identityProvider: identityProvider ?? profile.identityProvider)
    }

    /// `<domain>/logout?client_id=...&logout_uri=...`: the address that ends
    /// the managed login's own session (its cookie in the browser), when
    /// the profile names a logout URI; nil otherwise.
    public func logoutURL() -> String? {
        guard let logoutURI = profile.logoutURI, let domain = try? managedLoginDomain() else { return nil }
        return managedLoginLogoutURL(domain: domain.url, clientID: profile.clientID, logoutURI: logoutURI)
    }

    /// Ends a browser sign-in: the code is exchanged at the token endpoint
    /// with the PKCE verifier; the ID token must name one of `issuers` (the
    /// pool at its endpoint: TokenVerifier.poolKeys), this client among its
    /// audiences, `token_use` id, an expiry to come and the request's nonce;
    /// then the three tokens are stored exactly as a password sign-in
    /// stores them. A refusal from the managed login (the user cancelled)
    /// stores nothing.
    public func signIn(_ callback: AuthorizationRequest.Callback, of request: AuthorizationRequest, issuers: [String]) throws
        -> RefreshedTokens
    {
        let code: String
        switch callback {
        case .refused(let error, let description):
            throw AuthError.cognito(.service(code: error, message: description, httpStatus: 0), operation: .signIn)
        case .code(let value):
            code = value
        }
        let oauth = try makeOAuth()
        store.prepareWrites()
        let result: AuthenticationResult
        do {
            result = try oauth.exchangeCode(code, redirectURI: request.redirectURI, verifier: request.verifier)
        } catch {
            throw AuthError.cognito(error, operation: .signIn)
        }
        // An ID token from another request (replayed into this one) names
        // another nonce; without `openid` there is no ID token to check.
        if let idToken = result.idToken {
            guard let token = IssuedToken(idToken) else { throw AuthError.malformedToken(.id) }
            let checks = TokenVerifier.claimChecks(token.claims, kind: .id, issuers: issuers, clientID: profile.clientID, now: clock.now())
            if let failed = checks.first(where: { !$0.passed }) { throw AuthError.idTokenRejected(check: failed.name, found: failed.detail) }
            guard token.claims.nonce == request.nonce else { throw AuthError.nonceMismatch }
        }
        // The managed login binds no device to its session: the profile's
        // device item goes with the old session (a refresh would send its
        // key with a token not bound to it), and the next sign-in through the
        // API makes this machine a device again.
        return try lock.withLock(profile: profileName) { try stored.save(result, requireRefreshToken: true) }
    }
}
