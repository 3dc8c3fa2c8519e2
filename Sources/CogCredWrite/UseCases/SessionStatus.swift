// What `status` shows: what is stored, without any secret in it.

extension TokenManager {
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
    public var now: Int64
}
