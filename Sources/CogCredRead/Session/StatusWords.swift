// What `status` prints of a session, as lines and as `--json`'s object, in
// one place: cog-cred-cli prints it, and so does the front through an agent
// (Front). cog-cred-cli adds what only it knows: where this machine's
// requests go (endpoint, proxy) and `--verify`'s checks.

public struct StatusWords {
    public var session: SessionStatus
    public var profile: Profile
    /// What Cognito said; nil when not asked (not signed in, `--offline`).
    public var check: CheckOutcome?
    public var offline: Bool
    /// The socket of the agent that sends the profile's requests (with its
    /// own network settings), if one does.
    public var agent: String?

    /// A session Cognito refused is not called signed in.
    public init(_ session: SessionStatus, _ profile: Profile, check: CheckOutcome?, offline: Bool, agent: String?) {
        self.session = session
        if case .refused? = check { self.session.signedIn = false }
        self.profile = profile
        self.check = check
        self.offline = offline
        self.agent = agent
    }

    var machine: Bool { profile.effectiveGrant == .clientCredentials }

    /// The access token's scopes, else the profile's.
    var scopes: String? { session.scope ?? (profile.scopes.map { $0.joined(separator: " ") }) }

    /// The `session:` line's words: what Cognito said, or why it was not asked.
    var sessionWords: String? {
        switch check {
        case .stands(.getUser)?: return "stands (Cognito answered GetUser)"
        case .stands(.userInfo)?: return "stands (the managed login's userInfo answered)"
        case .stands(.refresh)?: return "stands (Cognito refreshed the tokens)"
        case .refused?: return "refused by Cognito: sign in again"
        case .couldNotCheck?: return "not checked: Cognito could not be asked"
        case .noSession?: return nil
        case nil: return offline ? "not checked (--offline)" : nil
        }
    }

    /// The text, one fact a line; with an agent, its `network:` line last.
    public var lines: [String] {
        let s = session
        func expiry(_ exp: Int64?) -> String {
            guard let exp else { return "none stored" }
            return exp > s.now ? "expires \(rfc3339(exp)) (\(humanDuration(exp - s.now)))" : "expired \(rfc3339(exp))"
        }
        var lines = ["profile:       \(s.profile)", "signed in:     \(s.signedIn ? "yes" : "no")"]
        if let words = sessionWords { lines.append("session:       \(words)") }
        // Claims are text from the network: one printable line each, so a
        // claim can neither drive the terminal nor forge a line of its own.
        if let username = s.username { lines.append("username:      \(username.oneLine(limit: 200))") }
        if let name = s.cognitoUsername, name != s.username { lines.append("cognito:username: \(name.oneLine(limit: 200))") }
        if let email = s.email {
            let verified = s.emailVerified.map { $0 ? " (verified)" : " (not verified)" } ?? ""
            lines.append("email:         \(email.oneLine(limit: 200))\(verified)")
        }
        if let sub = s.sub { lines.append("sub:           \(sub.oneLine(limit: 200))") }
        lines.append("user pool:     \(profile.userPoolID) (app client \(profile.clientID))")
        if machine {
            lines.append("grant:         client credentials (the app client itself, no user)")
            lines.append("scopes:        \((scopes ?? "the app client's default").oneLine(limit: 200))")
        }
        if let authTime = s.authTime { lines.append("signed in at:  \(rfc3339(authTime))") }
        if s.signedIn || s.accessTokenExpiresAt != nil {
            lines.append("access token:  \(expiry(s.accessTokenExpiresAt))")
            if !machine { lines.append("id token:      \(expiry(s.idTokenExpiresAt))") }
        }
        if let pool = profile.identityPoolID {
            lines.append("identity pool: \(pool)")
            lines.append("identity id:   \(s.identityID?.oneLine(limit: 100) ?? "not asked for yet")")
            lines.append("AWS creds:     \(s.awsCredentialsExpireAt == nil ? "none stored" : expiry(s.awsCredentialsExpireAt))")
        }
        if s.boundElsewhere { lines.append("stored tokens: issued by another user pool or app client than this profile names") }
        if !s.signedIn { lines.append("to sign in:    cog-cred sign-in\(s.profile == "default" ? "" : " --profile \(s.profile)")") }
        if let agent {
            lines.append("network:       the agent at \(agent.oneLine(limit: 200)) sends this profile's requests, with its own proxy and FIPS settings")
        }
        return lines
    }

    /// `status --json`'s members: the session's (SessionStatus.json, but
    /// `as_of`, which only the agent's answer needs), the profile's, what
    /// Cognito said (`session`: "stands", "refused", "not-checked",
    /// "offline"; absent when not signed in and for a machine) and
    /// `requests_by_agent`. Field names are part of the interface.
    public var json: [String: JSONValue] {
        var members = session.json
        members["as_of"] = nil
        members["user_pool_id"] = .string(profile.userPoolID)
        members["client_id"] = .string(profile.clientID)
        members["grant"] = .string(profile.effectiveGrant.rawValue)
        if let scopes { members["scopes"] = .string(scopes) }
        if let pool = profile.identityPoolID { members["identity_pool_id"] = .string(pool) }
        let word: String? = if let check { check.word } else { session.signedIn ? "offline" : nil }
        if let word { members["session"] = .string(word) }
        if case .stands(let way)? = check { members["session_checked_by"] = .string(way.rawValue) }
        if let agent { members["requests_by_agent"] = .string(agent) }
        return members
    }

    /// What `status` can say with the keyring locked: the profile, and that
    /// its session cannot be read (neither signed in nor out: unknown),
    /// as lines and as `--json`'s members (`"keyring": "locked"`,
    /// `"signed_in": null`). The command still fails with the keyring's 69.
    public static func lockedKeyring(profile name: String, _ profile: Profile) -> (lines: [String], json: [String: JSONValue]) {
        let lines = [
            "profile:       \(name)",
            "keyring:       locked",
            "signed in:     unknown: the keyring is locked (cog-cred unlock unlocks it)",
            "user pool:     \(profile.userPoolID) (app client \(profile.clientID))",
        ]
        let json: [String: JSONValue] = [
            "profile": .string(name), "keyring": .string("locked"), "signed_in": .null,
            "user_pool_id": .string(profile.userPoolID), "client_id": .string(profile.clientID),
            "grant": .string(profile.effectiveGrant.rawValue),
        ]
        return (lines, json)
    }

    /// What fails the command after the text is printed: Cognito refused
    /// the session (its failure), or could not be asked (75). Otherwise it
    /// exits 0, or 77 when not signed in (the text's last line says so).
    public var failure: AgentFailure? {
        switch check {
        case .refused(let failure)?: return failure
        case .couldNotCheck(let failure)?:
            return AgentFailure(
                .temporary, "could not check the session with Cognito: \(failure.message) (cog-cred status --offline shows what is stored)")
        default: return nil
        }
    }
}
