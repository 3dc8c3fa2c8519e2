/// The two bits of CBOR (RFC 8949) a passkey needs that libfido2 1.12
/// does not do: reading the authenticator data out of the byte string it
/// hands an assertion's over in (its raw accessor came in 1.14), and
/// writing the attestation object a registration sends (WebAuthn 6.5.4).
/// Only definite lengths, as CTAP2's canonical CBOR has.
public enum CBOR {
    /// The content of the byte string that is the whole of `bytes`; nil for
    /// anything else (another type, a length that does not match).
    public static func byteString(_ bytes: [UInt8]) -> [UInt8]? {
        guard let first = bytes.first, first >> 5 == 2 else { return nil }
        let additional = Int(first & 0x1F)
        var length = 0
        var start = 1
        switch additional {
        case 0..<24: length = additional
        case 24...27:
            let size = 1 << (additional - 24)
            guard bytes.count >= 1 + size else { return nil }
            for byte in bytes[1...size] {
                guard length <= Int.max >> 8 else { return nil }
                length = length << 8 | Int(byte)
            }
            start = 1 + size
        default: return nil  // indefinite lengths and reserved values
        }
        guard bytes.count - start == length else { return nil }
        return Array(bytes[start...])
    }

    /// `{"fmt": format, "attStmt": statement, "authData": authenticatorData}`;
    /// `statement` is CBOR already (a map), as libfido2 gives it.
    public static func attestationObject(format: String, statement: [UInt8], authenticatorData: [UInt8]) -> [UInt8] {
        // The keys in CTAP2's canonical order: shorter first.
        var out = header(major: 5, length: 3)
        out += text("fmt") + text(format)
        out += text("attStmt") + statement
        out += text("authData") + header(major: 2, length: authenticatorData.count) + authenticatorData
        return out
    }

    /// Whether `bytes` begins with a map, as an attestation statement must.
    public static func isMap(_ bytes: [UInt8]) -> Bool { bytes.first.map { $0 >> 5 == 5 } ?? false }

    static func text(_ string: String) -> [UInt8] {
        header(major: 3, length: string.utf8.count) + Array(string.utf8)
    }

    static func header(major: UInt8, length: Int) -> [UInt8] {
        let type = major << 5
        switch length {
        case 0..<24: return [type | UInt8(length)]
        case 24..<0x100: return [type | 24, UInt8(length)]
        case 0x100..<0x10000: return [type | 25, UInt8(length >> 8), UInt8(length & 0xFF)]
        default: return [type | 26] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: length >> ($0 * 8)) }
        }
    }
}
