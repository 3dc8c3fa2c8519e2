import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The scopes whose names a decision turns on.
public enum OAuthScope {
    /// OpenID Connect's: the token may ask the userInfo endpoint.
    public static let openID = "openid"
    /// The reserved scope Cognito's user API asks of an access token.
    public static let cognitoUserAdmin = "aws.cognito.signin.user.admin"
}

/// `<domain>/logout?client_id=...&logout_uri=...`: the address that ends
/// the managed login's own session (its cookie in the browser).
public func managedLoginLogoutURL(domain: String, clientID: String, logoutURI: String) -> String {
    domain + "/logout?" + FormBody.encode([("client_id", clientID), ("logout_uri", logoutURI)])
}

/// One authorization-code request to the pool's managed login (RFC 6749
/// 4.1, with PKCE, RFC 7636, and OpenID Connect's nonce): the secrets it
/// carries, the address the browser opens, and what the callback must
/// bring back.
public struct AuthorizationRequest: Sendable {
    public let domain: String
    public let clientID: String
    public let redirectURI: String
    public let scopes: [String]
    public let identityProvider: String?
    /// Echoed by the callback: ties the answer to this request (CSRF).
    public let state: String
    /// Echoed in the ID token: ties the tokens to this request (replay).
    public let nonce: String
    /// PKCE: the secret half, sent only with the code to the token endpoint.
    public let verifier: String

    public init(
        domain: String, clientID: String, redirectURI: String, scopes: [String], identityProvider: String?,
        state: String = AuthorizationRequest.randomToken(16), nonce: String = AuthorizationRequest.randomToken(16),
        verifier: String = AuthorizationRequest.randomToken(32)
    ) {
        self.domain = domain.hasSuffix("/") ? String(domain.dropLast()) : domain
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.identityProvider = identityProvider
        self.state = state
        self.nonce = nonce
        self.verifier = verifier
    }

    /// PKCE's S256 challenge: base64url(SHA-256(verifier)).
    public var challenge: String { Base64URL.encode(Digest.sha256(Array(verifier.utf8))) }

    /// `<domain>/oauth2/authorize?...`, what the browser opens.
    public var url: String {
        var query = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI),
            ("scope", scopes.joined(separator: " ")), ("state", state), ("nonce", nonce),
            ("code_challenge", challenge), ("code_challenge_method", "S256"),
        ]
        if let identityProvider { query.append(("identity_provider", identityProvider)) }
        return domain + "/oauth2/authorize?" + FormBody.encode(query)
    }

    /// What came back to the redirect URI, checked against this request.
    public enum Callback: Equatable, Sendable {
        /// The authorization code, to exchange at the token endpoint.
        case code(String)
        /// The managed login said no (`error=access_denied` when the user
        /// cancels), with its own code and description.
        case refused(error: String, description: String)
    }

    /// Reads a callback's query (`code=...&state=...`, or `error=...`). A
    /// wrong or missing `state` is never accepted: it may be an answer to
    /// someone else's request, planted to sign this user in as another.
    public func callback(query: String) throws(CallbackError) -> Callback {
        let fields = Self.queryFields(query)
        guard fields["state"] == state else {
            throw fields["state"] == nil && fields["code"] == nil && fields["error"] == nil ? .notACallback : .stateMismatch
        }
        if let error = fields["error"] {
            return .refused(error: error, description: fields["error_description"] ?? "")
        }
        guard let code = fields["code"], !code.isEmpty else { throw .notACallback }
        return .code(code)
    }

    /// What a pasted address (or bare code) of the `--no-browser` flow
    /// says: an address is checked like a callback; a bare code is taken as
    /// it is (PKCE still binds it to this request's verifier).
    public func pasted(_ text: String) throws(CallbackError) -> Callback {
        let trimmed = text.trimmingWhitespace()
        if let mark = trimmed.firstIndex(of: "?") {
            var query = trimmed[trimmed.index(after: mark)...]
            if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
            return try callback(query: String(query))
        }
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "&") }) else {
            throw .notACallback
        }
        return .code(trimmed)
    }

    /// Why a callback was not taken.
    public enum CallbackError: Error, Equatable, Sendable {
        /// The `state` is not this request's.
        case stateMismatch
        /// No code, error or state at all: not the managed login's answer.
        case notACallback
    }

    // MARK: - Encoding

    /// `bytes` random bytes (OpenSSL's generator) as base64url.
    public static func randomToken(_ bytes: Int) -> String {
        var random = [UInt8](repeating: 0, count: bytes)
        precondition(RAND_bytes(&random, Int32(bytes)) == 1, "RAND_bytes failed")
        return Base64URL.encode(random)
    }

    /// `a=1&b=x%20y` (with `+` as space) as a dictionary; the first of a repeated name wins.
    static func queryFields(_ query: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = percentDecode(parts[0])
            if fields[name] == nil { fields[name] = parts.count > 1 ? percentDecode(parts[1]) : "" }
        }
        return fields
    }

    static func percentDecode(_ text: Substring) -> String {
        let input = Array(text.utf8)
        var bytes: [UInt8] = []
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%"), index + 2 < input.count, input[index + 1].isHexDigit, input[index + 2].isHexDigit,
                let value = UInt8(String(decoding: input[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index += 3
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
