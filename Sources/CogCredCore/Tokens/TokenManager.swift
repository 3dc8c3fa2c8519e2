/// A token ready to hand out, with what it says about itself.
public struct IssuedToken: Sendable, Equatable {
    public var value: String
    public var claims: JWTClaims
}

/// Which token a caller wants.
public enum TokenChoice: Sendable {
    case access
    case id

    var kind: SecretKind { self == .access ? .access : .id }
}

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
    let clock: any Clock

    public init(
        profileName: String, profile: Profile, store: any TokenStore,
        cognito: @escaping @Sendable () throws -> any CognitoClient, clock: any Clock = SystemClock()
    ) {
        self.profileName = profileName
        self.profile = profile
        self.store = store
        self.makeCognito = cognito
        self.clock = clock
    }

    public init(profileName: String, profile: Profile, store: any TokenStore, cognito: any CognitoClient, clock: any Clock = SystemClock()) {
        self.init(profileName: profileName, profile: profile, store: store, cognito: { cognito }, clock: clock)
    }

    /// The Cognito client, for account calls made beside the token logic.
    public func cognito() throws -> any CognitoClient { try makeCognito() }

    /// A token with more than the policy's margin of life left, refreshing
    /// (at most once) when the stored one has less.
    public func currentToken(_ choice: TokenChoice, policy: RefreshPolicy = RefreshPolicy()) throws -> IssuedToken {
        if let stored = try store.read(choice.kind, profile: profileName),
            let claims = try? JWT.claims(of: stored),
            policy.isUsable(claims, now: clock.now())
        {
            return IssuedToken(value: stored, claims: claims)
        }
        let result = try refresh()
        let fresh = choice == .access ? result.access : result.id
        guard let fresh else { throw AuthError.malformedToken(choice.kind) }
        // A token whose whole life is shorter than the margin is still handed
        // out after one refresh, as long as it has not expired.
        guard let exp = fresh.claims.exp, exp > clock.now() else {
            throw AuthError.freshTokenExpired(choice.kind)
        }
        return fresh
    }

    /// The tokens a refresh stored.
    public struct RefreshedTokens: Sendable {
        public var access: IssuedToken
        public var id: IssuedToken?
    }

    /// Refreshes now with the stored refresh token and stores the result.
    /// On any failure the stored tokens are left exactly as they were.
    @discardableResult
    public func refresh() throws -> RefreshedTokens {
        guard let refreshToken = try store.read(.refresh, profile: profileName), !refreshToken.isEmpty else {
            throw AuthError.notSignedIn(profile: profileName)
        }
        let cognito = try makeCognito()
        let result: AuthenticationResult
        do {
            result = try cognito.refresh(refreshToken: refreshToken, username: try cognitoUsername())
        } catch let error as CognitoError {
            throw AuthError.cognito(error, operation: .refresh(profile: profileName))
        }
        return try save(result, requireRefreshToken: false)
    }

    /// Signs in with a password and stores the three tokens.
    @discardableResult
    public func signIn(username: String, password: String) throws -> RefreshedTokens {
        let cognito = try makeCognito()
        let outcome: AuthOutcome
        do {
            outcome = try cognito.signInWithPassword(username: username, password: password)
        } catch let error as CognitoError {
            throw AuthError.cognito(error, operation: .signIn)
        }
        switch outcome {
        case .authenticated(let result):
            return try save(result, requireRefreshToken: true)
        case .challenge(let name, _, _):
            throw AuthError.unsupportedChallenge(name)
        }
    }

    /// The name Cognito knows the signed-in user by (the access token's
    /// `username` claim), which SECRET_HASH on a refresh must use: with email
    /// or phone aliases it is not what the user typed. Expired tokens still
    /// say whose they are.
    func cognitoUsername() throws -> String? {
        if let access = try store.read(.access, profile: profileName), let name = (try? JWT.claims(of: access))?.username {
            return name
        }
        if let id = try store.read(.id, profile: profileName), let name = (try? JWT.claims(of: id))?.cognitoUsername {
            return name
        }
        return profile.username
    }

    /// Deletes the profile's tokens: access first and refresh last, so that an
    /// interrupted sign-out can simply be run again. Returns how many existed.
    @discardableResult
    public func signOut() throws(SecretServiceError) -> Int {
        var removed = 0
        for kind in [SecretKind.access, .id, .refresh] where try store.delete(kind, profile: profileName) {
            removed += 1
        }
        return removed
    }

    /// Stores a Cognito result: checks every token first, then writes refresh,
    /// ID, access in that order, so an interruption at any point leaves a
    /// usable refresh token. A result without a refresh token keeps the old one.
    func save(_ result: AuthenticationResult, requireRefreshToken: Bool) throws -> RefreshedTokens {
        guard let accessClaims = try? JWT.claims(of: result.accessToken) else { throw AuthError.malformedToken(.access) }
        var id: IssuedToken? = nil
        if let idToken = result.idToken {
            guard let claims = try? JWT.claims(of: idToken) else { throw AuthError.malformedToken(.id) }
            id = IssuedToken(value: idToken, claims: claims)
        }
        let newRefresh = result.refreshToken.flatMap { $0.isEmpty ? nil : $0 }
        if requireRefreshToken && newRefresh == nil {
            throw AuthError.cognito(.badResponse(httpStatus: 200, detail: "no refresh token in the answer"), operation: .signIn)
        }
        let context = ItemContext(
            userPoolID: profile.userPoolID, clientID: profile.clientID,
            username: accessClaims.subjectName ?? id?.claims.subjectName)
        if let newRefresh {
            try store.write(.refresh, profile: profileName, secret: newRefresh, context: context)
        }
        if let id {
            try store.write(.id, profile: profileName, secret: id.value, context: context)
        } else if requireRefreshToken {
            // A new sign-in without an ID token must not leave the previous user's.
            try store.delete(.id, profile: profileName)
        }
        try store.write(.access, profile: profileName, secret: result.accessToken, context: context)
        return RefreshedTokens(access: IssuedToken(value: result.accessToken, claims: accessClaims), id: id)
    }

    /// What is stored, without any secret in it.
    public func status() throws(SecretServiceError) -> SessionStatus {
        let refresh = try store.read(.refresh, profile: profileName)
        let access = try store.read(.access, profile: profileName).flatMap { try? JWT.claims(of: $0) }
        let id = try store.read(.id, profile: profileName).flatMap { try? JWT.claims(of: $0) }
        return SessionStatus(
            profile: profileName,
            signedIn: refresh.map { !$0.isEmpty } ?? false,
            username: access?.subjectName ?? id?.subjectName ?? profile.username,
            accessTokenExpiresAt: access?.exp,
            idTokenExpiresAt: id?.exp,
            email: id?.email,
            now: clock.now())
    }
}

/// The state of a profile's session: what `status` shows.
public struct SessionStatus: Sendable, Equatable {
    public var profile: String
    /// A refresh token is stored, so tokens can be had without a password.
    public var signedIn: Bool
    public var username: String?
    public var accessTokenExpiresAt: Int64?
    public var idTokenExpiresAt: Int64?
    public var email: String?
    public var now: Int64
}
