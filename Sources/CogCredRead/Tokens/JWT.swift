#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The claims of a Cognito access or ID token that cog-cred reads.
///
/// cog-cred decodes tokens only to learn when they expire and whom they
/// belong to; it does not trust them for anything else, so it does not check
/// the signature here (the service that receives the token does).
public struct JWTClaims: Decodable, Sendable, Equatable {
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
    /// `aud` of an ID token: the app client id.
    public var audience: String?
    /// `email_verified`: a boolean, or the string "true"/"false" as Cognito sends it.
    public var emailVerified: Bool?

    enum CodingKeys: String, CodingKey {
        case exp, iat, sub, username, email
        case audience = "aud"
        case emailVerified = "email_verified"
        case authTime = "auth_time"
        case cognitoUsername = "cognito:username"
        case tokenUse = "token_use"
        case clientID = "client_id"
        case issuer = "iss"
    }

    public init(exp: Int64? = nil, iat: Int64? = nil, username: String? = nil) {
        self.exp = exp
        self.iat = iat
        self.username = username
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        exp = c.lenientSeconds(.exp)
        iat = c.lenientSeconds(.iat)
        authTime = c.lenientSeconds(.authTime)
        sub = try? c.decodeIfPresent(String.self, forKey: .sub)
        username = try? c.decodeIfPresent(String.self, forKey: .username)
        cognitoUsername = try? c.decodeIfPresent(String.self, forKey: .cognitoUsername)
        email = try? c.decodeIfPresent(String.self, forKey: .email)
        tokenUse = try? c.decodeIfPresent(String.self, forKey: .tokenUse)
        clientID = try? c.decodeIfPresent(String.self, forKey: .clientID)
        issuer = try? c.decodeIfPresent(String.self, forKey: .issuer)
        audience = (try? c.decodeIfPresent(String.self, forKey: .audience)) ?? (try? c.decodeIfPresent([String].self, forKey: .audience))?.first
        if let flag = try? c.decodeIfPresent(Bool.self, forKey: .emailVerified) {
            emailVerified = flag
        } else if let text = try? c.decodeIfPresent(String.self, forKey: .emailVerified) {
            emailVerified = text == "true" ? true : text == "false" ? false : nil
        }
    }

    /// 9999-12-31T23:59:59Z: the latest time a claim is taken to say.
    public static let latestSeconds: Int64 = 253_402_300_799

    /// Whoever the token names, whichever kind of token it is.
    public var subjectName: String? { username ?? cognitoUsername }
}

extension KeyedDecodingContainer {
    /// NumericDate is a JSON number, possibly with a fraction; a wrong type is
    /// treated as absent rather than failing the whole decode. Clamped to
    /// 0 ... year 9999, so that no arithmetic on it can overflow and no date
    /// formatting can fail, whatever a token says.
    fileprivate func lenientSeconds(_ key: Key) -> Int64? {
        if let v = try? decodeIfPresent(Int64.self, forKey: key) { return min(max(v, 0), JWTClaims.latestSeconds) }
        if let v = try? decodeIfPresent(Double.self, forKey: key), !v.isNaN {
            return Int64(min(max(v, 0), Double(JWTClaims.latestSeconds)))
        }
        return nil
    }
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
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .notThreeParts }
        guard let payload = base64URLDecode(parts[1]) else { throw .badBase64 }
        do {
            return try JSONDecoder().decode(JWTClaims.self, from: payload)
        } catch {
            throw .badJSON
        }
    }

    /// base64url without padding (RFC 7515 section 2) to bytes.
    public static func base64URLDecode(_ text: Substring.UTF8View) -> Data? {
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.count + 3)
        for b in text {
            switch b {
            case UInt8(ascii: "-"): bytes.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): bytes.append(UInt8(ascii: "/"))
            case UInt8(ascii: "="): continue
            default: bytes.append(b)
            }
        }
        if bytes.count % 4 == 1 { return nil }
        while bytes.count % 4 != 0 { bytes.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(bytes))
    }
}
