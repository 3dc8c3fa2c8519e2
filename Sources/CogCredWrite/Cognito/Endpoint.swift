#if canImport(Glibc)
import Glibc
#endif

/// Which URL Cognito requests go to, and whether it may be plain HTTP.
public enum Endpoint {
    /// An endpoint chosen for a profile.
    public struct Resolved: Sendable, Equatable {
        public var url: String
        /// The environment variable it came from; nil for the profile's
        /// `endpoint-url` or the public regional endpoint.
        public var variable: String?
        /// Plain `http://` may be used: the URL is `http://` and either
        /// names this machine or the profile allows it.
        public var allowsCleartext: Bool
        /// AWS's FIPS endpoint (or managed login), not one set by hand.
        public var fips = false
    }

    /// The AWS SDKs' order: the service-specific variable, then the global
    /// one, then the profile, then the public regional endpoint.
    ///
    /// Plain `http://` is refused unless it stays on this machine (a local
    /// emulator) or the profile says `allow-insecure-http`: refresh tokens,
    /// passwords (password flow) and the client secret would otherwise
    /// cross the network in clear text. AWS_ENDPOINT_URL in particular is
    /// often set for LocalStack or MinIO on another host, and applies to
    /// Cognito too.
    ///
    /// Throws `ConfigError` for a value that is no URL, `EndpointError`
    /// for plain HTTP that is not allowed.
    public static func resolve(profile: Profile, environment: [String: String]) throws -> Resolved {
        var chosen: (url: String, variable: String?)? = nil
        for variable in ["AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER", "AWS_ENDPOINT_URL"] {
            if let url = environment[variable], !url.isEmpty {
                if let problem = ProfileValidation.endpointProblem(url) { throw ConfigError.invalidValue(variable, problem) }
                chosen = (url, variable)
                break
            }
        }
        if chosen == nil, let url = profile.endpointURL, !url.isEmpty { chosen = (url, nil) }
        guard let (url, variable) = chosen else {
            return try publicEndpoint(.userPools, region: profile.effectiveRegion, profile: profile, environment: environment)
        }
        if let problem = unreadable(url, setting: variable ?? "endpoint-url") { throw problem }
        if refusesCleartext(url, profile) { throw EndpointError.cleartext(setting: variable ?? "endpoint-url", url: url) }
        return Resolved(url: url, variable: variable, allowsCleartext: isPlainHTTP(url))
    }

    /// What `configure` refuses in the profile's own settings: an
    /// `endpoint-url` or `domain` that is plain HTTP to another machine the
    /// profile does not allow, or `use-fips-endpoint` where a service the
    /// profile calls has no FIPS endpoint.
    public static func profileProblem(_ profile: Profile) -> EndpointError? {
        for (setting, url) in [("endpoint-url", profile.endpointURL), ("domain", profile.domain)] {
            guard let url else { continue }
            if let problem = unreadable(url, setting: setting) { return problem }
            if refusesCleartext(url, profile) { return .cleartext(setting: setting, url: url) }
        }
        guard profile.useFIPSEndpoint == true else { return nil }
        var called: [(AWSEndpoints.Service, String)] = []
        if profile.endpointURL == nil { called.append((.userPools, profile.effectiveRegion)) }
        if let pool = profile.identityPoolID {
            let region = String(pool.prefix { $0 != ":" })
            called += [(.identityPools, region), (.sts, region)]
        }
        for (service, region) in called where AWSEndpoints.usesFIPS(service, region: region, fipsAsked: true) == nil {
            return .noFIPS(service: service.rawValue, region: region, setting: FIPSRequest.profileSetting)
        }
        if let domain = profile.domain, let (prefix, region) = AWSEndpoints.managedLoginPrefix(of: domain),
            AWSEndpoints.managedLogin(prefix: prefix, region: region, fipsAsked: true) == nil
        {
            return .noFIPS(service: "the managed login", region: region, setting: FIPSRequest.profileSetting)
        }
        return nil
    }

    /// Another AWS service's endpoint (the identity pool's `cognito-identity`,
    /// `sts`): its own variable, then AWS_ENDPOINT_URL, then the public
    /// regional endpoint, under the same clear-text rule.
    public static func service(
        _ service: AWSEndpoints.Service, variable: String, region: String, profile: Profile, environment: [String: String]
    ) throws -> Resolved {
        for candidate in [variable, "AWS_ENDPOINT_URL"] {
            guard let url = environment[candidate], !url.isEmpty else { continue }
            if let problem = ProfileValidation.endpointProblem(url) { throw ConfigError.invalidValue(candidate, problem) }
            if let problem = unreadable(url, setting: candidate) { throw problem }
            if refusesCleartext(url, profile) { throw EndpointError.cleartext(setting: candidate, url: url) }
            return Resolved(url: url, variable: candidate, allowsCleartext: isPlainHTTP(url))
        }
        return try publicEndpoint(service, region: region, profile: profile, environment: environment)
    }

