import Foundation
import Synchronization
import Testing
@testable import CogCredCore

@Suite struct RefreshLockTests {
    func directory() -> String {
        NSTemporaryDirectory() + "cog-cred-lock-\(UUID().uuidString)"
    }

    final class Occupancy: Sendable {
        let inside = Mutex(0)
        let most = Mutex(0)
    }

    @Test func holdersTakeTurns() throws {
        let lock = FileRefreshLock(directory: directory(), wait: 10)
        let room = Occupancy()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            try? lock.withLock(profile: "p") {
                let now = room.inside.withLock { $0 += 1; return $0 }
                room.most.withLock { $0 = max($0, now) }
                usleep(2000)
                room.inside.withLock { $0 -= 1 }
            }
        }
        #expect(room.most.withLock { $0 } == 1)
    }

    @Test func theWaitIsBounded() throws {
        let dir = directory()
        let holder = FileRefreshLock(directory: dir, wait: 10)
        let waiter = FileRefreshLock(directory: dir, wait: 0.05)
        try holder.withLock(profile: "p") {
            #expect(throws: RefreshLockError.timedOut(profile: "p", seconds: 0)) {
                try waiter.withLock(profile: "p") {}
            }
        }
        // Released with its holder: taken at once now.
        try waiter.withLock(profile: "p") {}
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

@Suite struct ConfigPermissionTests {
    @Test func aConfigOthersCanWriteIsRefused() throws {
        let dir = NSTemporaryDirectory() + "cog-cred-perm-\(UUID().uuidString)"
        let store = ConfigStore(path: dir + "/config.json")
        try store.save(ConfigFile(profiles: ["default": Profile(userPoolID: "us-east-1_A", clientID: "c")]))
        _ = try store.load()
        chmod(store.path, 0o666)
        #expect(throws: ConfigError.self) { try store.load() }
        chmod(store.path, 0o600)
        chmod(dir, 0o777)
        #expect(throws: ConfigError.self) { try store.load() }
        chmod(dir, 0o700)
        #expect(try store.load().profiles.count == 1)
    }
}
