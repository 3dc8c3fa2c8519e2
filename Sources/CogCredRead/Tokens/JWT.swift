import CLinux

/// The claims of a Cognito access or ID token that cog-cred reads.
///
/// cog-cred decodes tokens only to learn when they expire and whom they
/// belong to; it does not trust them for anything else, so it does not check
/// the signature here (the service that receives the token does).
public struct JWTClaims: Sendable, Equatable {
    public var exp: Int64?
    public var iat: Int64?
    public var authTime: Int64?
    public var sub: String?
    /// `username` in an access token: the name Cognito knows the user by.
    public var username: String?
    /// `cognito:username` in an ID token.
    public var cognitoUsername: String?
    public var email: String?
    public var tokenUse: String?
    public var clientID: String?
    public var issuer: String?
    /// `aud` of an ID token: the app client id, or a list that contains it.
    public var audiences: [String] = []
    /// `email_verified`: a boolean, or the string "true"/"false" as Cognito sends it.
    public var emailVerified: Bool?
    /// `scope` of an access token: the granted OAuth scopes, space-separated.
    public var scope: String?
    /// `nonce` of an ID token from the authorization-code flow.
    public var nonce: String?

    public init(exp: Int64? = nil, iat: Int64? = nil, username: String? = nil) {
        self.exp = exp
        self.iat = iat
        self.username = username
    }

    /// The claims of a token's payload. Lenient: a claim of an unexpected
    /// type is taken as absent rather than making the whole token unreadable.
    init(json: JSONValue) {
        exp = Self.seconds(json["exp"])
        iat = Self.seconds(json["iat"])
        authTime = Self.seconds(json["auth_time"])
        sub = json["sub"]?.stringValue
        username = json["username"]?.stringValue
        cognitoUsername = json["cognito:username"]?.stringValue
        email = json["email"]?.stringValue
        tokenUse = json["token_use"]?.stringValue
        clientID = json["client_id"]?.stringValue
        issuer = json["iss"]?.stringValue
        scope = json["scope"]?.stringValue
        nonce = json["nonce"]?.stringValue
        // `aud` is a string, or an array of them (RFC 7519 section 4.1.3).
        audiences = json["aud"]?.stringValue.map { [$0] } ?? json["aud"]?.arrayValue?.compactMap { $0.stringValue } ?? []
        switch json["email_verified"] {
        case .bool(let flag)?: emailVerified = flag
        case .string("true")?: emailVerified = true
        case .string("false")?: emailVerified = false
        default: emailVerified = nil
        }
    }

    /// NumericDate is a JSON number, possibly with a fraction. Clamped to
    /// 0 ... year 9999, so that no arithmetic on it can overflow and no date
    /// formatting can fail, whatever a token says.
    static func seconds(_ value: JSONValue?) -> Int64? {
        switch value {
        case .int(let v)?: return min(max(v, 0), latestSeconds)
        case .double(let v)? where !v.isNaN: return Int64(min(max(v, 0), Double(latestSeconds)))
        default: return nil
        }
    }

    /// 9999-12-31T23:59:59Z: the latest time a claim is taken to say.
    public static let latestSeconds: Int64 = 253_402_300_799

    /// Whoever the token names, whichever kind of token it is.
    public var subjectName: String? { username ?? cognitoUsername }
}

/// Why a string is not a readable JWT. The token itself is never part of it.
public enum JWTError: Error, Equatable, Sendable {
    case notThreeParts
    case badBase64
    case badJSON
}

public enum JWT {
    /// Decodes the payload (middle part) of a compact JWS.
    public static func claims(of token: String) throws(JWTError) -> JWTClaims {
        // The dots found by hand, not by `split`: the array of views `split`
        // builds costs a short-lived process more than the whole decode
        // (its generic metadata is made at run time).
        let bytes = token.utf8
        guard let first = bytes.firstIndex(of: UInt8(ascii: ".")),
            let second = bytes[bytes.index(after: first)...].firstIndex(of: UInt8(ascii: ".")),
            !bytes[bytes.index(after: second)...].contains(UInt8(ascii: "."))
        else { throw .notThreeParts }
        guard let payload = base64URLDecode(bytes[bytes.index(after: first)..<second]) else { throw .badBase64 }
        guard let json = JSONValue.parse(payload), json.objectValue != nil else { throw .badJSON }
        return JWTClaims(json: json)
    }

    /// base64url without padding (RFC 7515 section 2) to bytes; padding is
    /// tolerated. Decoded by glibc's b64_pton (CLinux): the front's Embedded
    /// Swift build cannot compile a Swift base64 package with untyped throws.
    public static func base64URLDecode(_ text: Substring.UTF8View) -> [UInt8]? {
        var end = text.endIndex
        while end > text.startIndex, text[text.index(before: end)] == UInt8(ascii: "=") { end = text.index(before: end) }
        let input = Array(text[..<end])
        var failed = false
        let decoded = [UInt8](unsafeUninitializedCapacity: input.count / 4 * 3 + 3) { buffer, count in
            let written = clinux_base64url_decode(input, input.count, buffer.baseAddress, buffer.count)
            failed = written < 0
            count = max(written, 0)
        }
        return failed ? nil : decoded
    }
}
