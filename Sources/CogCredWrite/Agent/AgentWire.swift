// The shapes of what the agent's operations carry beyond a token (see
// AgentProtocol for the lines themselves): both sides encode and decode here.

enum AgentWire {
    static func status(_ s: SessionStatus) -> JSONValue {
        var members: [String: JSONValue] = [
            "profile": .string(s.profile), "signed-in": .bool(s.signedIn), "bound-elsewhere": .bool(s.boundElsewhere), "now": .int(s.now),
        ]
        let texts: [(String, String?)] = [
            ("username", s.username), ("email", s.email), ("cognito-username", s.cognitoUsername), ("sub", s.sub), ("scope", s.scope),
            ("identity-id", s.identityID),
        ]
        for (key, value) in texts { if let value { members[key] = .string(value) } }
        let times: [(String, Int64?)] = [
            ("access-expires", s.accessTokenExpiresAt), ("id-expires", s.idTokenExpiresAt), ("auth-time", s.authTime),
            ("aws-expires", s.awsCredentialsExpireAt),
        ]
        for (key, value) in times { if let value { members[key] = .int(value) } }
        if let verified = s.emailVerified { members["email-verified"] = .bool(verified) }
        return .object(members)
    }

    static func status(_ v: JSONValue?) -> SessionStatus? {
        guard let v, let profile = v["profile"]?.stringValue, let signedIn = v["signed-in"]?.boolValue, let now = int(v["now"]) else { return nil }
        return SessionStatus(
            profile: profile, signedIn: signedIn, boundElsewhere: v["bound-elsewhere"]?.boolValue ?? false,
            username: v["username"]?.stringValue, accessTokenExpiresAt: int(v["access-expires"]), idTokenExpiresAt: int(v["id-expires"]),
            email: v["email"]?.stringValue, emailVerified: v["email-verified"]?.boolValue, cognitoUsername: v["cognito-username"]?.stringValue,
            sub: v["sub"]?.stringValue, authTime: int(v["auth-time"]), scope: v["scope"]?.stringValue, identityID: v["identity-id"]?.stringValue,
            awsCredentialsExpireAt: int(v["aws-expires"]), now: now)
    }

    static let ways: [(SessionCheckWay, String)] = [(.getUser, "get-user"), (.userInfo, "user-info"), (.refresh, "refresh")]

    static func check(_ c: SessionCheck, _ describe: (any Error) -> AgentFailure) -> JSONValue {
        switch c {
        case .stands(let way): return .object(["stands": .string(ways.first { $0.0 == way }!.1)])
        case .refused(let failure): return .object(["refused": failureFields(describe(failure))])
        case .couldNotCheck(let failure): return .object(["could-not-check": failureFields(describe(failure))])
        case .noSession: return .object(["no-session": .bool(true)])
        }
    }

    static func check(_ v: JSONValue?) -> SessionCheck? {
        if let way = v?["stands"]?.stringValue { return ways.first { $0.1 == way }.map { .stands(way: $0.0) } }
        if let failure = failure(v?["refused"]) { return .refused(failure) }
        if let failure = failure(v?["could-not-check"]) { return .couldNotCheck(failure) }
        return v?["no-session"] == .bool(true) ? .noSession : nil
    }

    static func failureFields(_ failure: AgentFailure) -> JSONValue {
        .object(["category": .string(failure.category.wireName), "message": .string(failure.message)])
    }

    static func failure(_ v: JSONValue?) -> AgentFailure? {
        guard let message = v?["message"]?.stringValue else { return nil }
        return AgentFailure(FailureCategory(wireName: v?["category"]?.stringValue ?? ""), message)
    }

    static func stored(_ s: StoredSecret) -> JSONValue {
        switch s {
        case .found(let value): return .object(["found": .string(value)])
        case .absent: return .object(["absent": .bool(true)])
        case .boundElsewhere(let unbound): return .object(["bound-elsewhere": .bool(true), "unbound": .bool(unbound)])
        case .withheld: return .object(["withheld": .bool(true)])
        }
    }

    static func stored(_ v: JSONValue?) -> StoredSecret? {
        if let value = v?["found"]?.stringValue { return .found(value) }
        if v?["absent"] == .bool(true) { return .absent }
        if v?["withheld"] == .bool(true) { return .withheld }
        if v?["bound-elsewhere"] == .bool(true) { return .boundElsewhere(unbound: v?["unbound"]?.boolValue ?? false) }
        return nil
    }

    static func binding(_ b: ItemBinding?) -> JSONValue {
        guard let b else { return .null }
        return .object(["user-pool-id": .string(b.userPoolID), "client-id": .string(b.clientID)])
    }

    static func binding(_ v: JSONValue?) -> ItemBinding? {
        guard let pool = v?["user-pool-id"]?.stringValue, let client = v?["client-id"]?.stringValue else { return nil }
        return ItemBinding(userPoolID: pool, clientID: client)
    }

    static func context(_ c: ItemContext) -> JSONValue {
        var members: [String: JSONValue] = ["user-pool-id": .string(c.userPoolID), "client-id": .string(c.clientID)]
        if let username = c.username { members["username"] = .string(username) }
        return .object(members)
    }

    static func context(_ v: JSONValue?) -> ItemContext? {
        guard let binding = binding(v) else { return nil }
        return ItemContext(userPoolID: binding.userPoolID, clientID: binding.clientID, username: v?["username"]?.stringValue)
    }

    static let scopes: [(SignOutScope, String)] = [(.local, "local"), (.revoke, "revoke"), (.global, "global")]

    static func int(_ v: JSONValue?) -> Int64? {
        if case .int(let value)? = v { return value }
        return nil
    }
}
