/// Where a profile's requests go, as `status` shows it: the endpoint in use
/// (Cognito's, or a machine's token endpoint), whether it is AWS's FIPS
/// one, and the route to it, direct or through which proxy. Worked out by
/// the same rules the requests follow (Endpoint, ProxySettings); nothing is
/// sent.
public struct NetworkPath {
    /// The endpoint, when the settings give a usable one.
    public var endpoint: Endpoint.Resolved?
    /// The route to it, when the proxy variables can be read.
    public var route: ProxyRoute?
    /// Why there is no endpoint or no route: what a request would fail with.
    public var problem: (any CogCredFailure)?
    /// The CA certificates HTTPS trusts, and what chose them.
    public var caBundle: CABundle

    public init(profile: Profile, environment: [String: String]) {
        caBundle = CABundle.chosen(profile: profile, environment: environment)
        do {
            let endpoint = profile.effectiveGrant == .clientCredentials
                ? try Endpoint.domain(profile, environment: environment)
                : try Endpoint.resolve(profile: profile, environment: environment)
            self.endpoint = endpoint
            route = try ProxySettings(environment: environment).route(for: endpoint.url)
        } catch let error as ProxySettingError {
            problem = ConfigError.invalidValue(error.variable, error.problem)
        } catch {
            problem = error as? any CogCredFailure
        }
    }
}
