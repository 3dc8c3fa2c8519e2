/// A token ready to hand out, with what it says about itself.
public struct IssuedToken: Sendable, Equatable {
    public var value: String
    public var claims: JWTClaims

    public init(value: String, claims: JWTClaims) {
        self.value = value
        self.claims = claims
    }

    /// `value` as a token, if it is a well-formed compact JWS with readable claims.
    public init?(_ value: String) {
        guard IssuedToken.isWellFormed(value), let claims = try? JWT.claims(of: value) else { return nil }
        self.init(value: value, claims: claims)
    }

    /// Three base64url parts (the last, the signature, may be empty) and
    /// nothing else: only such a value is ever handed out, so nothing stored
    /// in the keyring by another program can inject a line into git's
    /// answer, a header or an `export`.
    public static func isWellFormed(_ value: String) -> Bool {
        // Over the bytes in place: a token is a kilobyte or more, and this
        // runs on every read (through the UTF8View, byte by byte, it cost
        // more than the rest of the token's checks).
        var value = value
        return value.withUTF8 { bytes in
            var dots = 0
            var partLength = 0
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "."):
                    if partLength == 0 { return false }
                    dots += 1
                    partLength = 0
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    partLength += 1
                default:
                    return false
                }
            }
            return dots == 2
        }
    }
}

/// Which token a caller wants.
public enum TokenChoice: Sendable, Equatable {
    case access
    case id

    public var kind: SecretKind { self == .access ? .access : .id }
}

extension JWTClaims {
    /// True when the token says it was issued by the binding's user pool
    /// (`iss` ends in `/<pool id>`) to its app client (`client_id` of an
    /// access token, one of `aud` of an ID token). Unverified: this guards against
    /// handing out the wrong pool's token, not against forgery.
    public func isIssued(to binding: ItemBinding, as kind: SecretKind) -> Bool {
        guard let issuer, issuer.hasSuffix("/" + binding.userPoolID) else { return false }
        return kind == .id ? audiences.contains(binding.clientID) : clientID == binding.clientID
    }
}
