extension String {
    /// Percent-encoded for any part of a URI (RFC 3986): every byte but the
    /// unreserved characters (letters, digits, `-._~`) as `%XX`. The one
    /// encoder for query strings, form bodies and otpauth:// labels: what
    /// it leaves alone means the same everywhere, and a form decoder reads
    /// `%20` as it reads `+`.
    public var percentEncoded: String {
        let hex = Array("0123456789ABCDEF")
        var out = ""
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%\(hex[Int(byte >> 4)])\(hex[Int(byte & 0xF)])"
            }
        }
        return out
    }
}

/// `application/x-www-form-urlencoded` bodies and queries: `name=value` pairs joined by `&`.
enum FormBody {
    static func encode(_ fields: [(String, String)]) -> String {
        fields.map { $0.0.percentEncoded + "=" + $0.1.percentEncoded }.joined(separator: "&")
    }
}

/// otpauth:// URIs (the Key URI Format authenticator apps scan).
public enum TOTPURI {
    public static func make(secret: String, account: String, issuer: String) -> String {
        "otpauth://totp/\(issuer.percentEncoded):\(account.percentEncoded)?secret=\(secret.percentEncoded)&issuer=\(issuer.percentEncoded)"
    }
}
