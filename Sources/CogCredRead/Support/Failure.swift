/// What kind of failure an error is, independent of where it came from.
///
/// The executable turns each category into one documented exit status (see
/// the README); the library never decides exit numbers itself.
public enum FailureCategory: Sendable, Equatable, CaseIterable {
    /// The command line was wrong, or input that only a terminal can give was needed.
    case usage
    /// Input data (a password, a code, a file) was malformed.
    case dataError
    /// The Secret Service is missing, unreachable or locked.
    case secretServiceUnavailable
    /// A temporary failure: network, timeout, throttling, a 5xx or an unreadable answer.
    case temporary
    /// Not signed in, credentials rejected, or the session expired.
    case notAuthenticated
    /// The profile is missing or its configuration is invalid.
    case configuration
    /// A program cog-cred runs (git, kubectl: the setup commands) is not
    /// installed, or crashes instead of doing its part.
    case programUnavailable
    /// A security key (for a passkey) cannot be reached.
    case authenticatorUnavailable
    /// The other side broke the protocol: a passkey challenge for another
    /// relying party than the profile's, or passkey options that cannot be
    /// read or asked for key types no security key makes.
    case protocolViolation
    /// Anything else.
    case other
}

/// An error that knows how to explain itself to the person at the terminal.
///
/// `message` is one line, says what to do next, and never contains a secret.
public protocol CogCredFailure: Error {
    var category: FailureCategory { get }
    var message: String { get }
}

/// An input value that cannot be used: empty passwords, malformed codes.
public struct InputError: CogCredFailure, Equatable {
    public let message: String
    public let category: FailureCategory

    public init(_ message: String, category: FailureCategory = .dataError) {
        self.message = message
        self.category = category
    }
}

/// " --profile NAME" for a suggested command, nothing for the default profile.
public func profileFlag(_ profile: String) -> String {
    profile == "default" ? "" : " --profile \(profile)"
}
