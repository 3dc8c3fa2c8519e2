/// The CA certificates HTTPS to Cognito (and the identity pool, STS, the
/// managed login, the JWKS) trusts, and what chose them: AWS_CA_BUNDLE, as
/// the AWS SDKs and CLI read it, over the profile's `configure --ca-bundle`,
/// over the system's. Said by `status`, the `--debug` trace and a TLS
/// failure, so that no one is told to set what is already set.
public struct CABundle: Sendable, Equatable {
    public enum Source: String, Sendable {
        case environment = "AWS_CA_BUNDLE"
        case profile
        case system
    }

    /// The PEM file; nil for the system's (libcurl's default).
    public var path: String?
    public var source: Source
    /// The profile's bundle, when AWS_CA_BUNDLE overrides it.
    public var overridden: String?

    public init(path: String?, source: Source, overridden: String? = nil) {
        self.path = path
        self.source = source
        self.overridden = overridden
    }

    public static let system = CABundle(path: nil, source: .system)

    /// The rule, in one place.
    public static func chosen(profile: Profile, environment: [String: String]) -> CABundle {
        if let path = environment["AWS_CA_BUNDLE"], !path.isEmpty {
            return CABundle(path: path, source: .environment, overridden: profile.caBundle)
        }
        if let path = profile.caBundle { return CABundle(path: path, source: .profile) }
        return .system
    }

    /// "AWS_CA_BUNDLE's /path (over the profile's /other)", "the profile's
    /// /path (configure --ca-bundle)", "the system's CA certificates".
    public var described: String {
        switch source {
        case .environment:
            return "AWS_CA_BUNDLE's \(path ?? "")" + (overridden.map { " (over the profile's \($0))" } ?? "")
        case .profile: return "the profile's \(path ?? "") (configure --ca-bundle)"
        case .system: return "the system's CA certificates"
        }
    }
}
