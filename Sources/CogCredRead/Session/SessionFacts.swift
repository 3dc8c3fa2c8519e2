// What the session commands find out: what is stored (SessionStatus), what
// Cognito said of it (CheckOutcome), what a sign-out did (SignOutResult),
// with their one JSON shape, which the agent's answers carry too.

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
    /// When it was read (the clock of the machine that read it).
    public var now: Int64

    public init(
        profile: String, signedIn: Bool, boundElsewhere: Bool, username: String? = nil, accessTokenExpiresAt: Int64? = nil,
        idTokenExpiresAt: Int64? = nil, email: String? = nil, emailVerified: Bool? = nil, cognitoUsername: String? = nil,
        sub: String? = nil, authTime: Int64? = nil, scope: String? = nil, identityID: String? = nil, awsCredentialsExpireAt: Int64? = nil,
        now: Int64
    ) {
        self.profile = profile
        self.signedIn = signedIn
        self.boundElsewhere = boundElsewhere
        self.username = username
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.idTokenExpiresAt = idTokenExpiresAt
        self.email = email
        self.emailVerified = emailVerified
        self.cognitoUsername = cognitoUsername
        self.sub = sub
        self.authTime = authTime
        self.scope = scope
        self.identityID = identityID
        self.awsCredentialsExpireAt = awsCredentialsExpireAt
        self.now = now
    }

    /// `status --json`'s session fields (what it adds of the profile, the
    /// check and the network aside): times in RFC 3339 UTC, a field absent
    /// when there is nothing to say.
    public var json: [String: JSONValue] {
        var members: [String: JSONValue] = [
            "profile": .string(profile), "signed_in": .bool(signedIn), "bound_elsewhere": .bool(boundElsewhere), "as_of": .string(rfc3339(now)),
        ]
        let texts: [(String, String?)] = [
            ("username", username), ("email", email), ("cognito_username", cognitoUsername), ("sub", sub), ("scopes", scope),
            ("identity_id", identityID),
        ]
        for (key, value) in texts { if let value { members[key] = .string(value) } }
        let times: [(String, Int64?)] = [
            ("access_token_expires_at", accessTokenExpiresAt), ("id_token_expires_at", idTokenExpiresAt), ("auth_time", authTime),
            ("aws_credentials_expire_at", awsCredentialsExpireAt),
        ]
        for (key, value) in times { if let value { members[key] = .string(rfc3339(value)) } }
        if let emailVerified { members["email_verified"] = .bool(emailVerified) }
        if let accessTokenExpiresAt { members["access_token_expired"] = .bool(accessTokenExpiresAt <= now) }
        return members
    }

    /// The status `json` says; nil when its required fields are not there.
    public init?(json: JSONValue?) {
        guard let json, let profile = json["profile"]?.stringValue, let signedIn = json["signed_in"]?.boolValue,
            let now = json["as_of"]?.stringValue.flatMap(rfc3339Seconds)
        else { return nil }
        func time(_ key: String) -> Int64? { json[key]?.stringValue.flatMap(rfc3339Seconds) }
        self.init(
            profile: profile, signedIn: signedIn, boundElsewhere: json["bound_elsewhere"]?.boolValue ?? false,
            username: json["username"]?.stringValue, accessTokenExpiresAt: time("access_token_expires_at"),
            idTokenExpiresAt: time("id_token_expires_at"), email: json["email"]?.stringValue, emailVerified: json["email_verified"]?.boolValue,
            cognitoUsername: json["cognito_username"]?.stringValue, sub: json["sub"]?.stringValue, authTime: time("auth_time"),
            scope: json["scopes"]?.stringValue, identityID: json["identity_id"]?.stringValue,
            awsCredentialsExpireAt: time("aws_credentials_expire_at"), now: now)
    }
}

/// What Cognito said of a session, as said to a person (`status`, and an
/// agent's answer): SessionCheck with its failure in words.
public enum CheckOutcome: Sendable, Equatable {
    case stands(way: SessionCheckWay)
    case refused(AgentFailure)
    case couldNotCheck(AgentFailure)
    case noSession

    /// `status --json`'s `session`: "stands", "refused", "not-checked";
    /// nil for a machine, which has none.
    public var word: String? {
        switch self {
        case .stands: return "stands"
        case .refused: return "refused"
        case .couldNotCheck: return "not-checked"
        case .noSession: return nil
        }
    }
}

/// The one call `checkSession` made: the cheapest one the stored tokens allow.
public enum SessionCheckWay: String, Sendable, Equatable, CaseIterable {
    /// GetUser with the access token: it needs the token's
    /// aws.cognito.signin.user.admin scope (the API's sign-ins have it).
    case getUser = "GetUser"
    /// The managed login's userInfo endpoint: it needs `openid` (a
    /// browser sign-in that asked for it).
    case userInfo
    /// A refresh, which stores the new tokens: for an access token with
    /// neither scope, or one too near its end to be asked about.
    case refresh
}

/// How far sign-out reaches.
public enum SignOutScope: String, Sendable, CaseIterable {
    /// Only the local items.
    case local
    /// RevokeToken: this refresh token and the tokens issued from it.
    case revoke
    /// GlobalSignOut: every token of the user, on every device.
    case global
}

/// What a sign-out did: the items it deleted, and what Cognito was asked
/// and said, so that "revoked" is said only when it was.
public struct SignOutResult: Sendable, Equatable {
    public enum AtCognito: String, Sendable, CaseIterable {
        /// The refresh token was revoked (RevokeToken or /oauth2/revoke) and Cognito accepted it.
        case revoked
        /// GlobalSignOut was sent and accepted.
        case signedOutEverywhere = "signed-out-everywhere"
        /// Cognito said the session had already ended (NotAuthorized).
        case alreadyEnded = "already-ended"
        /// A machine (client credentials): it has no refresh token, so
        /// nothing was sent; its access token works until it expires.
        case nothingToRevoke = "nothing-to-revoke"
        /// Sent, and it failed (no connection, a 5xx, throttling):
        /// `failure` says how. The items were deleted all the same.
        case failed
        /// Nothing was sent: `--local`, no refresh token stored, or
        /// tokens of another pool or client.
        case notAsked = "not-asked"
    }

    public var removed: Int
    public var atCognito: AtCognito
    /// Why the revocation failed, in words (`failed`).
    public var failure: String?
    /// A managed login's `--global`: the address that ends its own session
    /// in the browser (its cookie), without credentials; nil otherwise.
    public var logout: String?

    public init(removed: Int, atCognito: AtCognito, failure: String? = nil, logout: String? = nil) {
        self.removed = removed
        self.atCognito = atCognito
        self.failure = failure
        self.logout = logout
    }
}
