import CogCredRead
import Synchronization

/// The time this command has spent waiting for the person: at a prompt, at
/// a security key's touch. A command's time limit (`--command-timeout`,
/// Deadline) bounds what the network and Cognito take; a person who takes
/// 40 s to find their key must not leave the sign-in's next call no time.
/// So the calls' deadline gets this time back (`networkRemaining`).
public enum PersonTime {
    private static let seconds = Mutex(0.0)

    /// Runs `body`, a wait for the person, and counts its time.
    public static func waiting<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        let start = ContinuousClock.now
        defer {
            let waited = ContinuousClock.now - start
            let add = Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18
            seconds.withLock { $0 += add }
        }
        return try body()
    }

    static var total: Double { seconds.withLock { $0 } }
}

extension Deadline {
    /// What is left for the network: the person's time given back.
    var networkRemaining: Double { remaining + PersonTime.total }
}
