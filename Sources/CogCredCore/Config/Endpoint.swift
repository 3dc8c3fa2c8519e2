/// Which URL Cognito requests go to.
public enum Endpoint {
    /// The AWS SDKs' order: the service-specific variable, then the global
    /// one, then the profile, then the public regional endpoint.
    public static func resolve(profile: Profile, environment: [String: String]) throws(ConfigError) -> String {
        for variable in ["AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER", "AWS_ENDPOINT_URL"] {
            if let url = environment[variable], !url.isEmpty {
                if let problem = ProfileValidation.endpointProblem(url) { throw .invalidValue(variable, problem) }
                return url
            }
        }
        if let url = profile.endpointURL, !url.isEmpty { return url }
        return "https://cognito-idp.\(profile.effectiveRegion).amazonaws.com/"
    }

    /// The CA bundle for HTTPS: AWS_CA_BUNDLE (as the AWS SDKs read it), else
    /// the profile's, else the system's (nil).
    public static func caBundle(profile: Profile, environment: [String: String]) -> String? {
        if let path = environment["AWS_CA_BUNDLE"], !path.isEmpty { return path }
        return profile.caBundle
    }
}
