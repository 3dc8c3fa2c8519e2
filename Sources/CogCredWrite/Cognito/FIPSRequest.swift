/// Whether AWS's FIPS endpoints are asked for, and by which setting (the
/// one an error names). The profile's own `use-fips-endpoint`
/// (`configure --fips`) holds whatever the environment says; otherwise the
/// AWS SDKs' order: AWS_USE_FIPS_ENDPOINT, then `use_fips_endpoint` in the
/// AWS config file. GovCloud needs none of them (AWSEndpoints).
public struct FIPSRequest: Sendable, Equatable {
    public var asked: Bool
    /// Where the answer came from; nil when nothing says.
    public var setting: String?

    static let profileSetting = "the profile's use-fips-endpoint (configure --fips)"
    static let variable = "AWS_USE_FIPS_ENDPOINT"

    init(asked: Bool, setting: String?) { (self.asked, self.setting) = (asked, setting) }

    /// Throws `ConfigError` for a value that is neither true nor false.
    public init(profile: Profile, environment: [String: String]) throws(ConfigError) {
        if profile.useFIPSEndpoint == true {
            (asked, setting) = (true, FIPSRequest.profileSetting)
        } else if let value = environment[FIPSRequest.variable], !value.isEmpty {
            (asked, setting) = (try FIPSRequest.truth(value, of: FIPSRequest.variable), FIPSRequest.variable)
        } else if let found = AWSSharedConfig.value("use_fips_endpoint", environment: environment) {
            let setting = "use_fips_endpoint in \(found.path) [\(found.section)]"
            (asked, self.setting) = (try FIPSRequest.truth(found.value, of: setting), setting)
        } else {
            (asked, setting) = (false, nil)
        }
    }

    /// `true` or `false` in any case, as the SDKs read them.
    static func truth(_ value: String, of setting: String) throws(ConfigError) -> Bool {
        switch value.lowercased() {
        case "true": return true
        case "false": return false
        default: throw ConfigError.invalidValue(setting, "\(value.oneLine(limit: 40)) is neither true nor false")
        }
    }
}
