import Foundation
import Synchronization
import Testing
import CogCredTestSupport

@testable import CogCredWrite
@testable import CogCredRead

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
        #expect(cognito.session.state.withLock { $0.calls }.isEmpty)
        #expect(cognito.session.modernRefreshCalls.withLock { $0 } == 0)
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
        let manager = makeManager(store: store, clock: FakeClock(now), lock: lock)
        for scope in [SignOutScope.local, .revoke] {
            try store.write(.refresh, profile: "default", secret: "r", context: context)
            try store.write(.access, profile: "default", secret: TestJWT.access(iat: now, lifetime: 3600), context: context)
            #expect(try manager.signOut(scope).removed == 2)
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
        cognito.session.modernRefreshResults.withLock {
            $0 = [.success(AuthenticationResult(accessToken: fresh, idToken: TestJWT.id(iat: now, lifetime: 3600), refreshToken: "new-refresh"))]
        }
        let manager = makeManager(store: store, cognito: cognito, clock: clock, warn: { line in warnings.lines.withLock { $0.append(line) } })
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
