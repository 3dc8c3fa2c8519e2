import Foundation
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

@Suite struct TokenManagerTests {
    let now: Int64 = 1_800_000_000

    func signedIn(_ store: InMemoryTokenStore, accessIat: Int64, lifetime: Int64 = 3600) throws {
        try store.write(.refresh, profile: "default", secret: "refresh-1", context: context)
        try store.write(.id, profile: "default", secret: TestJWT.id(iat: accessIat, lifetime: lifetime), context: context)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: accessIat, lifetime: lifetime), context: context)
    }

    @Test func handsOutAStoredTokenWithEnoughLifeLeftWithoutRefreshing() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try signedIn(store, accessIat: now - 100)
        let token = try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).currentToken(.access)
        #expect(token.value == (try store.read(.access, profile: "default")))
        #expect(cognito.session.refreshCount == 0)
    }

    @Test func refreshesWhenInsideTheMarginAndKeepsTheOldRefreshToken() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        // 3600 s tokens: margin 360 s. 300 s left -> refresh.
        try signedIn(store, accessIat: now - 3300)
        let newAccess = TestJWT.access(iat: now, lifetime: 3600)
        cognito.session.onRefresh(.success(AuthenticationResult(accessToken: newAccess, idToken: TestJWT.id(iat: now, lifetime: 3600), refreshToken: nil)))

        let token = try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).currentToken(.access)

        #expect(token.value == newAccess)
        #expect(cognito.session.refreshCount == 1)
        #expect(cognito.session.lastRefreshToken == "refresh-1")
        #expect(try store.read(.access, profile: "default") == newAccess)
        #expect(try store.read(.refresh, profile: "default") == "refresh-1")
    }

    @Test func storesARotatedRefreshTokenFirst() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try signedIn(store, accessIat: now - 4000)
        cognito.session.onRefresh(.success(AuthenticationResult(
            accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: TestJWT.id(iat: now, lifetime: 3600),
            refreshToken: "refresh-2")))
        let before = store.writes.count

        _ = try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).currentToken(.access)

        #expect(Array(store.writes.dropFirst(before)) == ["default/refresh", "default/id", "default/access"])
        #expect(try store.read(.refresh, profile: "default") == "refresh-2")
    }

    @Test func neverHandsOutAnExpiredToken() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try signedIn(store, accessIat: now - 7200)
        let expired = try store.read(.access, profile: "default")
        let refused = CognitoError.transport(TransportError(.connectionFailed, "refused"))
        cognito.session.onRefresh(.failure(refused))
        let manager = makeManager(store: store, cognito: cognito, clock: FakeClock(now))
        // The refresh's own failure, not the expired token, and nothing stored changed.
        #expect(throws: AuthError.cognito(refused, operation: .refresh(profile: "default"))) { try manager.currentToken(.access) }
        #expect(cognito.session.refreshCount == 1)
        #expect(try store.read(.access, profile: "default") == expired)
    }

    @Test func aTokenLivingLessThanTheMarginIsRefreshedOnceAndHandedOut() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try signedIn(store, accessIat: now - 10, lifetime: 30)
        let fresh = TestJWT.access(iat: now, lifetime: 30)
        cognito.session.onRefresh(.success(AuthenticationResult(accessToken: fresh, idToken: nil, refreshToken: nil)))

        let token = try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).currentToken(.access)

        #expect(token.value == fresh)
        #expect(cognito.session.refreshCount == 1)
    }

    @Test func aFreshTokenThatIsAlreadyExpiredIsNotHandedOut() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try signedIn(store, accessIat: now - 7200)
        cognito.session.onRefresh(.success(AuthenticationResult(accessToken: TestJWT.access(iat: now - 7200, lifetime: 3600), idToken: nil, refreshToken: nil)))
        let manager = makeManager(store: store, cognito: cognito, clock: FakeClock(now))

        #expect(throws: AuthError.freshTokenExpired(.access)) { try manager.currentToken(.access) }
        #expect(cognito.session.refreshCount == 1)
    }

    @Test func aRejectedRefreshLeavesEveryStoredTokenAlone() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try signedIn(store, accessIat: now - 7200)
        let before = try SecretKind.allCases.map { try store.read($0, profile: "default") }
        let rejection = CognitoError.service(code: "NotAuthorizedException", message: "Refresh Token has been revoked", httpStatus: 400)
        cognito.session.onRefresh(.failure(rejection))

        let manager = makeManager(store: store, cognito: cognito, clock: FakeClock(now))
        #expect(throws: AuthError.cognito(rejection, operation: .refresh(profile: "default"))) { try manager.currentToken(.access) }
        #expect(try SecretKind.allCases.map { try store.read($0, profile: "default") } == before)
    }

    @Test func aMalformedAnswerStoresNothing() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try signedIn(store, accessIat: now - 7200)
        let writes = store.writes.count
        cognito.session.onRefresh(.success(AuthenticationResult(accessToken: "not-a-jwt", idToken: nil, refreshToken: "r2")))

        #expect(throws: AuthError.malformedToken(.access)) {
            try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).refresh()
        }
        #expect(store.writes.count == writes)
        #expect(try store.read(.refresh, profile: "default") == "refresh-1")
    }

    @Test func anUnreadableStoredTokenIsReplacedByARefresh() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try signedIn(store, accessIat: now)
        try store.write(.access, profile: "default", secret: "garbage", context: context)
        cognito.session.onRefresh(.success(AuthenticationResult(accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: nil, refreshToken: nil)))

        _ = try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).currentToken(.access)
        #expect(cognito.session.refreshCount == 1)
    }

    @Test func withoutARefreshTokenTheProfileIsNotSignedIn() throws {
        let manager = makeManager(clock: FakeClock(now))
        #expect(throws: AuthError.notSignedIn(profile: "default")) { try manager.currentToken(.access) }
    }

    @Test func theIDTokenIsJudgedByItsOwnExpiry() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try signedIn(store, accessIat: now)
        try store.write(.id, profile: "default", secret: TestJWT.id(iat: now - 3500, lifetime: 3600), context: context)
        let freshID = TestJWT.id(iat: now, lifetime: 3600)
        cognito.session.onRefresh(.success(AuthenticationResult(accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: freshID, refreshToken: nil)))

        let token = try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).currentToken(.id)
        #expect(token.value == freshID)
    }

    @Test func signInStoresRefreshThenIDThenAccess() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.authenticated(AuthenticationResult(
            accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: TestJWT.id(iat: now, lifetime: 3600),
            refreshToken: "r1"))))

        let tokens = try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).signIn(username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers())

        #expect(store.writes == ["default/refresh", "default/id", "default/access"])
        #expect(tokens.access.claims.username == "alice")
        #expect(cognito.signIn.state.withLock { $0.calls.first?.1 } == "pw")
    }

    @Test func aChallengeIsReportedAndNothingIsStored() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        // A device challenge, and this machine is no device of the user's.
        cognito.signIn.onSignIn(.success(.challenge(name: "DEVICE_SRP_AUTH", session: "s", parameters: [:])))
        let manager = makeManager(store: store, cognito: cognito, clock: FakeClock(now))

        #expect(throws: AuthError.unsupportedChallenge("DEVICE_SRP_AUTH")) { try manager.signIn(username: "a", password: "b", flow: .password, answers: ScriptedAnswers()) }
        #expect(store.writes.isEmpty)
    }

    @Test func aSignInWithoutARefreshTokenIsRefused() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.authenticated(AuthenticationResult(accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: nil, refreshToken: nil))))
        let refused = AuthError.cognito(.badResponse(httpStatus: 200, detail: "no refresh token in the answer"), operation: .signIn)
        #expect(throws: refused) {
            try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).signIn(username: "a", password: "b", flow: .password, answers: ScriptedAnswers())
        }
        #expect(store.writes.isEmpty)
    }

    @Test func signOutDeletesAllThreeAndReportsHowMany() throws {
        let store = InMemoryTokenStore()
        try signedIn(store, accessIat: now)
        let manager = makeManager(store: store, clock: FakeClock(now))
        #expect(try manager.signOut().removed == 3)
        #expect(try manager.signOut().removed == 0)
        #expect(try store.read(.refresh, profile: "default") == nil)
    }

    @Test func statusReportsExpiriesAndNeverATokenValue() throws {
        let store = InMemoryTokenStore()
        try signedIn(store, accessIat: now - 600)
        let status = try makeManager(store: store, clock: FakeClock(now)).status()
        #expect(status.signedIn)
        #expect(status.username == "alice")
        #expect(status.accessTokenExpiresAt == now + 3000)
        #expect(status.idTokenExpiresAt == now + 3000)
        #expect(status.email == "alice@example.com")
        // Nothing in it is a secret: no stored value, nor a JWT's signed parts.
        let shown = String(describing: status)
        for kind in [SecretKind.refresh, .access, .id] {
            let value = try #require(try store.read(kind, profile: "default"))
            #expect(!shown.contains(value), "the \(kind) token's value")
            for part in value.split(separator: ".") where part.count > 8 {
                #expect(!shown.contains(part), "a part of the \(kind) token")
            }
        }
    }

    @Test func keyringFailuresPassThroughUnchanged() throws {
        let store = InMemoryTokenStore()
        store.failAll(with: .locked)
        let manager = makeManager(store: store, clock: FakeClock(now))
        #expect(throws: SecretServiceError.locked) { try manager.currentToken(.access) }
    }
}

@Suite struct CurrentTokensTests {
    let now: Int64 = 1_800_000_000

    @Test func bothTokensComeFromAtMostOneRefresh() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try store.write(.refresh, profile: "default", secret: "r", context: context)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now - 7200, lifetime: 3600), context: context)
        try store.write(.id, profile: "default", secret: TestJWT.id(iat: now - 7200, lifetime: 3600), context: context)
        let access = TestJWT.access(iat: now, lifetime: 3600)
        let id = TestJWT.id(iat: now, lifetime: 3600)
        cognito.session.onRefresh(.success(AuthenticationResult(accessToken: access, idToken: id, refreshToken: nil)))
        let manager = makeManager(store: store, cognito: cognito, clock: FakeClock(now))

        let tokens = try manager.currentTokens(policy: RefreshPolicy(minTTL: 4000))
        #expect(tokens.access.value == access)
        #expect(tokens.id?.value == id)
        #expect(cognito.session.refreshCount == 1)
        // Fresh now: no second refresh.
        _ = try manager.currentTokens()
        #expect(cognito.session.refreshCount == 1)
    }
}
