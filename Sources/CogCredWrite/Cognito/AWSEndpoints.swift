/// The public AWS endpoints cog-cred calls (Cognito's user pools, its
/// identity pools, STS) and the managed login's domain, in a region, with
/// FIPS or without.
///
/// Where FIPS endpoints are (AWS's endpoint list, as botocore ships it in
/// `data/endpoints.json`, and the GovCloud User Guide's Cognito page):
/// - us-east-1, us-east-2, us-west-1 and us-west-2 have
///   `<service>-fips.<region>.amazonaws.com` for all three services;
/// - in AWS GovCloud (US) Cognito has FIPS endpoints only, in both regions
///   (the guide names `cognito-idp-fips.us-gov-east-1` too, which
///   botocore's list still lacks), and STS's own regional host is its FIPS
///   one;
/// - no other region has one for Cognito.
public enum AWSEndpoints {
    public enum Service: String, Sendable, CaseIterable {
        case userPools = "cognito-idp"
        case identityPools = "cognito-identity"
        case sts
    }

    /// The commercial regions with FIPS endpoints for all three services.
    static let commercialFIPSRegions = ["us-east-1", "us-east-2", "us-west-1", "us-west-2"]

    /// Where FIPS endpoints are, in words: for help and errors.
    public static let fipsRegionsInWords = commercialFIPSRegions.joined(separator: ", ") + " and GovCloud (us-gov-*)"

    /// AWS GovCloud (US), where Cognito answers on FIPS endpoints only.
    public static func isGovCloud(_ region: String) -> Bool {
        region.hasPrefix("us-gov-")
    }

    /// Whether `region` has a FIPS endpoint for `service`.
    public static func hasFIPS(_ service: Service, region: String) -> Bool {
        commercialFIPSRegions.contains(region) || isGovCloud(region)
    }

    /// Whether requests to `service` in `region` go to its FIPS endpoint:
    /// when asked for, and always in GovCloud, whose Cognito has no other.
    /// nil when FIPS is asked for and the region has none: the caller
    /// refuses rather than send the request to a non-FIPS host.
    public static func usesFIPS(_ service: Service, region: String, fipsAsked: Bool) -> Bool? {
        if isGovCloud(region) { return true }
        guard fipsAsked else { return false }
        return hasFIPS(service, region: region) ? true : nil
    }

    /// The HTTPS URL of `service` in `region`; nil when FIPS is asked for
    /// and the region has none.
    public static func url(_ service: Service, region: String, fipsAsked: Bool) -> String? {
        guard let fips = usesFIPS(service, region: region, fipsAsked: fipsAsked) else { return nil }
        // GovCloud's STS is FIPS on its regional host; it has no -fips one.
        let name = fips && !(service == .sts && isGovCloud(region)) ? "\(service.rawValue)-fips" : service.rawValue
        return "https://\(name).\(region).amazonaws.com/"
    }

    /// The issuer a user pool's tokens name: the regional host, without
    /// `-fips`, whichever endpoint issued them (GovCloud's tokens too).
    public static func issuer(region: String, userPoolID: String) -> String {
        "https://cognito-idp.\(region).amazonaws.com/\(userPoolID)"
    }

    /// The managed login's URL for a Cognito domain prefix; nil when FIPS
    /// is asked for and the region has none.
    public static func managedLogin(prefix: String, region: String, fipsAsked: Bool) -> String? {
        guard let fips = usesFIPS(.userPools, region: region, fipsAsked: fipsAsked) else { return nil }
        return "https://\(prefix).\(fips ? "auth-fips" : "auth").\(region).amazoncognito.com"
    }

    /// The prefix and region of a Cognito domain's URL
    /// (`https://PREFIX.auth.REGION.amazoncognito.com`, or `auth-fips`);
    /// nil for a custom domain.
    public static func managedLoginPrefix(of url: String) -> (prefix: String, region: String)? {
        guard url.lowercased().hasPrefix("https://") else { return nil }
        let host = url.dropFirst("https://".count).prefix { $0 != "/" }.lowercased()
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count == 5, labels[1] == "auth" || labels[1] == "auth-fips", labels[3] == "amazoncognito", labels[4] == "com",
            !labels[0].isEmpty, !labels[2].isEmpty
        else { return nil }
        return (String(labels[0]), String(labels[2]))
    }
}
