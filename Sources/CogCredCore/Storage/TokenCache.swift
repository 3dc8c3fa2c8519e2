import CogCredCache

/// A short-lived copy of a profile's access and ID tokens, so that handing
/// out a fresh token need not ask the Secret Service (which costs a D-Bus
/// session). See `KeyringTokenCache` for the kernel-keyring one.
public protocol TokenCache: Sendable {
    func read(_ kind: SecretKind, profile: String) -> IssuedToken?
    /// Keeps `token` for at most `seconds`.
    func write(_ token: IssuedToken, kind: SecretKind, profile: String, seconds: Int64)
    func drop(profile: String)
}

/// No cache at all.
public struct NoTokenCache: TokenCache {
    public init() {}
    public func read(_ kind: SecretKind, profile: String) -> IssuedToken? { nil }
    public func write(_ token: IssuedToken, kind: SecretKind, profile: String, seconds: Int64) {}
    public func drop(profile: String) {}
}

/// The kernel-keyring cache that the fast `cog-cred` front binary reads.
public struct KernelKeyringCache: TokenCache {
    let keyring: KeyringTokenCache

    public init(configDirectory: String, busAddress: String) {
        keyring = KeyringTokenCache(configDirectory: configDirectory, busAddress: busAddress)
    }

    public func read(_ kind: SecretKind, profile: String) -> IssuedToken? {
        guard let cached = keyring.read(kind.rawValue, profile: profile) else { return nil }
        return IssuedToken(value: cached.value, claims: JWTClaims(exp: cached.exp, iat: cached.iat, username: cached.username))
    }

    public func write(_ token: IssuedToken, kind: SecretKind, profile: String, seconds: Int64) {
        guard let exp = token.claims.exp else {
            keyring.drop(kind.rawValue, profile)
            return
        }
        let cached = CachedToken(value: token.value, exp: exp, iat: token.claims.iat, username: token.claims.subjectName)
        keyring.write(cached, kind: kind.rawValue, profile: profile, seconds: seconds)
    }

    public func drop(profile: String) {
        for kind in [SecretKind.access, .id] { keyring.drop(kind.rawValue, profile) }
    }
}
