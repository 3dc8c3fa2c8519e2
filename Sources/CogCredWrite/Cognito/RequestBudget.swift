/// A time budget shorter than the command's deadline, for the requests made
/// inside `within(seconds:)`, retries included: a refresh that is due only
/// because a token is inside its margin must not hold up a caller whose
/// token still works (CurrentToken). Task-local, so it reaches the HTTP
/// clients the use case makes without a parameter through each of them,
/// and ends with the scope that set it.
public enum RequestBudget {
    @TaskLocal static var deadline: Deadline?

    /// `body` with at most `seconds` for its requests (never more than an
    /// enclosing budget's).
    public static func within<T>(seconds: Double, _ body: () throws -> T) rethrows -> T {
        let budget = Deadline(secondsFromNow: min(seconds, deadline?.remaining ?? seconds))
        return try $deadline.withValue(budget, operation: body)
    }

    /// Seconds left of `deadline`, or of the budget in force if that ends sooner.
    static func remaining(_ deadline: Deadline) -> Double {
        min(deadline.remaining, Self.deadline?.remaining ?? .infinity)
    }
}
