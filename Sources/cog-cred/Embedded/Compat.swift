// What the Glibc module and the Synchronization library give the SwiftPM
// builds and Embedded Swift lacks, for the front's Embedded build only
// (scripts/build, docs/performance.md "Embedded Swift"): SwiftPM excludes
// this folder, and scripts/build compiles it with the library.
import CLinux

/// errno, as the Glibc module's overlay has it.
var errno: Int32 {
    get { clinux_errno() }
    set { clinux_set_errno(newValue) }
}

/// A value behind a lock, with the part of Synchronization's `Mutex` the
/// read side uses (Embedded Swift's Synchronization has no Mutex on Linux).
final class Mutex<Value>: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(lock, nil)
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value)
    }
}
