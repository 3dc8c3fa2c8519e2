import Foundation
import Synchronization
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

@Suite struct OAuthHTTPClientTests {
    func client(_ transport: FakeTransport, secret: String? = "s3cret/+=") -> OAuthHTTPClient {
        OAuthHTTPClient(
            domain: "https://my-app.auth.us-east-1.amazoncognito.com/", clientID: "client123", clientSecret: secret,
            timeouts: Timeouts(connect: 5, request: 15, command: 30), deadline: Deadline(secondsFromNow: 30),
            transport: transport, retryPolicy: RetryPolicy(sleeper: { _ in }))
    }

    func form(_ request: HTTPRequest) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding!
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }

    @Test func clientCredentialsAuthenticateWithBasicAndAskForTheScopes() throws {
        let transport = FakeTransport(status: 200, body: #"{"access_token":"a.b.c","token_type":"Bearer","expires_in":3600}"#)
        let result = try client(transport).clientCredentials(scopes: ["orders/read", "orders/write"])
        #expect(result == AuthenticationResult(accessToken: "a.b.c", idToken: nil, refreshToken: nil, expiresIn: 3600))
        let request = try #require(transport.last)
        #expect(request.url == "https://my-app.auth.us-east-1.amazoncognito.com/oauth2/token")
        #expect(request.headers.contains { $0 == ("Content-Type", "application/x-www-form-urlencoded") })
        // RFC 6749 2.3.1: id and secret form-encoded, then Basic.
        let basic = Data("client123:s3cret%2F%2B%3D".utf8).base64EncodedString()
        #expect(request.headers.contains { $0 == ("Authorization", "Basic \(basic)") })
        #expect(form(request) == ["grant_type": "client_credentials", "scope": "orders/read orders/write"])
        #expect(request.allowsCleartext == false)
    }

    @Test func withoutASecretTheClientIdGoesInTheBody() throws {
        let transport = FakeTransport(status: 200, body: #"{"access_token":"a.b.c","id_token":"d.e.f","refresh_token":"r"}"#)
        let result = try client(transport, secret: nil).exchangeCode("the code", redirectURI: "http://localhost:8400/callback", verifier: "v")
        #expect(result.idToken == "d.e.f" && result.refreshToken == "r")
        let request = try #require(transport.last)
        #expect(!request.headers.contains { $0.0 == "Authorization" })
        #expect(form(request) == [
            "grant_type": "authorization_code", "code": "the code", "redirect_uri": "http://localhost:8400/callback",
            "code_verifier": "v", "client_id": "client123",
        ])
    }

    @Test func errorsKeepTheEndpointsCodeAndDescription() {
        let transport = FakeTransport(status: 400, body: #"{"error":"invalid_grant","error_description":"Refresh Token has been revoked"}"#)
        #expect(throws: CognitoError.service(code: "invalid_grant", message: "Refresh Token has been revoked", httpStatus: 400)) {
            try client(transport).refresh(refreshToken: "r")
        }
        let html = FakeTransport(status: 404, body: "<html>not here</html>")
        #expect(throws: CognitoError.badResponse(httpStatus: 404, detail: "not an OAuth error")) {
            try client(html).revoke(refreshToken: "r")
        }
        let empty = FakeTransport(status: 200, body: #"{"token_type":"Bearer"}"#)
        #expect(throws: CognitoError.badResponse(httpStatus: 200, detail: "no access token in the answer")) {
            try client(empty).clientCredentials(scopes: nil)
        }
    }

    @Test func theirCodesMapToTheDocumentedExitStatuses() {
        func category(_ code: String, _ operation: AuthOperation = .clientCredentials) -> FailureCategory {
            AuthError.cognito(.service(code: code, message: "", httpStatus: 400), operation: operation).category
        }
        #expect(category("invalid_grant", .refresh(profile: "p")) == .notAuthenticated)
        #expect(category("access_denied", .signIn) == .notAuthenticated)
        for code in ["invalid_client", "unauthorized_client", "invalid_scope", "unsupported_grant_type", "invalid_request"] {
            #expect(category(code) == .configuration, "\(code)")
        }
        #expect(AuthError.cognito(.service(code: "server_error", message: "", httpStatus: 503), operation: .clientCredentials).category == .temporary)
        let revoked = AuthError.cognito(.service(code: "invalid_grant", message: "revoked", httpStatus: 400), operation: .refresh(profile: "p"))
        #expect(revoked.explanation.nextStep == .signInAgain(profile: "p") && revoked.message.contains("invalid_grant: revoked"))
    }

}

