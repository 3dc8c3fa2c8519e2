import Foundation
import Synchronization
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

/// An identity pool that answers from a script and counts calls.
final class FakeIdentity: CognitoIdentityClient {
    struct State {
        var getIDs = 0
        var credentialCalls = 0
        var basicCalls = 0
        var logins: [[String: String]] = []
        var roles: [String?] = []
        var failures: [CognitoError] = []
    }
    let state = Mutex(State())
    let now: Int64

    init(now: Int64) { self.now = now }

    func getID(poolID: String, logins: [String: String]) throws(CognitoError) -> String {
        state.withLock { $0.getIDs += 1 }
        return "us-east-1:0000-identity"
    }

    func credentials(identityID: String, logins: [String: String], roleARN: String?) throws(CognitoError)
        -> (accessKeyID: String, secretAccessKey: String, sessionToken: String, expiration: Int64)
    {
        let (count, failure) = state.withLock { s -> (Int, CognitoError?) in
            s.credentialCalls += 1
            s.logins.append(logins)
            s.roles.append(roleARN)
            return (s.credentialCalls, s.failures.isEmpty ? nil : s.failures.removeFirst())
        }
        if let failure { throw failure }
        return ("ASIAKEY\(count)", "secret\(count)", "session\(count)", now + 3600)
    }

    func basicFlowCredentials(identityID: String, logins: [String: String], roleARN: String, sessionName: String)
        throws(CognitoError) -> (accessKeyID: String, secretAccessKey: String, sessionToken: String, expiration: Int64)
    {
        state.withLock { $0.basicCalls += 1 }
        return ("ASIABASIC", "secret", "session", now + 900)
    }
}

@Suite struct AWSCredentialsTests {
    let now: Int64 = 1_800_000_000

    @Test func storedAndPrintedShapes() throws {
        let credentials = AWSCredentials(
            accessKeyID: "ASIA1", secretAccessKey: "s", sessionToken: "t", expiration: 1_800_003_600, identityPoolID: "us-east-1:p",
            subject: "sub-of-alice")
        #expect(AWSCredentials(stored: credentials.stored) == credentials)
        #expect(AWSCredentials(stored: "{}") == nil && AWSCredentials(stored: "not json") == nil)
        // Written before credentials carried their user: not cog-cred's shape now.
        let unbound = credentials.stored.replacingOccurrences(of: #","Sub":"sub-of-alice""#, with: "")
        #expect(unbound != credentials.stored && AWSCredentials(stored: unbound) == nil)
        let printed = try JSONSerialization.jsonObject(with: Data(credentials.credentialProcess.utf8)) as! [String: Any]
        #expect(Set(printed.keys) == ["Version", "AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"])
        #expect(printed["Version"] as? Int == 1 && printed["Expiration"] as? String == "2027-01-15T09:00:00Z")
        #expect(credentials.isFresh(now: 1_800_000_000, margin: 300))
        #expect(!credentials.isFresh(now: 1_800_003_400, margin: 300))
        var far = credentials
        far.expiration = .max
        #expect(far.isFresh(now: .min, margin: 300))  // saturates instead of overflowing
    }

    @Test func anExpirationNoClockCanReachIsRefusedNotTrapped() {
        #expect(CognitoIdentityHTTPClient.epochSeconds(1.515115602E9) == 1_515_115_602)
        for bad in [1.5e29, -1, .infinity, .nan] { #expect(CognitoIdentityHTTPClient.epochSeconds(bad) == nil) }
    }

    @Test func theCommandLineIsReadStrictly() {
        #expect(ReadRequest.parse(["cog-cred", "aws-credentials", "-p", "work"]) == .awsCredentials(profile: "work", minTTL: nil))
        #expect(ReadRequest.parse(["cog-cred", "aws-credentials", "--min-ttl", "600"]) == .awsCredentials(profile: nil, minTTL: 600))
        #expect(ReadRequest.parse(["cog-cred", "aws-credentials", "--min-ttl", "50000"]) == nil)  // cog-cred-cli says why
        #expect(ReadRequest.parse(["cog-cred", "aws-credentials", "extra"]) == nil)
    }

    func manager(_ store: InMemoryTokenStore, _ identity: FakeIdentity, profile: Profile) -> TokenManager {
        makeManager(store: store, identity: identity, profile: profile, clock: FakeClock(now))
    }

    var profile: Profile {
        var profile = testProfile
        profile.identityPoolID = "us-east-1:0a1b2c3d-0000-4000-8000-000000000001"
        return profile
    }

    func signedIn() throws -> InMemoryTokenStore {
        let store = InMemoryTokenStore()
        try store.write(.refresh, profile: "default", secret: "refresh-1", context: context)
        try store.write(.id, profile: "default", secret: TestJWT.id(iat: now, lifetime: 3600), context: context)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now, lifetime: 3600), context: context)
        return store
    }

    @Test func theIDTokenBuysCredentialsOnceAndTheyAreReused() throws {
        let store = try signedIn()
        let identity = FakeIdentity(now: now)
        let first = try manager(store, identity, profile: profile).awsCredentials()
        #expect(first.accessKeyID == "ASIAKEY1" && first.identityPoolID == profile.identityPoolID)
        let logins = identity.state.withLock { $0.logins }
        let idToken = try #require(try store.read(.id, profile: "default"))
        #expect(logins == [["cognito-idp.us-east-1.amazonaws.com/us-east-1_Test": idToken]])
        #expect(try manager(store, identity, profile: profile).awsCredentials() == first)
        #expect(identity.state.withLock { ($0.getIDs, $0.credentialCalls) } == (1, 1))
        // More life than they have: new ones, the identity id kept.
        _ = try manager(store, identity, profile: profile).awsCredentials(margin: 4000)
        #expect(identity.state.withLock { ($0.getIDs, $0.credentialCalls) } == (1, 2))
        #expect(try store.read(.identityID, profile: "default") == "us-east-1:0000-identity")
    }

