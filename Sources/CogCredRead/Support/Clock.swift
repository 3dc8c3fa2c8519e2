#if canImport(Glibc)
import Glibc
#endif

/// Seconds since the Unix epoch. Token expiry has one-second resolution
/// (JWT `exp`), so whole seconds are all the token logic needs.
public protocol Clock: Sendable {
    func now() -> Int64
}

/// The real wall clock.
public struct SystemClock: Clock {
    public init() {}
    public func now() -> Int64 { Int64(time(nil)) }
}

/// A monotonic deadline for one command, so that all the requests a command
/// makes share one time budget.
public struct Deadline: Sendable {
    private let end: Double
    /// Seconds given back since the start (the time the command spent
    /// waiting for the person, which is not the network's).
    private let givenBack: (@Sendable () -> Double)?

    public init(secondsFromNow: Double, givingBack givenBack: (@Sendable () -> Double)? = nil) {
        end = Deadline.monotonicSeconds() + secondsFromNow
        self.givenBack = givenBack
    }

    /// Seconds left, never negative.
    public var remaining: Double { max(0, end + (givenBack?() ?? 0) - Deadline.monotonicSeconds()) }

    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// Sleeps for `seconds`, resuming after a signal interrupts the sleep.
public func sleep(seconds: Double) {
    var interval = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var left = timespec()
    while nanosleep(&interval, &left) != 0 && errno == EINTR { interval = left }
}