/// An OAuth endpoint that answers from a script and counts calls.
final class FakeOAuth: OAuthClient {
    let results: Mutex<[Result<AuthenticationResult, CognitoError>]>
    let scopesAsked = Mutex<[[String]?]>([])

    init(_ results: [Result<AuthenticationResult, CognitoError>]) { self.results = Mutex(results) }

    func clientCredentials(scopes: [String]?) throws(CognitoError) -> AuthenticationResult {
        scopesAsked.withLock { $0.append(scopes) }
        return try results.withLock { $0.removeFirst() }.get()
    }
    func exchangeCode(_ code: String, redirectURI: String, verifier: String) throws(CognitoError) -> AuthenticationResult {
        try results.withLock { $0.removeFirst() }.get()
    }
    func refresh(refreshToken: String) throws(CognitoError) -> AuthenticationResult { try results.withLock { $0.removeFirst() }.get() }
    func revoke(refreshToken: String) throws(CognitoError) {}
    /// userInfo's answer: nil, the session stands.
    let userInfoError = Mutex<CognitoError?>(nil)
    func userInfo(accessToken: String) throws(CognitoError) { if let error = userInfoError.withLock({ $0 }) { throw error } }
}

@Suite struct MachineProfileTests {
    let now: Int64 = 1_800_000_000
    var machine: Profile {
        var profile = testProfile
        profile.grant = "client-credentials"
        profile.domain = "https://my-app.auth.us-east-1.amazoncognito.com"
        profile.scopes = ["orders/read"]
        profile.clientSecretInKeyring = true
        return profile
    }

    func manager(_ store: InMemoryTokenStore, _ oauth: FakeOAuth) -> TokenManager {
        makeManager(store: store, oauth: oauth, profile: machine, clock: FakeClock(now))
    }

    func machineToken(iat: Int64) -> String {
        TestJWT.make([
            "iat": iat, "exp": iat + 3600, "token_use": "access", "sub": testProfile.clientID, "scope": "orders/read",
            "iss": "https://cognito-idp.us-east-1.amazonaws.com/\(testProfile.userPoolID)", "client_id": testProfile.clientID,
        ])
    }

    @Test func anExpiredTokenIsFetchedAgainWithTheClientCredentials() throws {
        let store = InMemoryTokenStore()
        let fresh = machineToken(iat: now)
        let oauth = FakeOAuth([.success(AuthenticationResult(accessToken: fresh, idToken: nil, refreshToken: nil, expiresIn: 3600))])
        try store.write(.access, profile: "default", secret: machineToken(iat: now - 3590), context: context)
        #expect(try manager(store, oauth).currentToken(.access).value == fresh)
        #expect(oauth.scopesAsked.withLock { $0 } == [["orders/read"]])
        #expect(try store.read(.access, profile: "default") == fresh)
        #expect(try store.read(.refresh, profile: "default") == nil)
        // Fresh now: handed out from the store, nothing asked.
        #expect(try manager(store, oauth).currentTokens().access.value == fresh)
        #expect(oauth.scopesAsked.withLock { $0 }.count == 1)
        let status = try manager(store, oauth).status()
        #expect(status.signedIn && status.scope == "orders/read")
    }

    @Test func aMachineHasNoIDTokenAndARefusedSecretChangesNothing() throws {
        let store = InMemoryTokenStore()
        let old = machineToken(iat: now - 3590)
        try store.write(.access, profile: "default", secret: old, context: context)
        let oauth = FakeOAuth([.failure(.service(code: "invalid_client", message: "bad secret", httpStatus: 401))])
        #expect(throws: AuthError.noIDToken(profile: "default")) { try manager(store, oauth).currentToken(.id) }
        #expect {
            try manager(store, oauth).currentToken(.access)
        } throws: { error in
            (error as? AuthError)?.category == .configuration
        }
        #expect(try store.read(.access, profile: "default") == old)
    }
}

@Suite struct BrowserSignInTests {
    let now: Int64 = 1_800_000_000
    let request = AuthorizationRequest(
        domain: "https://d", clientID: testProfile.clientID, redirectURI: "http://localhost:8400/callback", scopes: ["openid"],
        identityProvider: nil, state: "s", nonce: "the-nonce", verifier: "v")

