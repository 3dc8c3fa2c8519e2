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

    /// A transport that answers from a script, in order, and keeps each request.
    final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
        var answers: [Result<HTTPResponse, TransportError>]
        var requests: [HTTPRequest] = []
        init(_ answers: [Result<HTTPResponse, TransportError>]) { self.answers = answers }
        func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
            requests.append(request)
            return try (answers.isEmpty ? .success(HTTPResponse(status: 500, body: Data())) : answers.removeFirst()).get()
        }
    }

    func verifier(_ transport: ScriptedTransport) -> TokenVerifier {
        TokenVerifier(
            transport: transport, timeouts: testProfile.timeouts, deadline: Deadline(secondsFromNow: 30), retryPolicy: RetryPolicy(sleeper: { _ in }))
    }

    static let url = "https://idp.example/pool/.well-known/jwks.json"

    /// The keys come the way every request does (RetryingPost): a fetch
    /// that fails for a moment (a 503, a connection reset) is tried again.
    @Test func aJWKSFetchThatFailsForAMomentIsRetried() throws {
        let transport = ScriptedTransport([
            .success(HTTPResponse(status: 503, body: Data("<html/>".utf8))),
            .failure(TransportError(.connectionFailed, "Recv failure: Connection reset by peer")),
            .success(HTTPResponse(status: 200, body: Data(#"{"keys":[{"kid":"k1","kty":"RSA","n":"AQAB","e":"AQAB"}]}"#.utf8))),
        ])
        let keys = try verifier(transport).fetchKeys(Self.url)
        #expect(keys.map(\.kid) == ["k1"])
        #expect(transport.requests.count == 3)
        #expect(transport.requests.allSatisfy { $0.method == "GET" && $0.url == Self.url })
        #expect(transport.requests.map(\.attempt) == [1, 2, 3])
    }

    /// No key set where the keys should be is an answer, not a hiccup.
    @Test func aJWKSFetchAnsweredWithoutKeysIsNotRetried() {
        let transport = ScriptedTransport([.success(HTTPResponse(status: 404, body: Data()))])
        #expect(throws: CognitoError.self) { try verifier(transport).fetchKeys(Self.url) }
        #expect(transport.requests.count == 1)
    }
}
