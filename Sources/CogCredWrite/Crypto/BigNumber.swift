import COpenSSL

/// An OpenSSL BIGNUM, freed (and cleared: SRP values are secrets) with its owner.
final class BigNumber {
    let raw: OpaquePointer

    private init(_ raw: OpaquePointer) {
        self.raw = raw
    }

    deinit { BN_clear_free(raw) }

    static func make() -> BigNumber {
        // BN_new fails only when memory is exhausted.
        guard let raw = BN_new() else { fatalError("BN_new: out of memory") }
        return BigNumber(raw)
    }

    /// From hexadecimal digits (either case); nil for anything else.
    convenience init?(hex: String) {
        guard !hex.isEmpty, hex.utf8.allSatisfy({ $0.isHexDigit }) else { return nil }
        var pointer: OpaquePointer? = nil
        guard BN_hex2bn(&pointer, hex) == Int32(hex.utf8.count), let pointer else { return nil }
        self.init(pointer)
    }

    /// From hexadecimal digits with an optional leading `-`, as
    /// amazon-cognito-identity-js reads SALT and SRP_B (`new BigInteger(text, 16)`).
    convenience init?(signedHex text: String) {
        guard SRPClient.signedHexDigits(text) != nil else { return nil }
        var pointer: OpaquePointer? = nil
        guard BN_hex2bn(&pointer, text) == Int32(text.utf8.count), let pointer else { return nil }
        self.init(pointer)
    }

    /// From big-endian bytes.
    convenience init(bytes: [UInt8]) {
        guard let pointer = BN_bin2bn(bytes, Int32(bytes.count), nil) else { fatalError("BN_bin2bn: out of memory") }
        self.init(pointer)
    }

    /// Lowercase hex without leading zeros ("0" for zero), as Python's '%x' writes it.
    var hex: String {
        guard let text = BN_bn2hex(raw) else { fatalError("BN_bn2hex: out of memory") }
        defer { CRYPTO_free(text, #file, #line) }
        let upper = String(cString: text)
        let lowered = upper.lowercased()
        let trimmed = lowered.drop(while: { $0 == "0" })
        return trimmed.isEmpty ? "0" : String(trimmed)
    }

    /// Big-endian bytes without leading zeros (none for zero).
    var bytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: (Int(BN_num_bits(raw)) + 7) / 8)
        _ = BN_bn2bin(raw, &out)
        return out
    }

    var isZero: Bool { BN_is_zero(raw) == 1 }

    /// Marks the number as secret so exponentiation takes the constant-time path.
    func markSecret() { BN_set_flags(raw, BN_FLG_CONSTTIME) }
}

/// Arithmetic modulo an odd modulus in one BN_CTX.
final class ModularArithmetic {
    let modulus: BigNumber
    private let context: OpaquePointer

    init(modulus: BigNumber) {
        self.modulus = modulus
        guard let context = BN_CTX_secure_new() ?? BN_CTX_new() else { fatalError("BN_CTX_new: out of memory") }
        self.context = context
    }

    deinit { BN_CTX_free(context) }

    /// base^exponent mod m in constant time with respect to the exponent.
    func power(_ base: BigNumber, _ exponent: BigNumber) -> BigNumber {
        let result = BigNumber.make()
        exponent.markSecret()
        guard BN_mod_exp_mont_consttime(result.raw, base.raw, exponent.raw, modulus.raw, context, nil) == 1 else {
            fatalError("BN_mod_exp_mont_consttime failed")
        }
        return result
    }

    func multiply(_ a: BigNumber, _ b: BigNumber) -> BigNumber {
        let result = BigNumber.make()
        guard BN_mod_mul(result.raw, a.raw, b.raw, modulus.raw, context) == 1 else { fatalError("BN_mod_mul failed") }
        return result
    }

    /// (a - b) mod m, never negative.
    func subtract(_ a: BigNumber, _ b: BigNumber) -> BigNumber {
        let result = BigNumber.make()
        guard BN_mod_sub(result.raw, a.raw, b.raw, modulus.raw, context) == 1 else { fatalError("BN_mod_sub failed") }
        return result
    }

    func reduce(_ a: BigNumber) -> BigNumber {
        let result = BigNumber.make()
        guard BN_nnmod(result.raw, a.raw, modulus.raw, context) == 1 else { fatalError("BN_nnmod failed") }
        return result
    }

    /// a + b * c, not reduced (the SRP exponent a + u·x lives outside the group).
    func plainMultiplyAdd(_ a: BigNumber, _ b: BigNumber, _ c: BigNumber) -> BigNumber {
        let product = BigNumber.make()
        let sum = BigNumber.make()
        guard BN_mul(product.raw, b.raw, c.raw, context) == 1, BN_add(sum.raw, a.raw, product.raw) == 1 else {
            fatalError("BN_mul/BN_add failed")
        }
        return sum
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        (self >= 48 && self <= 57) || (self >= 65 && self <= 70) || (self >= 97 && self <= 102)
    }
}

/// Hex digits to bytes; the caller guarantees an even count of hex digits.
func bytes(fromHex hex: String) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(hex.utf8.count / 2)
    var high: UInt8? = nil
    for c in hex.utf8 {
        let v: UInt8 = c <= 57 ? c - 48 : (c | 0x20) - 87
        if let h = high {
            out.append(h << 4 | v)
            high = nil
        } else {
            high = v
        }
    }
    return out
}

func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 0xF)])
    }
    return String(decoding: out, as: UTF8.self)
}