    static let issuer = "https://cognito-idp.us-east-1.amazonaws.com/\(testProfile.userPoolID)"

    func tokens(nonce: String, _ changes: [String: Any] = [:]) -> AuthenticationResult {
        var claims: [String: Any] = [
            "iat": now, "exp": now + 3600, "token_use": "id", "aud": testProfile.clientID, "nonce": nonce,
            "iss": Self.issuer, "cognito:username": "alice",
        ]
        claims.merge(changes) { $1 }
        return AuthenticationResult(
            accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: TestJWT.make(claims), refreshToken: "r")
    }

    func manager(_ store: InMemoryTokenStore, _ oauth: FakeOAuth) -> TokenManager {
        makeManager(store: store, oauth: oauth, clock: FakeClock(now))
    }

    func signIn(_ store: InMemoryTokenStore, _ result: AuthenticationResult) throws -> RefreshedTokens {
        try manager(store, FakeOAuth([.success(result)])).signIn(.code("c"), of: request, issuers: [Self.issuer])
    }

    /// The managed login binds no device to its session: the profile's
    /// device goes with the old session, whoever's it was.
    /// The managed login answers no device challenge and gives no new
    /// device: whoever's device was stored (the user's who signs in, or
    /// another's), its item goes with the session it belonged to.
    @Test(arguments: ["alice", "bob"])
    func aBrowserSignInLeavesNoDevice(owner: String) throws {
        let store = InMemoryTokenStore()
        let device = RememberedDevice(key: "k", groupKey: "g", password: "p", username: owner, signInName: owner, confirmed: true)
        try store.write(.device, profile: "default", secret: device.json, context: ItemContext(userPoolID: testProfile.userPoolID, clientID: testProfile.clientID, username: owner))
        #expect(try store.read(.device, profile: "default") != nil)
        _ = try signIn(store, tokens(nonce: "the-nonce"))
        #expect(try store.read(.device, profile: "default") == nil)
        #expect(try store.read(.refresh, profile: "default") != nil)  // and the sign-in was stored
    }

    @Test func theIDTokenMustCarryTheRequestsNonce() throws {
        let store = InMemoryTokenStore()
        #expect(throws: AuthError.nonceMismatch) { try signIn(store, tokens(nonce: "another-request")) }
        #expect(try store.read(.refresh, profile: "default") == nil && store.read(.access, profile: "default") == nil)
        _ = try signIn(store, tokens(nonce: "the-nonce"))
        #expect(try store.read(.refresh, profile: "default") == "r")
    }

    /// OpenID Connect Core 3.1.3.7: issuer, audience, token_use and expiry, each before anything is stored.
    @Test func theIDTokenMustBeThisPoolsForThisClientAndUnexpired() throws {
        let store = InMemoryTokenStore()
        let refusals: [(String, [String: Any])] = [
            ("issuer", ["iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Other"]),
            ("issuer", ["iss": "https://evil.example/\(testProfile.userPoolID)"]),
            ("audience", ["aud": "another-client"]),
            ("audience", ["aud": ["another-client", "a-third"]]),
            ("token_use", ["token_use": "access"]),
            ("expiry", ["exp": now - 1]),
        ]
        for (check, changes) in refusals {
            do {
                _ = try signIn(store, tokens(nonce: "the-nonce", changes))
                Issue.record("stored with \(changes)")
            } catch AuthError.idTokenRejected(let failed, _) {
                #expect(failed == check, "\(changes)")
            }
            #expect(try store.read(.refresh, profile: "default") == nil)
        }
        // An aud array that contains this client is this client's (RFC 7519 4.1.3).
        _ = try signIn(store, tokens(nonce: "the-nonce", ["aud": ["a-resource-server", testProfile.clientID]]))
        #expect(try store.read(.refresh, profile: "default") == "r")
    }

    @Test func aRefusalFromTheManagedLoginStoresNothing() throws {
        let store = InMemoryTokenStore()
        #expect {
            try manager(store, FakeOAuth([])).signIn(
                .refused(error: "access_denied", description: "User cancelled"), of: request, issuers: [Self.issuer])
        } throws: { error in
            (error as? AuthError)?.category == .notAuthenticated
        }
        #expect(try store.read(.refresh, profile: "default") == nil)
    }
}

