import Foundation
import Synchronization
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

@Suite struct RefreshLockTests {
    func directory() -> String {
        TestDirectories.path("lock")
    }

    final class Occupancy: Sendable {
        let inside = Mutex(0)
        let most = Mutex(0)
    }

    @Test func holdersTakeTurns() throws {
        let lock = FileRefreshLock(directory: directory(), wait: 10)
        let room = Occupancy()
        let entered = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do {
                try lock.withLock(profile: "p") {
                    entered.withLock { $0 += 1 }
                    let now = room.inside.withLock { $0 += 1; return $0 }
                    room.most.withLock { $0 = max($0, now) }
                    usleep(2000)
                    room.inside.withLock { $0 -= 1 }
                }
            } catch {
                Issue.record("a holder could not take the lock: \(error)")
            }
        }
        // Every holder got in, one at a time.
        #expect(entered.withLock { $0 } == 8)
        #expect(room.most.withLock { $0 } == 1)
    }

    @Test func theWaitIsBounded() throws {
        let dir = directory()
        let holder = FileRefreshLock(directory: dir, wait: 10)
        let waiter = FileRefreshLock(directory: dir, wait: 0.05)
        _ = try holder.withLock(profile: "p") {
            #expect(throws: RefreshLockError.timedOut(profile: "p", seconds: 0)) {
                try waiter.withLock(profile: "p") {}
            }
        }
        // Released with its holder: taken at once now.
        try waiter.withLock(profile: "p") {}
    }

    func openLock(_ dir: String) throws -> Int32 {
        guard case .success(let fd) = ProfileLockFile.open(directory: dir, profile: "p") else {
            throw RefreshLockError.unusableDirectory(dir, "open failed")
        }
        return fd
    }

    /// A waiter blocked in flock wakes when the holder lets go, rather than
    /// at its time limit (10 s here; the test process has other threads, so
    /// this also shows the timer's signal reaches the waiting thread only).
    @Test func aBlockedWaiterWakesOnRelease() throws {
        let dir = directory()
        let holder = try openLock(dir), waiter = try openLock(dir)
        defer { close(holder); close(waiter) }
        #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
        let result = Mutex<Bool?>(nil)
        let thread = Thread { result.withLock { $0 = ProfileLockFile.waitUntilFree(waiter, waitingAtMost: 10) } }
        thread.start()
        #expect(!ProfileLockFile.waitUntilFree(try openLock(dir), waitingAtMost: 0.05))  // still held
        flock(holder, LOCK_UN)
        let started = Date()
        while result.withLock({ $0 }) == nil && Date().timeIntervalSince(started) < 20 { usleep(1000) }
        #expect(result.withLock { $0 } == true)
        #expect(Date().timeIntervalSince(started) < 10)
        // waitUntilFree leaves the lock free: an exclusive lock is taken at once.
        #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
    }

    /// The lock the front binary handed over is released as soon as the
    /// refresh is done, so waiting callers need not wait for cog-cred-cli to
    /// exit; a second use in the same process takes it again.
    @Test func aHandedOverLockIsReleasedAfterItsUse() throws {
        let dir = directory()
        let held = try openLock(dir), other = try openLock(dir)
        defer { close(held); close(other) }
        #expect(flock(held, LOCK_EX | LOCK_NB) == 0)
        let lock = FileRefreshLock(directory: dir, wait: 1, held: HandedOverLock(profile: "p", fd: held))
        try lock.withLock(profile: "p") {
            #expect(flock(other, LOCK_EX | LOCK_NB) != 0)  // still ours inside
        }
        #expect(flock(other, LOCK_EX | LOCK_NB) == 0)
        flock(other, LOCK_UN)
        try lock.withLock(profile: "p") {
            #expect(flock(other, LOCK_EX | LOCK_NB) != 0)
        }
    }

    @Test func theDirectoryIsPrivate() throws {
        let dir = directory()
        try FileRefreshLock(directory: dir, wait: 1).withLock(profile: "p") {}
        var info = stat()
        #expect(stat(dir, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        chmod(dir, 0o755)
        #expect(throws: RefreshLockError.self) { try FileRefreshLock(directory: dir, wait: 1).withLock(profile: "p") {} }
    }
}

/// The front's finding that comes with a handed-over lock.
@Suite struct HandedOverLockTests {
    /// A lock whose finding says a refresh is due, once.
    struct DueLock: RefreshLock {
        let handed = HandedOverLock(profile: "default", fd: -1)
        func withLock<T>(profile: String, _ body: () throws -> T) throws -> T { try body() }
        func takeRefreshDue(profile: String) -> Bool { profile == handed.profile && handed.takeRefreshDue() }
    }

    @Test func theFindingIsTakenOnceAndOnlyForItsProfile() {
        let lock = FileRefreshLock(directory: "/nonexistent", wait: 1, held: HandedOverLock(profile: "p", fd: -1))
        #expect(!lock.takeRefreshDue(profile: "other"))
        #expect(lock.takeRefreshDue(profile: "p"))
        #expect(!lock.takeRefreshDue(profile: "p"))
        #expect(!FileRefreshLock(directory: "/nonexistent", wait: 1).takeRefreshDue(profile: "p"))
    }

    /// With the finding, cog-cred-cli refreshes without looking at the
    /// stored token (here one with life left, which a look would hand out);
    /// the next call, finding used, hands out what the refresh stored.
    @Test func aRefreshFoundDueIsMadeWithoutReadingAgain() throws {
        let now: Int64 = 1_800_000_000
        let store = InMemoryTokenStore()
        try store.write(.refresh, profile: "default", secret: "refresh-1", context: context)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now - 100, lifetime: 3600), context: context)
        let cognito = FakeCognito()
        let fresh = TestJWT.access(iat: now, lifetime: 3600)
        cognito.session.onRefresh(.success(AuthenticationResult(accessToken: fresh, idToken: nil, refreshToken: nil)))
        let manager = makeManager(store: store, cognito: cognito, clock: FakeClock(now), lock: DueLock())
        #expect(try manager.currentToken(.access).value == fresh)
        #expect(cognito.session.refreshCount == 1)
        #expect(try manager.currentToken(.access).value == fresh)
        #expect(cognito.session.refreshCount == 1)
    }
}
