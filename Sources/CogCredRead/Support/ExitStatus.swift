/// The documented exit statuses (sysexits.h values), one per failure category:
/// cog-cred-cli's, and the front's for what the agent answers (Front).
public enum ExitStatus {
    public static let usage: Int32 = 64
    public static let dataError: Int32 = 65
    /// The Secret Service, or a program a setup command runs (git, kubectl):
    /// sysexits' EX_UNAVAILABLE covers a missing support program.
    public static let unavailable: Int32 = 69
    public static let temporaryFailure: Int32 = 75
    /// sysexits' EX_PROTOCOL: the endpoint broke the protocol (a passkey
    /// challenge for another relying party than the profile's, passkey
    /// options that cannot be read, key types no security key makes).
    public static let protocolError: Int32 = 76
    public static let notAuthenticated: Int32 = 77
    public static let configuration: Int32 = 78
    public static let other: Int32 = 1

    public static func code(for category: FailureCategory) -> Int32 {
        switch category {
        case .usage: return usage
        case .dataError: return dataError
        case .secretServiceUnavailable: return unavailable
        case .temporary: return temporaryFailure
        case .notAuthenticated: return notAuthenticated
        case .configuration: return configuration
        case .programUnavailable, .authenticatorUnavailable: return unavailable
        case .protocolViolation: return protocolError
        case .other: return other
        }
    }
}
