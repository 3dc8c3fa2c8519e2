import Foundation
import Testing
import CogCredTestSupport
@testable import CogCredWrite

/// `status --verify`: the pool's keys fetched only when there are tokens to
/// check, each stored token checked, and the verdict the command exits by.
@Suite struct StatusReportTests {
    let now: Int64 = 1_800_000_000
    let store = InMemoryTokenStore()

    func keys(_ transport: FakeTransport) -> PoolKeySource {
        let verifier = TokenVerifier(transport: transport, timeouts: testProfile.timeouts, deadline: Deadline(secondsFromNow: 30))
        return PoolKeySource(verifier: verifier, pool: TokenVerifier.poolKeys(endpoint: "https://idp.example", profile: testProfile))
    }

    func report(_ transport: FakeTransport, verify: Bool = true) throws -> StatusReport {
        try makeManager(store: store, clock: FakeClock(now)).status(verifying: verify ? { keys(transport) } : nil)
    }

    @Test func withoutVerifyNothingIsFetched() throws {
        try store.write(.refresh, profile: "default", secret: "r", context: context)
        let transport = FakeTransport(status: 200, body: #"{"keys": []}"#)
        let report = try report(transport, verify: false)
        #expect(report.session.signedIn && report.checks == nil && report.verificationFailure == nil)
        #expect(transport.last == nil)
    }

    @Test func signedOutThereIsNothingToVerify() throws {
        let transport = FakeTransport(status: 200, body: #"{"keys": []}"#)
        let report = try report(transport)
        #expect(!report.session.signedIn && report.checks == nil)
        #expect(transport.last == nil)
    }

    @Test func eachStoredTokenIsCheckedAgainstThePublishedKeys() throws {
        try store.write(.refresh, profile: "default", secret: "r", context: context)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now, lifetime: 3600), context: context)
        let transport = FakeTransport(status: 200, body: #"{"keys": []}"#)
        let report = try report(transport)
        #expect(transport.last?.url == "https://idp.example/\(testProfile.userPoolID)/.well-known/jwks.json")
        #expect(report.checks?.map(\.kind) == [.access])
        // Signed with no key the pool publishes.
        guard case .verificationFailed(let first)? = report.verificationFailure else {
            Issue.record("passed: \(String(describing: report.checks))")
            return
        }
        #expect(first.hasPrefix("access "))
    }

    @Test func theRefreshTokenAloneVerifiesNothing() throws {
        try store.write(.refresh, profile: "default", secret: "r", context: context)
        let report = try report(FakeTransport(status: 200, body: #"{"keys": []}"#))
        #expect(report.checks?.isEmpty == true)
        #expect(report.verificationFailure == .verificationFailed("no access or ID token is stored to check"))
    }

    @Test func keysThatCannotBeFetchedAreTheFetchsFailure() throws {
        try store.write(.refresh, profile: "default", secret: "r", context: context)
        let error = #expect(throws: AuthError.self) { try report(FakeTransport(status: 404, body: "no")) }
        guard case .cognito(_, .fetchKeys)? = error else {
            Issue.record("not the fetch's failure: \(String(describing: error))")
            return
        }
    }
}

/// The git and docker helpers' `erase`: the rejected access token goes, the
/// refresh token stays.
@Suite struct RejectedTokenTests {
    let store = InMemoryTokenStore()

    func manager() throws -> TokenManager {
        try store.write(.refresh, profile: "default", secret: "r", context: context)
        try store.write(.access, profile: "default", secret: "issued", context: context)
        return makeManager(store: store, clock: FakeClock(1_800_000_000))
    }

    @Test func onlyTheTokenTheServerRejectedIsForgotten() throws {
        let manager = try manager()
        #expect(try !manager.forgetAccessToken(onlyIf: { $0 == "refreshed since" }))
        #expect(try store.read(.access, profile: "default") == "issued")
        #expect(try manager.forgetAccessToken(onlyIf: { $0 == "issued" }))
        #expect(try store.read(.access, profile: "default") == nil)
        #expect(try store.read(.refresh, profile: "default") == "r")
    }

    @Test func withoutAConditionTheStoredTokenGoes() throws {
        let manager = try manager()
        #expect(try manager.forgetAccessToken())
        #expect(try !manager.forgetAccessToken())
        #expect(try store.read(.refresh, profile: "default") == "r")
    }
}
