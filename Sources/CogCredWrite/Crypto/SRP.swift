import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The client side of Cognito's Secure Remote Password variant
/// (USER_SRP_AUTH then PASSWORD_VERIFIER), so the password never leaves the
/// machine.
///
/// Cognito's variant is SRP-6a over the 3072-bit group of RFC 5054 with
/// g = 2, SHA-256, k = H(N | g), x = H(salt | H(poolName | userID | ":" | password)),
/// and a 16-byte key from HKDF(ikm: S, salt: u, info: "Caldera Derived Key").
/// Numbers are hashed as "padded hex": the two's-complement bytes of Java's
/// BigInteger.toByteArray (even length, a 00 byte in front when the top bit
/// of a positive number is set), exactly as Amazon's own SDKs do. SALT and
/// SRP_B are read as numbers first, as amazon-cognito-identity-js reads them,
/// so leading zeros are dropped and a leading `-` counts: Cognito has sent
/// such salts. The tests pin this down against pycognito and fixed vectors.
/// All arithmetic is OpenSSL's, with secret exponents on its constant-time path.
public final class SRPClient {
    static let nHex =
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
        + "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
        + "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
        + "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
        + "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
        + "15728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7"
        + "ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200C"
        + "BBE117577A615D6C770988C0BAD946E208E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF"
    static let gHex = "2"

    let group: ModularArithmetic
    let g: BigNumber
    let k: BigNumber
    let a: BigNumber
    /// The public value A = g^a mod N, in hex: SRP_A.
    public let publicA: String
    private let aValue: BigNumber

    /// A fresh client with a random 128-byte private value.
    public convenience init() throws(SRPError) {
        var random = [UInt8](repeating: 0, count: 128)
        guard RAND_bytes(&random, Int32(random.count)) == 1 else { throw .randomFailed }
        try self.init(privateHex: hexString(random))
        for i in random.indices { random[i] = 0 }
    }

    /// A client with a chosen private value, for tests that compare against
    /// another implementation.
    public init(privateHex: String) throws(SRPError) {
        guard let n = BigNumber(hex: SRPClient.nHex), let g = BigNumber(hex: SRPClient.gHex),
            let rawA = BigNumber(hex: privateHex)
        else { throw .malformed("private value") }
        group = ModularArithmetic(modulus: n)
        self.g = g
        k = BigNumber(bytes: Digest.sha256(bytes(fromHex: SRPClient.padHex(SRPClient.nHex) + SRPClient.padHex(SRPClient.gHex))))
        a = group.reduce(rawA)
        a.markSecret()
        aValue = group.power(g, a)
        // A must not be 0 mod N, or the server could learn nothing and neither could we.
        guard !aValue.isZero else { throw .malformed("private value") }
        publicA = aValue.hex
    }

    /// PASSWORD_CLAIM_SIGNATURE for the PASSWORD_VERIFIER challenge.
    ///
    /// - Parameters:
    ///   - poolName: the user pool id after its `region_` prefix.
    ///   - userID: USER_ID_FOR_SRP from the challenge.
    ///   - saltHex, serverBHex, secretBlock: SALT, SRP_B and SECRET_BLOCK from the challenge.
    ///   - timestamp: `SRPClient.timestamp(...)`, sent as TIMESTAMP.
    public func passwordSignature(
        poolName: String, userID: String, password: String, saltHex: String, serverBHex: String, secretBlock: String,
        timestamp: String
    ) throws(SRPError) -> String {
        guard let rawB = BigNumber(signedHex: serverBHex), let paddedB = SRPClient.padHex(signedHex: serverBHex) else {
            throw .malformed("SRP_B")
        }
        guard let paddedSalt = SRPClient.padHex(signedHex: saltHex) else { throw .malformed("SALT") }
        guard !secretBlock.isEmpty else { throw .malformed("SECRET_BLOCK") }
        // Cognito sends base64. moto's emulator sends a UUID instead and never
        // checks the signature; signing its text keeps sign-in working there
        // without weakening anything against the real service.
        let block = Data(base64Encoded: secretBlock).map(Array.init) ?? Array(secretBlock.utf8)
        let b = rawB
        // A B that is 0 mod N would make the shared secret predictable.
        guard !group.reduce(b).isZero else { throw .malformed("SRP_B") }

        let u = BigNumber(bytes: Digest.sha256(bytes(fromHex: SRPClient.padHex(publicA) + paddedB)))
        guard !u.isZero else { throw .malformed("SRP_B") }

        let x = SRPClient.privateKey(poolName: poolName, userID: userID, password: password, paddedSalt: paddedSalt)

        // S = (B - k·g^x)^(a + u·x) mod N
        let gx = group.power(g, x)
        let base = group.subtract(b, group.multiply(k, gx))
        let exponent = group.plainMultiplyAdd(a, u, x)
        let s = group.power(base, exponent)

        guard
            let key = Digest.hkdfSHA256(
                ikm: bytes(fromHex: SRPClient.padHex(s.hex)), salt: bytes(fromHex: SRPClient.padHex(u.hex)),
                info: Array("Caldera Derived Key".utf8), length: 16)
        else { throw .hkdfFailed }

        var message = Array(poolName.utf8)
        message.append(contentsOf: userID.utf8)
        message.append(contentsOf: block)
        message.append(contentsOf: timestamp.utf8)
        return Data(Digest.hmacSHA256(key: key, message: message)).base64EncodedString()
    }

