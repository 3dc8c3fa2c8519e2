import Foundation
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

/// A token due for refresh only because of the margin is still handed out
/// when the refresh fails for a passing reason, with one warning; never when
/// Cognito refused, the caller asked for more life, or `refresh` was asked for.
@Suite struct StillWorkingTokenTests {
    let now: Int64 = 1_800_000_000

    /// Signed in with 3600 s tokens issued `age` seconds ago (margin 360 s).
    func session(age: Int64 = 3300, refresh: CognitoError) throws -> (InMemoryTokenStore, FakeCognito, TokenManager, Warnings) {
        let store = InMemoryTokenStore()
        try store.write(.refresh, profile: "default", secret: "refresh-1", context: context)
        try store.write(.id, profile: "default", secret: TestJWT.id(iat: now - age, lifetime: 3600), context: context)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now - age, lifetime: 3600), context: context)
        let cognito = FakeCognito()
        cognito.session.onRefresh(.failure(refresh))
        let warnings = Warnings()
        let manager = makeManager(store: store, cognito: cognito, clock: FakeClock(now), warn: { line in warnings.lines.withLock { $0.append(line) } })
        return (store, cognito, manager, warnings)
    }

    @Test(arguments: [
        CognitoError.transport(TransportError(.connectionFailed, "Failed to connect", nothingSent: true)),
        .transport(TransportError(.timedOut, "Operation timed out")),
        .service(code: "InternalErrorException", message: "oops", httpStatus: 500),
        .service(code: "TooManyRequestsException", message: "Rate exceeded", httpStatus: 400),
        .badResponse(httpStatus: 503, detail: "not a JSON error"),
        .deadlineExceeded,
    ])
    func aTokenThatStillWorksIsHandedOutWithOneWarning(failure: CognitoError) throws {
        let (store, cognito, manager, warnings) = try session(refresh: failure)
        let token = try manager.currentToken(.access)
        #expect(token.value == (try store.read(.access, profile: "default")))
        #expect(cognito.session.refreshCount == 1)
        let lines = warnings.lines.withLock { $0 }
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("cog-cred: warning: could not refresh (") == true)
        #expect(lines.first?.contains("it expires at \(rfc3339(now + 300)) (in 5 min)") == true)
        #expect(store.writes.count == 3)
    }

    @Test func execGetsBothWhileBothStillWork() throws {
        let (_, _, manager, warnings) = try session(refresh: .deadlineExceeded)
        let tokens = try manager.currentTokens()
        #expect(tokens.access.claims.exp == now + 300)
        #expect(tokens.id?.claims.exp == now + 300)
        #expect(warnings.lines.withLock { $0.count } == 1)
    }

    @Test func aRefusedRefreshHandsOutNothing() throws {
        let refused = CognitoError.service(code: "NotAuthorizedException", message: "Refresh Token has been revoked", httpStatus: 400)
        let (_, cognito, manager, warnings) = try session(refresh: refused)
        cognito.session.onRefresh(.failure(refused))
        #expect(throws: AuthError.self) { try manager.currentToken(.access) }
        #expect(throws: AuthError.self) { try manager.currentTokens() }
        #expect(warnings.lines.withLock { $0 }.isEmpty)
    }

    @Test(arguments: [
        CognitoError.badResponse(httpStatus: 404, detail: "Not Found"),
        .transport(TransportError(.tls, "SSL certificate problem: self-signed certificate")),
    ])
    func anEndpointThatIsNotCognitoOrNotTrustedHandsOutNothing(failure: CognitoError) throws {
        let (_, cognito, manager, warnings) = try session(refresh: failure)
        cognito.session.onRefresh(.failure(failure))
        #expect(throws: AuthError.self) { try manager.currentToken(.access) }
        #expect(warnings.lines.withLock { $0 }.isEmpty)
    }

    @Test func moreLifeThanTheTokenHasIsNotGivenFromTheStore() throws {
        let (_, _, manager, warnings) = try session(refresh: .deadlineExceeded)
        #expect(throws: AuthError.self) { try manager.currentToken(.access, policy: RefreshPolicy(minTTL: 600)) }
        #expect(throws: AuthError.self) { try manager.currentTokens(policy: RefreshPolicy(minTTL: 600)) }
        #expect(warnings.lines.withLock { $0 }.isEmpty)
    }

    @Test func anExpiredTokenIsNeverHandedOut() throws {
        let (_, _, manager, warnings) = try session(age: 3700, refresh: .deadlineExceeded)
        #expect(throws: AuthError.self) { try manager.currentToken(.access) }
        #expect(warnings.lines.withLock { $0 }.isEmpty)
    }

    @Test func aRefreshDueOnlyByTheMarginHasAShortBudgetOfItsOwn() throws {
        let (_, cognito, manager, _) = try session(refresh: .deadlineExceeded)
        _ = try manager.currentToken(.access)
        let budgets = cognito.session.refreshBudgets.withLock { $0 }
        #expect(!budgets.isEmpty)
        #expect(budgets.allSatisfy { $0 != nil && $0! <= LocalSession.marginRefreshBudget && $0! > 0 })
        #expect(RequestBudget.deadline == nil)  // it ends with the refresh
    }

    @Test func anExpiredTokenAMissedMinTTLAndRefreshByNameKeepTheWholeDeadline() throws {
        for call in [
            { (manager: TokenManager) in _ = try? manager.currentToken(.access, policy: RefreshPolicy(minTTL: 600)) },
            { (manager: TokenManager) in _ = try? manager.refresh() },
        ] {
            let (_, cognito, manager, _) = try session(refresh: .deadlineExceeded)
            call(manager)
            let budgets = cognito.session.refreshBudgets.withLock { $0 }
            #expect(!budgets.isEmpty && budgets.allSatisfy { $0 == nil })
        }
        let (_, cognito, manager, _) = try session(age: 3700, refresh: .deadlineExceeded)
        _ = try? manager.currentToken(.access)
        let budgets = cognito.session.refreshBudgets.withLock { $0 }
        #expect(!budgets.isEmpty && budgets.allSatisfy { $0 == nil })
    }

    @Test func refreshByNameFailsAsItDid() throws {
        let (_, _, manager, warnings) = try session(refresh: .deadlineExceeded)
        #expect(throws: AuthError.self) { try manager.refresh() }
        #expect(warnings.lines.withLock { $0 }.isEmpty)
    }
}
