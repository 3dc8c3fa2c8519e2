import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// A token as the cache keeps it: the value and what the freshness check
/// and the helpers need, so the fast path never decodes a JWT.
public struct CachedToken: Sendable, Equatable {
    public var value: String
    public var exp: Int64
    public var iat: Int64?
    public var username: String?

    public init(value: String, exp: Int64, iat: Int64?, username: String?) {
        self.value = value
        self.exp = exp
        self.iat = iat
        self.username = username
    }

    /// "exp iat\nusername\n<token>"
    var payload: [UInt8] {
        let name = (username ?? "").filter { $0 != "\n" }
        return Array("\(exp) \(iat ?? 0)\n\(name)\n\(value)".utf8)
    }

    init?(payload: ArraySlice<UInt8>) {
        let lines = payload.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count == 3 else { return nil }
        let times = String(decoding: lines[0], as: UTF8.self).split(separator: " ")
        guard times.count == 2, let exp = Int64(times[0]), let iat = Int64(times[1]) else { return nil }
        let value = String(decoding: lines[2], as: UTF8.self)
        guard !value.isEmpty else { return nil }
        let name = String(decoding: lines[1], as: UTF8.self)
        self.init(value: value, exp: exp, iat: iat == 0 ? nil : iat, username: name.isEmpty ? nil : name)
    }
}

/// Fresh tokens in the Linux kernel keyring (keyrings(7)): the user's
/// keyring holds one "user" key per token, with a kernel timeout equal to
/// the time the token stays usable. Keys live in unswappable kernel memory,
/// never on disk; only processes of the same user can read them, the same
/// trust boundary as the Secret Service. The Secret Service stays the source
/// of truth: the cache only holds what was just stored there and is dropped
/// whenever that changes. Where the keyring calls are refused (a container's
/// seccomp filter, say) every call quietly does nothing.
public struct KeyringTokenCache: Sendable {
    /// Separates caches of different configs and different Secret Services
    /// (another XDG_CONFIG_HOME or session bus) of the same user.
    let namespace: String

    public init(configDirectory: String, busAddress: String) {
        namespace = KeyringTokenCache.fnv1a("\(configDirectory)\u{0}\(busAddress)")
    }

    /// kind: "access" or "id".
    func description(_ kind: String, _ profile: String) -> String {
        "cog-cred:\(namespace):\(profile):\(kind)"
    }

    public func read(_ kind: String, profile: String) -> CachedToken? {
        let key = clinux_key_search(CLINUX_USER_KEYRING, description(kind, profile))
        guard key >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 16384)
        let length = clinux_key_read(key, &buffer, buffer.count)
        guard length > 0, length <= buffer.count else { return nil }
        return CachedToken(payload: buffer[0..<length])
    }

    /// Keeps `token` for `seconds`; nothing is kept when that is not positive.
    public func write(_ token: CachedToken, kind: String, profile: String, seconds: Int64) {
        guard seconds > 0 else {
            drop(kind, profile)
            return
        }
        let payload = token.payload
        let key = payload.withUnsafeBytes { clinux_key_add(description(kind, profile), $0.baseAddress, $0.count, CLINUX_USER_KEYRING) }
        guard key >= 0 else { return }
        if clinux_key_set_timeout(key, UInt32(min(seconds, 86_400))) != 0 {
            // A key that cannot expire must not stay.
            clinux_key_invalidate(key)
        }
    }

    public func drop(_ kind: String, _ profile: String) {
        let key = clinux_key_search(CLINUX_USER_KEYRING, description(kind, profile))
        if key >= 0 { clinux_key_invalidate(key) }
    }

    /// A namespace separator, not a secret: FNV-1a needs no crypto library.
    static func fnv1a(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
