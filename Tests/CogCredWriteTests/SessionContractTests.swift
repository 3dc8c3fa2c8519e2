import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

/// The session protocol's one contract, run against both implementations
/// with the same cases: LocalSession (this machine's store, Cognito from
/// here) and AgentSession (an agent in this process, on a real socket, with
/// its own store and Cognito). A command cannot tell them apart but by
/// where the session is kept.
@Suite struct SessionContractTests {
    enum Place: String, CaseIterable { case local, agent }

    static let now: Int64 = 1_800_000_000

    /// The session at `place`, and the store and Cognito it ends in: the
    /// agent's, for an AgentSession.
    struct Kept {
        let session: any Session
        let store: InMemoryTokenStore
        let cognito: FakeCognito
    }

    func kept(_ place: Place, signedInAt iat: Int64? = now - 100) throws -> Kept {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        let context = ItemContext(userPoolID: testProfile.userPoolID, clientID: testProfile.clientID, username: "alice")
        if let iat {
            try store.write(.refresh, profile: "default", secret: "refresh-1", context: context)
            try store.write(.id, profile: "default", secret: TestJWT.id(iat: iat, lifetime: 3600), context: context)
            try store.write(.access, profile: "default", secret: TestJWT.access(iat: iat, lifetime: 3600), context: context)
        }
        let clock = FakeClock(Self.now)
        switch place {
        case .local:
            return Kept(session: makeManager(store: store, cognito: cognito, clock: clock).session, store: store, cognito: cognito)
        case .agent:
            let agent = AgentClient(try servingAgent(store, cognito, clock: clock), warn: { _ in })
            return Kept(session: AgentSession(agent, profile: "default"), store: store, cognito: cognito)
        }
    }

    func fresh(_ cognito: FakeCognito) -> String {
        let access = TestJWT.access(iat: Self.now, lifetime: 3600)
        cognito.session.onRefresh(.success(AuthenticationResult(accessToken: access, idToken: TestJWT.id(iat: Self.now, lifetime: 3600), refreshToken: nil)))
        return access
    }

    @Test(arguments: Place.allCases)
    func aFreshTokenIsHandedOutWithoutARefresh(place: Place) throws {
        let kept = try kept(place)
        #expect(try kept.session.currentToken(.access).value == (try kept.store.read(.access, profile: "default")))
        #expect(try kept.session.currentTokens().id != nil)
        #expect(kept.cognito.session.refreshCount == 0)
    }

    @Test(arguments: Place.allCases)
    func aTokenDueIsRefreshedOnceAndStoredWhereTheSessionIsKept(place: Place) throws {
        let kept = try kept(place, signedInAt: Self.now - 3500)
        let access = fresh(kept.cognito)
        #expect(try kept.session.currentToken(.access).value == access)
        #expect(try kept.session.currentToken(.access).value == access)
        #expect(kept.cognito.session.refreshCount == 1 && kept.cognito.session.lastRefreshToken == "refresh-1")
        #expect(try kept.store.read(.access, profile: "default") == access)
    }

    @Test(arguments: Place.allCases)
    func aMinimumLifeAsksForARefreshAndRefreshMakesOneNow(place: Place) throws {
        let kept = try kept(place)
        var policy = RefreshPolicy()
        policy.minTTL = 3550
        let access = fresh(kept.cognito)
        #expect(try kept.session.currentToken(.access, policy: policy).value == access)
        _ = fresh(kept.cognito)
        #expect(try kept.session.refresh().access.claims.exp == Self.now + 3600)
        #expect(kept.cognito.session.refreshCount == 2)
    }

    @Test(arguments: Place.allCases)
    func statusSaysWhatIsStoredAndTheCheckWhatCognitoSaid(place: Place) throws {
        let kept = try kept(place)
        let status = try kept.session.status()
        #expect(status.signedIn && status.profile == "default" && status.username == "alice")
        #expect(status.accessTokenExpiresAt == Self.now + 3500 && status.now == Self.now)
        // No scope for GetUser or userInfo in the test token: a refresh asks.
        _ = fresh(kept.cognito)
        guard case .stands(let way) = try kept.session.checkSession() else { Issue.record("not standing"); return }
        #expect(way == .refresh && kept.cognito.session.refreshCount == 1)
        kept.cognito.session.onRefresh(.failure(.service(code: "NotAuthorizedException", message: "Refresh Token has been revoked", httpStatus: 400)))
        guard case .refused(let failure) = try kept.session.checkSession() else { Issue.record("not refused"); return }
        #expect(failure.category == .notAuthenticated)
    }

    @Test(arguments: Place.allCases)
    func notSignedInIsSaidAsSuchAndStatusSaysSo(place: Place) throws {
        let kept = try kept(place, signedInAt: nil)
        #expect(try !kept.session.status().signedIn)
        #expect { try kept.session.currentToken(.access) } throws: { error in
            (error as? any CogCredFailure)?.category == .notAuthenticated
        }
    }

    @Test(arguments: Place.allCases)
    func signOutRevokesThenDeletesAndSaysWhatCognitoSaid(place: Place) throws {
        let kept = try kept(place)
        #expect(try kept.session.signOut(.revoke) == SignOutResult(removed: 3, atCognito: .revoked))
        #expect(kept.cognito.session.revocations.withLock { $0 } == ["revoke refresh-1"])
        #expect(try kept.store.read(.refresh, profile: "default") == nil)
        #expect(try kept.session.signOut(.local) == SignOutResult(removed: 0, atCognito: .notAsked))
    }

    @Test(arguments: Place.allCases)
    func aFailedRevocationStillDeletesAndSaysWhy(place: Place) throws {
        let kept = try kept(place)
        let offline = CognitoError.transport(TransportError(.connectionFailed, "Connection refused"))
        kept.cognito.session.state.withLock { $0.signOutError = offline }
        #expect(try kept.session.signOut(.revoke) == SignOutResult(removed: 3, atCognito: .failed, failure: offline.summary))
        #expect(try kept.store.read(.access, profile: "default") == nil)
    }

    @Test(arguments: Place.allCases)
    func deletingTheItemsCallsNothing(place: Place) throws {
        let kept = try kept(place)
        #expect(try kept.session.deleteItems(forgettingDevice: false) == 3)
        #expect(kept.cognito.session.revocations.withLock { $0 }.isEmpty)
        #expect(try !kept.session.status().signedIn)
    }
}