    @Test func storedCredentialsAreTheSignedInUsersOnly() throws {
        let credentials = AWSCredentials(
            accessKeyID: "ASIA1", secretAccessKey: "s", sessionToken: "t", expiration: now + 3600, identityPoolID: "us-east-1:p",
            subject: "sub-of-alice")
        let alice = StoredSecret.found(TestJWT.id(iat: now, lifetime: 3600, username: "alice"))
        let bob = StoredSecret.found(TestJWT.id(iat: now, lifetime: 3600, username: "bob"))
        #expect(AWSCredentials(found: [.awsCredentials: .found(credentials.stored), .id: alice], identityPoolID: "us-east-1:p") == credentials)
        #expect(AWSCredentials(found: [.awsCredentials: .found(credentials.stored), .id: bob], identityPoolID: "us-east-1:p") == nil)
        #expect(AWSCredentials(found: [.awsCredentials: .found(credentials.stored)], identityPoolID: "us-east-1:p") == nil)
        #expect(AWSCredentials(found: [.awsCredentials: .found(credentials.stored), .id: alice], identityPoolID: "us-east-1:q") == nil)
        #expect(AWSCredentials(found: [.awsCredentials: .boundElsewhere(unbound: false), .id: alice], identityPoolID: "us-east-1:p") == nil)
    }

    @Test func anotherUsersCredentialsAreFetchedAgainForTheUserSignedInNow() throws {
        let store = try signedIn()
        let identity = FakeIdentity(now: now)
        let alices = try manager(store, identity, profile: profile).awsCredentials()
        #expect(alices.subject == "sub-of-alice")
        // Bob's ID token in the store, Alice's fresh credentials beside it
        // (as another tool, or an older cog-cred, could leave them).
        try store.write(.id, profile: "default", secret: TestJWT.id(iat: now, lifetime: 3600, username: "bob"), context: context)
        let bobs = try manager(store, identity, profile: profile).awsCredentials()
        #expect(bobs.subject == "sub-of-bob" && bobs.accessKeyID != alices.accessKeyID)
        #expect(identity.state.withLock { $0.credentialCalls } == 2)
        #expect(try manager(store, identity, profile: profile).status().awsCredentialsExpireAt == bobs.expiration)
    }

    @Test func aSignInDeletesThePreviousUsersIdentityAndCredentials() throws {
        let store = try signedIn()
        let identity = FakeIdentity(now: now)
        _ = try manager(store, identity, profile: profile).awsCredentials()
        #expect(try store.read(.identityID, profile: "default") != nil && store.read(.awsCredentials, profile: "default") != nil)
        let bob = AuthenticationResult(
            accessToken: TestJWT.access(iat: now, lifetime: 3600, username: "bob"),
            idToken: TestJWT.id(iat: now, lifetime: 3600, username: "bob"), refreshToken: "refresh-bob", expiresIn: 3600)
        _ = try manager(store, identity, profile: profile).stored.save(bob, requireRefreshToken: true)
        #expect(try store.read(.identityID, profile: "default") == nil && store.read(.awsCredentials, profile: "default") == nil)
        // A refresh keeps them: the same user's session goes on.
        _ = try manager(store, identity, profile: profile).awsCredentials()
        let refreshed = AuthenticationResult(
            accessToken: TestJWT.access(iat: now, lifetime: 3600, username: "bob"),
            idToken: TestJWT.id(iat: now, lifetime: 3600, username: "bob"), refreshToken: nil, expiresIn: 3600)
        _ = try manager(store, identity, profile: profile).stored.save(refreshed, requireRefreshToken: false)
        #expect(try store.read(.identityID, profile: "default") != nil && store.read(.awsCredentials, profile: "default") != nil)
    }

    @Test func aVanishedIdentityIsAskedForAgainAndErrorsAreWorded() throws {
        let store = try signedIn()
        try store.write(.identityID, profile: "default", secret: "us-east-1:gone", context: context)
        let identity = FakeIdentity(now: now)
        identity.state.withLock { $0.failures = [.service(code: "ResourceNotFoundException", message: "gone", httpStatus: 400)] }
        #expect(try manager(store, identity, profile: profile).awsCredentials().accessKeyID == "ASIAKEY2")
        #expect(identity.state.withLock { $0.getIDs } == 1)
        identity.state.withLock { $0.failures = [.service(code: "NotAuthorizedException", message: "Invalid login token.", httpStatus: 400)] }
        #expect {
            try manager(store, identity, profile: profile).awsCredentials(margin: 86_400)
        } throws: { error in
            guard let error = error as? AuthError else { return false }
            return error.category == .notAuthenticated && error.message.contains("authentication providers")
        }
    }

    @Test func theBasicFlowAssumesTheRole() throws {
        var basic = profile
        basic.roleARN = "arn:aws:iam::123456789012:role/r"
        basic.basicFlow = true
        let identity = FakeIdentity(now: now)
        #expect(try manager(try signedIn(), identity, profile: basic).awsCredentials().accessKeyID == "ASIABASIC")
        #expect(identity.state.withLock { ($0.basicCalls, $0.credentialCalls) } == (1, 0))
        var noPool = profile
        noPool.identityPoolID = nil
        #expect(throws: ConfigError.missingIdentityPool(profile: "default")) {
            try manager(try signedIn(), identity, profile: noPool).awsCredentials()
        }
    }
}