    /// x = H(salt | H(poolName | userID | ":" | password)), the secret the
    /// verifier g^x is made of: of a user's password, or of a device's
    /// (poolName the DeviceGroupKey, userID the DeviceKey).
    static func privateKey(poolName: String, userID: String, password: String, paddedSalt: String) -> BigNumber {
        var identity = Array("\(poolName)\(userID):".utf8)
        identity.append(contentsOf: password.utf8)
        let identityHash = hexString(Digest.sha256(identity))
        for i in identity.indices { identity[i] = 0 }
        let x = BigNumber(bytes: Digest.sha256(bytes(fromHex: paddedSalt + identityHash)))
        x.markSecret()
        return x
    }

    /// Hex as Cognito hashes it: an even number of digits, and a leading 00
    /// byte when the first digit has the top bit set (so it reads as positive).
    /// For hex without leading zeros or sign (what BigNumber.hex writes).
    static func padHex(_ hex: String) -> String {
        if hex.utf8.count % 2 == 1 { return "0" + hex }
        if let first = hex.utf8.first, "89abcdefABCDEF".utf8.contains(first) { return "00" + hex }
        return hex
    }

    /// A signed hex number from a challenge (SALT, SRP_B) padded as
    /// amazon-cognito-identity-js does (`padHex(new BigInteger(text, 16))`):
    /// leading zeros dropped, then the number's two's-complement bytes, so
    /// -0x14 is "ec" and -0xec is "ff14". Nil unless `text` is `-?[0-9a-fA-F]+`.
    static func padHex(signedHex text: String) -> String? {
        guard let digits = signedHexDigits(text) else { return nil }
        let magnitude = String(digits.lowercased().drop { $0 == "0" })
        guard !magnitude.isEmpty else { return "00" }
        let padded = padHex(magnitude)
        guard text.hasPrefix("-") else { return padded }
        // Two's complement of `padded`: every nibble inverted, then one added.
        // The first digit of `padded` is below 8, so the result starts at 8 or
        // above and keeps its length.
        var nibbles = padded.utf8.map { 15 - ($0 <= 57 ? $0 - 48 : $0 - 87) }
        var index = nibbles.count - 1
        while true {
            if nibbles[index] < 15 {
                nibbles[index] += 1
                break
            }
            nibbles[index] = 0
            index -= 1
        }
        var result = String(decoding: nibbles.map { Array("0123456789abcdef".utf8)[Int($0)] }, as: UTF8.self)
        // ff80... says no more than 80...: the shortest form, as Java's toByteArray gives it.
        if result.hasPrefix("ff8") { result.removeFirst(2) }
        return result
    }

    /// The hex digits of `-?[0-9a-fA-F]+`; nil for anything else.
    static func signedHexDigits(_ text: String) -> Substring? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0.isHexDigit }) else { return nil }
        return digits
    }

    /// TIMESTAMP as Cognito expects it: "Mon Nov 2 04:03:01 UTC 2026", in UTC,
    /// English names, day of month without a leading zero.
    public static func timestamp(_ seconds: Int64) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[Int(parts.tm_wday)]) \(months[Int(parts.tm_mon)]) \(parts.tm_mday) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC \(parts.tm_year + 1900)"
    }
}

/// Why an SRP step could not be computed.
public enum SRPError: Error, Equatable, CogCredFailure {
    case malformed(String)
    case randomFailed
    case hkdfFailed

    public var category: FailureCategory {
        switch self {
        case .malformed: return .temporary
        case .randomFailed, .hkdfFailed: return .other
        }
    }

    public var message: String {
        switch self {
        case .malformed(let what): return "Cognito's SRP challenge has an unusable \(what); try again"
        case .randomFailed: return "the system's random number generator failed"
        case .hkdfFailed: return "OpenSSL could not derive the SRP key"
        }
    }
}

extension SRPClient {
    /// The name a user's password is hashed under: the user pool's id
    /// after its `region_` prefix.
    static func poolName(userPoolID: String) -> String {
        userPoolID.split(separator: "_", maxSplits: 1).last.map(String.init) ?? userPoolID
    }

    /// The proof of `password` for the server's step, computed at `now`
    /// (seconds since the epoch): the user's, or with the device's group key
    /// as `poolName` and its key as `userID`, a remembered device's.
    func proof(_ step: SRPServerStep, poolName: String, userID: String, password: String, now: Int64) throws(SRPError) -> PasswordProof {
        let timestamp = SRPClient.timestamp(now)
        let signature = try passwordSignature(
            poolName: poolName, userID: userID, password: password, saltHex: step.salt, serverBHex: step.serverB,
            secretBlock: step.secretBlock, timestamp: timestamp)
        return PasswordProof(secretBlock: step.secretBlock, signature: signature, timestamp: timestamp)
    }
}
