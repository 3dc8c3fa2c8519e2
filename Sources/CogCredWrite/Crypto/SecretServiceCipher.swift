import COpenSSL

/// The Secret Service's "dh-ietf1024-sha256-aes128-cbc-pkcs7" transfer
/// encryption (Secret Service API, "Transfer of Secrets"): a Diffie-Hellman
/// exchange in the 1024-bit MODP group of RFC 2409, HKDF-SHA256 of the shared
/// value (no salt, no info) to a 16-byte key, then AES-128-CBC with PKCS#7
/// padding and a fresh IV per secret. It keeps tokens unreadable to anything
/// that sees the bus traffic (dbus-monitor, a proxy), as libsecret does; all
/// of it is OpenSSL's, none of it hand-rolled.
public final class SecretServiceCipher: SecretSessionAlgorithm {
    static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
    public var name: String { Self.algorithm }
    public var input: [UInt8] { publicKey }

    /// RFC 2409 section 6.2, the Second Oakley Group; generator 2.
    static let primeHex =
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
        + "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
        + "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF"
    static let primeLength = 128

    private let group = ModularArithmetic(modulus: BigNumber(hex: primeHex)!)
    private let privateKey: BigNumber
    /// Our public value, big-endian without leading zeros, for OpenSession.
    let publicKey: [UInt8]
    private var key: [UInt8] = []

    public init() {
        privateKey = BigNumber(bytes: SecretServiceCipher.randomBytes(SecretServiceCipher.primeLength))
        publicKey = group.power(BigNumber(bytes: [2]), privateKey).bytes
    }

    deinit {
        key.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
    }

    /// Derives the AES key from the service's public value; false when that
    /// value is not a proper element of the group (1 < y < p - 1).
    public func agree(serverPublicKey: [UInt8]) -> Bool {
        let peer = BigNumber(bytes: serverPublicKey)
        let one = BigNumber(bytes: [1])
        let pMinusOne = group.subtract(group.modulus, one)
        guard BN_cmp(peer.raw, one.raw) > 0, BN_cmp(peer.raw, pMinusOne.raw) < 0 else { return false }
        var shared = group.power(peer, privateKey).bytes
        defer { shared.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        // Left-padded to the prime's length, as gnome-keyring and libsecret do.
        shared = [UInt8](repeating: 0, count: SecretServiceCipher.primeLength - shared.count) + shared
        guard let derived = Digest.hkdfSHA256(ikm: shared, salt: [], info: [], length: 16) else { return false }
        key = derived
        return true
    }

    /// (IV, ciphertext) of `plaintext`.
    public func encrypt(_ plaintext: [UInt8]) -> (parameters: [UInt8], value: [UInt8])? {
        let iv = SecretServiceCipher.randomBytes(16)
        guard let value = crypt(plaintext, iv: iv, encrypting: true) else { return nil }
        return (iv, value)
    }

    /// The plaintext, or nil when the IV or the padding is wrong.
    public func decrypt(parameters iv: [UInt8], value: [UInt8]) -> [UInt8]? {
        guard iv.count == 16, !value.isEmpty, value.count % 16 == 0 else { return nil }
        return crypt(value, iv: iv, encrypting: false)
    }

    private func crypt(_ input: [UInt8], iv: [UInt8], encrypting: Bool) -> [UInt8]? {
        guard key.count == 16, let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0, final: Int32 = 0
        let ok = output.withUnsafeMutableBufferPointer { out -> Bool in
            guard EVP_CipherInit_ex(context, EVP_aes_128_cbc(), nil, key, iv, encrypting ? 1 : 0) == 1,
                EVP_CipherUpdate(context, out.baseAddress, &written, input, Int32(input.count)) == 1
            else { return false }
            return EVP_CipherFinal_ex(context, out.baseAddress! + Int(written), &final) == 1
        }
        guard ok else {
            output.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
            return nil
        }
        return Array(output[0..<Int(written + final)])
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        // RAND_bytes fails only when the OS cannot seed it (no getrandom).
        precondition(RAND_bytes(&bytes, Int32(count)) == 1, "RAND_bytes failed")
        return bytes
    }
}
