// What `status` shows: what is stored, without any secret in it, and with
// `--verify` each stored token checked as an API that receives it would.

extension StoredSession {
    /// What is stored, without any secret in it.
    public func status() throws(SecretServiceError) -> SessionStatus {
        var kinds: [SecretKind] = [.refresh, .access, .id]
        if profile.identityPoolID != nil { kinds += [.identityID, .awsCredentials] }
        let found = try store.read(kinds, profile: profileName, binding: profile.binding)
        let refresh = found[.refresh]?.value
        let access = found[.access]?.value.flatMap(IssuedToken.init)?.claims
        let id = found[.id]?.value.flatMap(IssuedToken.init)?.claims
        let aws = AWSCredentials(found: found, identityPoolID: profile.identityPoolID)
        return SessionStatus(
            profile: profileName,
            // A machine has no refresh token: its access token is its session.
            signedIn: profile.effectiveGrant == .clientCredentials ? access != nil : refresh.map { !$0.isEmpty } ?? false,
            boundElsewhere: found.values.contains { if case .boundElsewhere = $0 { return true } else { return false } },
            username: access?.subjectName ?? id?.subjectName ?? profile.username,
            accessTokenExpiresAt: access?.exp,
            idTokenExpiresAt: id?.exp,
            email: id?.email,
            emailVerified: id?.emailVerified,
            cognitoUsername: id?.cognitoUsername,
            sub: id?.sub ?? access?.sub,
            authTime: id?.authTime ?? access?.authTime,
            scope: access?.scope,
            identityID: found[.identityID]?.value,
            awsCredentialsExpireAt: aws?.expiration,
            now: clock.now())
    }

}

extension TokenManager {
    /// Who is signed in: Cognito's name for the user (a machine profile's,
    /// its app client's), from the stored tokens alone (`whoami`).
    public func signedInName() throws -> String {
        let session = try status()
        // A machine's access token names no user: its app client (the
        // profile's, which the stored token is bound to) is who it is.
        let machine = profile.effectiveGrant == .clientCredentials
        guard session.signedIn, let name = machine ? profile.clientID : session.username else {
            throw AuthError.notSignedIn(profile: profileName)
        }
        return name
    }
}


/// What `status` shows.
public struct StatusReport: Sendable {
    public var session: SessionStatus
    /// `--verify`'s checks of each stored access and ID token, in that
    /// order; nil when not asked for, or not signed in.
    public var checks: [(kind: SecretKind, checks: [VerificationCheck])]?

    /// Why the session did not pass `--verify`: its first failed check, or
    /// no token to check (signed in on the strength of the refresh token
    /// alone, nothing was verified); nil when it passed or was not asked.
    public var verificationFailure: AuthError? {
        guard let checks else { return nil }
        let failed = checks.lazy.flatMap { kind, list in list.filter { !$0.passed }.map { "\(kind.rawValue) \($0.name): \($0.detail)" } }
        if let first = failed.first { return .verificationFailed(first) }
        return checks.isEmpty ? .verificationFailed("no access or ID token is stored to check") : nil
    }
}

/// Where `status --verify` finds the pool's keys: the verifier that fetches
/// them, and where they are published at the endpoint in use.
public struct PoolKeySource: Sendable {
    public var verifier: TokenVerifier
    public var pool: TokenVerifier.PoolKeys

    public init(verifier: TokenVerifier, pool: TokenVerifier.PoolKeys) {
        self.verifier = verifier
        self.pool = pool
    }
}

extension TokenManager {
    /// The status, and with `keys` (made only when there are tokens to
    /// check: resolving the endpoint may fail) each stored access and ID
    /// token checked against the pool's published keys (JWKS).
    public func status(verifying keys: (() throws -> PoolKeySource)?) throws -> StatusReport {
        let session = try status()
        guard let keys, session.signedIn else { return StatusReport(session: session) }
        let source = try keys()
        let published: [JSONWebKey]
        do {
            published = try source.verifier.fetchKeys(source.pool.jwksURL)
        } catch {
            throw AuthError.cognito(error, operation: .fetchKeys)
        }
        var checks: [(kind: SecretKind, checks: [VerificationCheck])] = []
        for kind in [SecretKind.access, .id] {
            guard let token = try store.read(kind, profile: profileName, binding: profile.binding) else { continue }
            checks.append(
                (kind, source.verifier.verify(token, kind: kind, keys: published, issuers: source.pool.issuers, clientID: profile.clientID, now: clock.now())))
        }
        return StatusReport(session: session, checks: checks)
    }
}
