import Foundation
import Synchronization
import Testing

@testable import CogCredWrite
@testable import CogCredRead

/// The read path shared by both binaries: what is stored is handed out only
/// when it belongs to the profile as configured now, is well formed and fresh.
@Suite struct StoredTokensTests {
    let now: Int64 = 1_800_000_000

    func reader(_ store: InMemoryTokenStore, profile: Profile = testProfile) -> StoredTokens<InMemoryTokenStore, FakeClock> {
        StoredTokens(profileName: "default", profile: profile, store: store, clock: FakeClock(now))
    }

    @Test func freshBoundTokensAreHandedOut() throws {
        let store = InMemoryTokenStore()
        let access = TestJWT.access(iat: now, lifetime: 3600)
        try store.write(.access, profile: "default", secret: access, context: context)
        #expect(try reader(store).usable([.access], policy: RefreshPolicy())?[.access]?.value == access)
    }

    @Test func itemsOfAnotherPoolOrClientAreRefused() throws {
        let store = InMemoryTokenStore()
        let access = TestJWT.access(iat: now, lifetime: 3600)
        try store.write(.access, profile: "default", secret: access, context: context)
        for other in [Profile(userPoolID: "us-east-1_Other", clientID: "client123"), Profile(userPoolID: "us-east-1_Test", clientID: "other")] {
            #expect(throws: StoredTokensError.session(.boundElsewhere(profile: "default", unbound: false))) {
                try reader(store, profile: other).usable([.access], policy: RefreshPolicy())
            }
        }
    }

    @Test func itemsSavedWithoutABindingAreRefusedWithTheirOwnMessage() throws {
        let store = InMemoryTokenStore()
        store.writeUnbound(.access, profile: "default", secret: TestJWT.access(iat: now, lifetime: 3600))
        #expect(throws: StoredTokensError.session(.boundElsewhere(profile: "default", unbound: true))) {
            try reader(store).usable([.access], policy: RefreshPolicy())
        }
        #expect(StoredSessionError.boundElsewhere(profile: "default", unbound: true).message.contains("0.1"))
    }

    @Test func aTokenWhoseClaimsNameAnotherPoolIsRefusedEvenUnderTheRightAttributes() throws {
        // Another program replaced the secret of our item with another pool's token.
        let store = InMemoryTokenStore()
        let foreign = TestJWT.make([
            "exp": now + 3600, "iat": now, "token_use": "access", "client_id": testProfile.clientID,
            "iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Other",
        ])
        try store.write(.access, profile: "default", secret: foreign, context: context)
        #expect(throws: StoredTokensError.session(.boundElsewhere(profile: "default", unbound: false))) { try reader(store).usable([.access], policy: RefreshPolicy()) }
        let wrongAudience = TestJWT.make([
            "exp": now + 3600, "iat": now, "token_use": "id", "aud": "someone-else",
            "iss": "https://cognito-idp.us-east-1.amazonaws.com/\(testProfile.userPoolID)",
        ])
        try store.write(.id, profile: "default", secret: wrongAudience, context: context)
        #expect(throws: StoredTokensError.session(.boundElsewhere(profile: "default", unbound: false))) { try reader(store).usable([.id], policy: RefreshPolicy()) }
    }

    @Test func aValueThatCouldInjectALineIsNeverHandedOut() throws {
        let store = InMemoryTokenStore()
        let access = TestJWT.access(iat: now, lifetime: 3600)
        for bad in [access + "\npassword=evil", access + " ", "a.b", "a..c", ".b.c", access + ".d", "a.b.c\r"] {
            #expect(!IssuedToken.isWellFormed(bad), "\(bad.debugDescription)")
            try store.write(.access, profile: "default", secret: bad, context: context)
            // Not usable: a refresh replaces it, and it is never printed.
            #expect(try reader(store).usable([.access], policy: RefreshPolicy()) == nil)
        }
        #expect(IssuedToken.isWellFormed("a.b."))
        #expect(IssuedToken.isWellFormed(access))
    }

    @Test func extremeTimesNeitherCrashNorPass() throws {
        for exp in [Int64.min, -1, 9_000_000_000_000_000_000, Int64.max] {
            let token = TestJWT.make([
                "exp": exp, "iat": Int64.min, "token_use": "access", "client_id": testProfile.clientID,
                "iss": "https://x/\(testProfile.userPoolID)",
            ])
            let claims = try JWT.claims(of: token)
            #expect(claims.exp! >= 0 && claims.exp! <= JWTClaims.latestSeconds)
            let usable = RefreshPolicy().isUsable(claims, now: now)
            #expect(usable == (exp > now), "exp \(exp)")
            _ = rfc3339(claims.exp!)
            _ = TokenOutput.render(.json, choice: .access, tokens: [.access: IssuedToken(value: token, claims: claims)])
        }
        #expect(RefreshPolicy().isUsable(JWTClaims(exp: JWTClaims.latestSeconds), now: Int64.min) == false)
    }
}

@Suite struct BoundSessionTests {
    let now: Int64 = 1_800_000_000

