import CogCredRead
import Synchronization

/// The time this command has spent waiting for the person: at a prompt, at
/// a security key's touch. A command's time limit (`--command-timeout`,
/// Deadline) bounds what the network and Cognito take; a person who takes
/// 40 s to find their key must not leave the sign-in's next call no time.
/// So the command's deadline gets this time back (the executable makes it
/// with `Deadline(secondsFromNow:givingBack:)`).
public enum PersonTime {
    private static let waited = Mutex(0.0)

    /// Runs `body`, a wait for the person, and counts its time.
    public static func waiting<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        let start = ContinuousClock.now
        defer {
            let took = seconds(since: start)
            waited.withLock { $0 += took }
        }
        return try body()
    }

    /// Seconds waited for the person so far.
    public static var total: Double { waited.withLock { $0 } }
}