    /// AWS's own endpoint for the service: the FIPS one when asked for
    /// (FIPSRequest) or in GovCloud; refused, before anything is sent,
    /// when asked for where there is none.
    static func publicEndpoint(_ service: AWSEndpoints.Service, region: String, profile: Profile, environment: [String: String]) throws
        -> Resolved
    {
        let fips = try FIPSRequest(profile: profile, environment: environment)
        guard let url = AWSEndpoints.url(service, region: region, fipsAsked: fips.asked) else {
            throw EndpointError.noFIPS(service: service.rawValue, region: region, setting: fips.setting ?? "FIPS")
        }
        return Resolved(url: url, variable: nil, allowsCleartext: false, fips: AWSEndpoints.usesFIPS(service, region: region, fipsAsked: fips.asked) == true)
    }

    /// The profile's OAuth 2.0 domain (token, revoke, authorize), held to
    /// the same clear-text rule as the endpoint. A Cognito domain
    /// (`PREFIX.auth.REGION.amazoncognito.com`) is its `auth-fips` form
    /// when FIPS is asked for and in GovCloud.
    public static func domain(_ profile: Profile, environment: [String: String]) throws -> Resolved {
        guard let url = profile.domain else { throw ConfigError.missingDomain }
        if let (prefix, region) = AWSEndpoints.managedLoginPrefix(of: url) {
            let fips = try FIPSRequest(profile: profile, environment: environment)
            guard fips.asked || AWSEndpoints.isGovCloud(region) else { return Resolved(url: url, variable: nil, allowsCleartext: false) }
            guard let built = AWSEndpoints.managedLogin(prefix: prefix, region: region, fipsAsked: true) else {
                throw EndpointError.noFIPS(service: "the managed login", region: region, setting: fips.setting ?? "FIPS")
            }
            return Resolved(url: built, variable: nil, allowsCleartext: false, fips: true)
        }
        if let problem = unreadable(url, setting: "domain") { throw problem }
        if refusesCleartext(url, profile) { throw EndpointError.cleartext(setting: "domain", url: url) }
        return Resolved(url: url, variable: nil, allowsCleartext: isPlainHTTP(url))
    }

    /// A URL with a user name or password that libcurl cannot read (it
    /// would refuse to send to it): named by its setting, never shown,
    /// since where its password ends is unknown. One with no `@` holds
    /// neither: whether libcurl reads it is its request's to find (an
    /// error that names nothing secret), without waiting for libcurl here.
    static func unreadable(_ url: String, setting: String) -> EndpointError? {
        guard url.contains("@"), case .failure(let unreadable) = LibcurlURL.parse(url) else { return nil }
        return .unreadable(setting: setting, reason: unreadable.reason)
    }

    /// Plain HTTP to another machine, which the profile does not allow.
    static func refusesCleartext(_ url: String, _ profile: Profile) -> Bool {
        isPlainHTTP(url) && !isLoopback(url) && profile.allowInsecureHTTP != true
    }

    static func isPlainHTTP(_ url: String) -> Bool {
        url.lowercased().hasPrefix("http://")
    }

    /// Whether the URL's host, as libcurl reads it, is this machine (isLoopbackHost).
    public static func isLoopback(_ url: String) -> Bool {
        LibcurlURL.host(of: url).map(isLoopbackHost) ?? false
    }

}

/// A URL that may not be used as it is. The way out is a `NextStep`.
public enum EndpointError: ExplainedFailure, Equatable {
    /// Plain http:// to another machine, which the profile does not allow;
    /// `setting` is where the URL came from: an environment variable,
    /// `endpoint-url` or `domain`.
    case cleartext(setting: String, url: String)
    /// FIPS endpoints asked for (by `setting`) in a region where `service`
    /// has none: nothing is sent to its ordinary endpoint instead.
    case noFIPS(service: String, region: String, setting: String)
    /// A URL libcurl cannot read, by the setting it came from.
    case unreadable(setting: String, reason: String)

    public var category: FailureCategory { .configuration }

    public var isNoFIPS: Bool {
        if case .noFIPS = self { return true }
        return false
    }

    public var explanation: Explanation {
        switch self {
        case .cleartext(let setting, let url):
            return Explanation(
                "invalid \(setting): \(LibcurlURL.shown(url).oneLine(limit: 100)) is plain http:// to another machine: refresh tokens and passwords would cross the network unencrypted",
                nextStep: .allowInsecureHTTP)
        case .unreadable(let setting, let reason):
            return Explanation("invalid \(setting): libcurl cannot read it as a URL (\(reason)); the URL is not shown, as it may hold a password")
        case .noFIPS(let service, let region, let setting):
            return Explanation(
                "\(setting) asks for FIPS endpoints, and AWS has no FIPS endpoint for \(service) in \(region)", nextStep: .chooseFIPSRegion)
        }
    }
}