    @Test func aRefreshTokenOfAnotherPoolIsNeverSent() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        let oldPool = ItemContext(userPoolID: "us-east-1_Old", clientID: "client123", username: "alice")
        try store.write(.refresh, profile: "default", secret: "old-pools-refresh-token", context: oldPool)
        let manager = makeManager(store: store, cognito: cognito, clock: FakeClock(now))
        #expect(throws: StoredSessionError.boundElsewhere(profile: "default", unbound: false)) {
            try manager.currentToken(.access)
        }
        #expect(cognito.state.withLock { $0.refreshCalls }.isEmpty)
        #expect(cognito.modernRefreshCalls.withLock { $0 } == 0)
    }

    /// A lock that records whether it is held, and a store that records
    /// whether each delete happened while it was.
    final class WatchedLock: RefreshLock, @unchecked Sendable {
        let held = Mutex(false)
        func withLock<T>(profile: String, _ body: () throws -> T) throws -> T {
            held.withLock { $0 = true }
            defer { held.withLock { $0 = false } }
            return try body()
        }
    }

    final class WatchingStore: TokenStore, @unchecked Sendable {
        let inner = InMemoryTokenStore()
        let lock: WatchedLock
        let deletesOutsideLock = Mutex(0)
        let deletesInsideLock = Mutex(0)
        init(lock: WatchedLock) { self.lock = lock }
        func read(_ kinds: [SecretKind], profile: String, binding: ItemBinding?) throws(SecretServiceError) -> [SecretKind: StoredSecret] {
            try inner.read(kinds, profile: profile, binding: binding)
        }
        func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
            try inner.write(kind, profile: profile, secret: secret, context: context)
        }
        func writePatiently(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
            try inner.writePatiently(kind, profile: profile, secret: secret, context: context)
        }
        func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
            if lock.held.withLock({ $0 }) {
                deletesInsideLock.withLock { $0 += 1 }
            } else {
                deletesOutsideLock.withLock { $0 += 1 }
            }
            return try inner.delete(kind, profile: profile)
        }
        func prepareWrites() {}
    }

    @Test func signOutDeletesHoldingTheRefreshLock() throws {
        let lock = WatchedLock()
        let store = WatchingStore(lock: lock)
        let manager = TokenManager(
            profileName: "default", profile: testProfile, store: store, cognito: FakeCognito(), clock: FakeClock(now), lock: lock)
        for scope in [TokenManager.SignOutScope.local, .revoke] {
            try store.write(.refresh, profile: "default", secret: "r", context: context)
            try store.write(.access, profile: "default", secret: TestJWT.access(iat: now, lifetime: 3600), context: context)
            #expect(try manager.signOut(scope) == 2)
            #expect(try store.read(.refresh, profile: "default") == nil && store.read(.access, profile: "default") == nil)
        }
        // Every kind was deleted (found or not), each under the lock.
        #expect(store.deletesInsideLock.withLock { $0 } == 10)
        #expect(store.deletesOutsideLock.withLock { $0 } == 0)
    }

    /// A store whose writes of one kind fail a given number of times.
    final class FlakyStore: TokenStore, @unchecked Sendable {
        let inner = InMemoryTokenStore()
        let failures = Mutex<[SecretKind: Int]>([:])
        let patientWrites = Mutex(0)
        func read(_ kinds: [SecretKind], profile: String, binding: ItemBinding?) throws(SecretServiceError) -> [SecretKind: StoredSecret] {
            try inner.read(kinds, profile: profile, binding: binding)
        }
        func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
            let fail = failures.withLock { f -> Bool in
                guard let n = f[kind], n > 0 else { return false }
                f[kind] = n - 1
                return true
            }
            if fail { throw .notResponding(seconds: 1.5) }
            try inner.write(kind, profile: profile, secret: secret, context: context)
        }
        func writePatiently(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError) {
            patientWrites.withLock { $0 += 1 }
            try write(kind, profile: profile, secret: secret, context: context)
        }
        func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool {
            try inner.delete(kind, profile: profile)
        }
        func prepareWrites() {}
    }

    final class Warnings: @unchecked Sendable {
        let lines = Mutex<[String]>([])
    }

    func rotatingManager(_ store: FlakyStore, warnings: Warnings) throws -> (TokenManager, String) {
        let clock = FakeClock(now)
        try store.inner.write(.refresh, profile: "default", secret: "old-refresh", context: context)
        let cognito = FakeCognito()
        let fresh = TestJWT.access(iat: now, lifetime: 3600)
        cognito.modernRefreshResults.withLock {
            $0 = [.success(AuthenticationResult(accessToken: fresh, idToken: TestJWT.id(iat: now, lifetime: 3600), refreshToken: "new-refresh"))]
        }
        let manager = TokenManager(
            profileName: "default", profile: testProfile, store: store, cognito: cognito, clock: clock,
            warn: { line in warnings.lines.withLock { $0.append(line) } })
        return (manager, fresh)
    }

    @Test func aRotatedRefreshTokenWhoseWriteFailsIsWrittenAgainPatiently() throws {
        let store = FlakyStore()
        store.failures.withLock { $0 = [.refresh: 1] }
        let warnings = Warnings()
        let (manager, fresh) = try rotatingManager(store, warnings: warnings)
        #expect(try manager.currentToken(.access).value == fresh)
        #expect(store.patientWrites.withLock { $0 } == 1)
        #expect(try store.read(.refresh, profile: "default", binding: testProfile.binding) == "new-refresh")
        #expect(warnings.lines.withLock { $0 }.isEmpty)
    }

    @Test func aRotatedRefreshTokenThatCannotBeStoredStillHandsOutTheTokenWithAWarning() throws {
        let store = FlakyStore()
        store.failures.withLock { $0 = [.refresh: 2] }
        let warnings = Warnings()
        let (manager, fresh) = try rotatingManager(store, warnings: warnings)
        #expect(try manager.currentToken(.access).value == fresh)
        #expect(warnings.lines.withLock { $0 }.count == 1)
        #expect(warnings.lines.withLock { $0 }.first?.contains("refresh token could not be stored") == true)
        // The access token that was handed out is stored too.
        #expect(try store.read(.access, profile: "default", binding: testProfile.binding) == fresh)
    }
}
