import CLinux
import COpenSSL

#if canImport(Glibc)
import Glibc
#endif

/// A short-lived copy of a profile's access and ID tokens, so that `token`
/// and `get-header` need not ask the Secret Service (which costs a D-Bus
/// session) while a token is fresh. The Secret Service stays the source of
/// truth: the cache only ever holds what was just stored there, and is
/// dropped whenever that changes.
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

/// The Linux kernel keyring (keyrings(7)): the user's keyring holds one
/// "user" key per token, with a kernel timeout equal to the time the token
/// stays usable. Keys live in unswappable kernel memory, never on disk; only
/// processes of the same user can read them, the same trust boundary as the
/// Secret Service itself. Where the keyring calls are refused (a container's
/// seccomp filter, say) every call quietly does nothing.
public struct KernelKeyringCache: TokenCache {
    /// Separates caches of different configs and different Secret Services
    /// (another XDG_CONFIG_HOME or session bus) of the same user.
    let namespace: String

    public init(configDirectory: String, busAddress: String) {
        namespace = KernelKeyringCache.hash("\(configDirectory)\u{0}\(busAddress)")
    }

    func description(_ kind: SecretKind, _ profile: String) -> String {
        "cog-cred:\(namespace):\(profile):\(kind.rawValue)"
    }

    public func read(_ kind: SecretKind, profile: String) -> IssuedToken? {
        let key = clinux_key_search(CLINUX_USER_KEYRING, description(kind, profile))
        guard key >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 16384)
        let length = clinux_key_read(key, &buffer, buffer.count)
        guard length > 0, length <= buffer.count else { return nil }
        return KernelKeyringCache.decode(buffer[0..<length])
    }

    public func write(_ token: IssuedToken, kind: SecretKind, profile: String, seconds: Int64) {
        guard seconds > 0, let payload = KernelKeyringCache.encode(token) else {
            drop(kind, profile)
            return
        }
        let key = payload.withUnsafeBytes { clinux_key_add(description(kind, profile), $0.baseAddress, $0.count, CLINUX_USER_KEYRING) }
        guard key >= 0 else { return }
        if clinux_key_set_timeout(key, UInt32(min(seconds, 86_400))) != 0 {
            // A key that cannot expire must not stay.
            clinux_key_invalidate(key)
        }
    }

    public func drop(profile: String) {
        for kind in [SecretKind.access, .id] { drop(kind, profile) }
    }

    func drop(_ kind: SecretKind, _ profile: String) {
        let key = clinux_key_search(CLINUX_USER_KEYRING, description(kind, profile))
        if key >= 0 { clinux_key_invalidate(key) }
    }

    /// "exp iat\nusername\n<token>": what the freshness check and the
    /// helpers need, without decoding the JWT on the fast path.
    static func encode(_ token: IssuedToken) -> [UInt8]? {
        guard let exp = token.claims.exp else { return nil }
        let name = (token.claims.subjectName ?? "").filter { $0 != "\n" }
        return Array("\(exp) \(token.claims.iat ?? 0)\n\(name)\n\(token.value)".utf8)
    }

    static func decode(_ bytes: ArraySlice<UInt8>) -> IssuedToken? {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count == 3 else { return nil }
        let times = String(decoding: lines[0], as: UTF8.self).split(separator: " ")
        guard times.count == 2, let exp = Int64(times[0]), let iat = Int64(times[1]) else { return nil }
        let value = String(decoding: lines[2], as: UTF8.self)
        guard !value.isEmpty else { return nil }
        let name = String(decoding: lines[1], as: UTF8.self)
        return IssuedToken(value: value, claims: JWTClaims(exp: exp, iat: iat == 0 ? nil : iat, username: name.isEmpty ? nil : name))
    }

    static func hash(_ text: String) -> String {
        let digest = Digest.sha256(Array(text.utf8))
        return hexString(Array(digest.prefix(8)))
    }
}
