#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The user pool's OAuth 2.0 endpoints on its domain (managed login): the
/// token endpoint's grants and token revocation. The real one is
/// `OAuthHTTPClient`; tests use an in-memory fake.
public protocol OAuthClient: Sendable {
    /// `grant_type=client_credentials`: an access token for the app client
    /// itself. `scopes` nil: the client's default (all its custom scopes).
    func clientCredentials(scopes: [String]?) throws(CognitoError) -> AuthenticationResult
    /// `grant_type=authorization_code`, with the PKCE verifier.
    func exchangeCode(_ code: String, redirectURI: String, verifier: String) throws(CognitoError) -> AuthenticationResult
    /// `grant_type=refresh_token`; a rotated refresh token comes back in the result.
    func refresh(refreshToken: String) throws(CognitoError) -> AuthenticationResult
    /// `/oauth2/revoke`: ends the refresh token and the tokens issued from it.
    func revoke(refreshToken: String) throws(CognitoError)
    /// `/oauth2/userInfo` with the access token (which must carry `openid`):
    /// answers only while the session stands. A refused token is the
    /// `invalid_token` error (HTTP 401).
    func userInfo(accessToken: String) throws(CognitoError)
}

/// OAuth 2.0 over HTTPS at `<domain>/oauth2/...`: form-encoded requests,
/// JSON answers (RFC 6749). Errors keep the endpoint's `error` code and
/// `error_description` as a `CognitoError.service`.
public struct OAuthHTTPClient: OAuthClient {
    public let domain: String
    public let clientID: String
    /// With a secret, the client authenticates with HTTP Basic, as Cognito
    /// requires of a client that has one.
    let clientSecret: String?
    /// The domain's connection, which may be plain HTTP if it was allowed to be (Endpoint.domain).
    let retrying: RetryingPost

    public init(domain: String, clientID: String, clientSecret: String?, allowsCleartext: Bool = false, connection: Connection) {
        self.domain = domain.hasSuffix("/") ? String(domain.dropLast()) : domain
        self.clientID = clientID
        self.clientSecret = clientSecret
        retrying = connection.post(allowsCleartext: allowsCleartext)
    }

    /// With a connection of its own.
    public init(
        domain: String, clientID: String, clientSecret: String?, timeouts: Timeouts, deadline: Deadline,
        caBundle: CABundle = .system, allowsCleartext: Bool = false, transport: any HTTPTransport = CurlTransport(),
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.init(
            domain: domain, clientID: clientID, clientSecret: clientSecret, allowsCleartext: allowsCleartext,
            connection: Connection(transport: transport, timeouts: timeouts, deadline: deadline, caBundle: caBundle, retryPolicy: retryPolicy))
    }

    public func clientCredentials(scopes: [String]?) throws(CognitoError) -> AuthenticationResult {
        var form = [("grant_type", "client_credentials")]
        if let scopes, !scopes.isEmpty { form.append(("scope", scopes.joined(separator: " "))) }
        return try tokens(form, repeatable: true)
    }

    public func exchangeCode(_ code: String, redirectURI: String, verifier: String) throws(CognitoError)
        -> AuthenticationResult
    {
        // A code is good once: sent again after a lost answer it would be refused.
        try tokens(
            [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier)],
            repeatable: false)
    }

    public func refresh(refreshToken: String) throws(CognitoError) -> AuthenticationResult {
        try tokens([("grant_type", "refresh_token"), ("refresh_token", refreshToken)], repeatable: true)
    }

    public func revoke(refreshToken: String) throws(CognitoError) {
        let response = try post("/oauth2/revoke", [("token", refreshToken)], repeatable: true)
        guard response.status == 200 else { throw OAuthHTTPClient.error(response) }
    }

    public func userInfo(accessToken: String) throws(CognitoError) {
        let response = try retrying.send(
            domain + "/oauth2/userInfo", method: "GET", headers: [("Authorization", "Bearer " + accessToken), ("Accept", "application/json")],
            body: Data(), repeatable: true)
        switch response.status {
        case 200: return
        // RFC 6750 3.1: the refusal is in WWW-Authenticate, with no body
        // to speak of; the status says it.
        case 401: throw .service(code: "invalid_token", message: "the access token was refused", httpStatus: 401)
        default: throw OAuthHTTPClient.error(response)
        }
    }

    // MARK: - Plumbing

    func tokens(_ form: [(String, String)], repeatable: Bool) throws(CognitoError) -> AuthenticationResult {
        let response = try post("/oauth2/token", form, repeatable: repeatable)
        guard response.status == 200 else { throw OAuthHTTPClient.error(response) }
        guard let body = try? JSONDecoder().decode(TokenResponse.self, from: response.body) else {
            throw .badResponse(httpStatus: 200, detail: response.body.isEmpty ? "empty body" : "not the expected JSON")
        }
        guard let access = body.accessToken, !access.isEmpty else {
            throw .badResponse(httpStatus: 200, detail: "no access token in the answer")
        }
        return AuthenticationResult(
            accessToken: access, idToken: body.idToken, refreshToken: body.refreshToken, expiresIn: body.expiresIn)
    }

    /// One POST with the client's authentication, retried as RetryingPost says.
    func post(_ path: String, _ form: [(String, String)], repeatable: Bool) throws(CognitoError) -> HTTPResponse {
        var fields = form
        var headers = [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")]
        if let clientSecret {
            // RFC 6749 2.3.1: each part form-encoded, then Basic.
            let pair = clientID.percentEncoded + ":" + clientSecret.percentEncoded
            headers.append(("Authorization", "Basic " + Data(pair.utf8).base64EncodedString()))
        } else {
            fields.append(("client_id", clientID))
        }
        let body = Data(FormBody.encode(fields).utf8)
        return try retrying.send(domain + path, headers: headers, body: body, repeatable: repeatable)
    }

    /// The endpoint's `{"error": ..., "error_description": ...}`, or a
    /// `badResponse` for anything else (an HTML page: not this pool's domain).
    static func error(_ response: HTTPResponse) -> CognitoError {
        if let body = try? JSONDecoder().decode(ErrorResponse.self, from: response.body), let code = body.error, !code.isEmpty {
            return .service(code: code, message: body.errorDescription ?? "", httpStatus: response.status)
        }
        return .badResponse(httpStatus: response.status, detail: response.body.isEmpty ? "empty body" : "not an OAuth error")
    }

    struct TokenResponse: Decodable {
        var accessToken: String?
        var idToken: String?
        var refreshToken: String?
        var expiresIn: Int64?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case idToken = "id_token"
            case refreshToken = "refresh_token"
            case expiresIn = "expires_in"
        }
    }

    struct ErrorResponse: Decodable {
        var error: String?
        var errorDescription: String?

        enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
        }
    }
}
