import CogCredWrite

/// The documented exit statuses (sysexits.h values), one per failure category.
enum ExitStatus {
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    /// The Secret Service, or a program a setup command runs (git, kubectl):
    /// sysexits' EX_UNAVAILABLE covers a missing support program.
    static let unavailable: Int32 = 69
    static let temporaryFailure: Int32 = 75
    /// sysexits' EX_PROTOCOL: the endpoint broke the protocol (a passkey
    /// challenge for another relying party than the profile's, passkey
    /// options that cannot be read, key types no security key makes).
    static let protocolError: Int32 = 76
    static let notAuthenticated: Int32 = 77
    static let configuration: Int32 = 78
    static let other: Int32 = 1

    static func code(for category: FailureCategory) -> Int32 {
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
