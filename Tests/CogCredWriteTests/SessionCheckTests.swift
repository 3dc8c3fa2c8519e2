import Foundation
import Synchronization
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

/// `status` asks Cognito whether the stored session stands: the call the
/// access token's scopes allow, else a refresh; a refusal is 77 and leaves
/// the store alone, a missing scope is no refusal, a network fault is no
/// verdict.
@Suite struct SessionCheckTests {
    let now: Int64 = 1_800_000_000

    /// Signed in with an access token of `scope`, issued 10 minutes ago.
    func session(scope: String?, profile: Profile = testProfile, oauth: FakeOAuth? = nil) throws -> (InMemoryTokenStore, FakeCognito, TokenManager) {
        let store = InMemoryTokenStore()
        var claims: [String: Any] = [
            "iat": now - 600, "exp": now + 3000, "username": "alice", "token_use": "access", "jti": "a1",
            "iss": "https://cognito-idp.us-east-1.amazonaws.com/\(testProfile.userPoolID)", "client_id": testProfile.clientID,
        ]
        if let scope { claims["scope"] = scope }
        try store.write(.refresh, profile: "default", secret: "refresh-1", context: context)
        try store.write(.access, profile: "default", secret: TestJWT.make(claims), context: context)
        let cognito = FakeCognito()
        return (store, cognito, makeManager(store: store, cognito: cognito, oauth: oauth, profile: profile, clock: FakeClock(now)))
    }

    var fresh: AuthenticationResult {
        AuthenticationResult(accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: nil, refreshToken: nil)
    }

    @Test func theAPIsTokensAreAskedAboutWithGetUser() throws {
        let (store, cognito, manager) = try session(scope: "aws.cognito.signin.user.admin")
        guard case .stands(.getUser) = try manager.checkSession() else { Issue.record("not GetUser"); return }
        #expect(cognito.session.refreshCount == 0 && store.writes.count == 2)
    }

    @Test func aRevokedSessionIsRefusedAndLeftAsItWas() throws {
        let (store, cognito, manager) = try session(scope: "aws.cognito.signin.user.admin")
        cognito.mfa.state.withLock { $0.error = .service(code: "NotAuthorizedException", message: "Access Token has been revoked", httpStatus: 400) }
        guard case .refused(let failure) = try manager.checkSession() else { Issue.record("not refused"); return }
        #expect(failure.category == .notAuthenticated)
        #expect(cognito.session.refreshCount == 0 && store.writes.count == 2)
        #expect(try store.read(.refresh, profile: "default") == "refresh-1")
    }

    @Test func aMissingScopeIsNoRefusalARefreshDecides() throws {
        let (_, cognito, manager) = try session(scope: "aws.cognito.signin.user.admin")
        cognito.mfa.state.withLock { $0.error = .service(code: "NotAuthorizedException", message: "Access Token does not have required scopes", httpStatus: 400) }
        cognito.session.onRefresh(.success(fresh))
        guard case .stands(.refresh) = try manager.checkSession() else { Issue.record("not a refresh"); return }
        #expect(cognito.session.refreshCount == 1)
    }

    @Test func aNetworkFaultIsNoVerdict() throws {
        let (_, cognito, manager) = try session(scope: "aws.cognito.signin.user.admin")
        cognito.mfa.state.withLock { $0.error = .transport(TransportError(.connectionFailed, "Failed to connect", nothingSent: true)) }
        guard case .couldNotCheck(let failure) = try manager.checkSession() else { Issue.record("not couldNotCheck"); return }
        #expect(failure.category == .temporary && cognito.session.refreshCount == 0)
    }

    @Test func aBrowserSignInsTokensAreAskedAboutAtUserInfo() throws {
        var profile = testProfile
        profile.domain = "https://my-app.auth.us-east-1.amazoncognito.com"
        let oauth = FakeOAuth([])
        let (_, cognito, manager) = try session(scope: "openid email", profile: profile, oauth: oauth)
        guard case .stands(.userInfo) = try manager.checkSession() else { Issue.record("not userInfo"); return }
        oauth.userInfoError.withLock { $0 = .service(code: "invalid_token", message: "the access token was refused", httpStatus: 401) }
        guard case .refused = try manager.checkSession() else { Issue.record("not refused"); return }
        #expect(cognito.session.refreshCount == 0)
    }

    @Test func withNeitherScopeARefreshAsks() throws {
        let (_, cognito, manager) = try session(scope: "orders/read")
        cognito.session.onRefresh(.failure(.service(code: "NotAuthorizedException", message: "Refresh Token has been revoked", httpStatus: 400)))
        guard case .refused = try manager.checkSession() else { Issue.record("not refused"); return }
        #expect(cognito.session.refreshCount == 1)
    }

    @Test func aMachineProfileHasNoSessionToAskAbout() throws {
        var machine = testProfile
        machine.grant = "client-credentials"
        let (_, cognito, manager) = try session(scope: "orders/read", profile: machine)
        guard case .noSession = try manager.checkSession() else { Issue.record("asked"); return }
        #expect(cognito.session.refreshCount == 0)
    }
}
