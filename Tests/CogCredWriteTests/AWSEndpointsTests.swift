import Foundation
import Testing
@testable import CogCredWrite
@testable import CogCredRead

/// The endpoint table against AWS's own list (botocore's endpoints.json)
/// and the GovCloud User Guide.
@Suite struct AWSEndpointsTests {
    @Test(arguments: ["us-east-1", "us-east-2", "us-west-1", "us-west-2"])
    func theFourUSCommercialRegionsHaveFIPSForEveryService(region: String) {
        #expect(AWSEndpoints.url(.userPools, region: region, fipsAsked: true) == "https://cognito-idp-fips.\(region).amazonaws.com/")
        #expect(AWSEndpoints.url(.identityPools, region: region, fipsAsked: true) == "https://cognito-identity-fips.\(region).amazonaws.com/")
        #expect(AWSEndpoints.url(.sts, region: region, fipsAsked: true) == "https://sts-fips.\(region).amazonaws.com/")
        #expect(AWSEndpoints.url(.userPools, region: region, fipsAsked: false) == "https://cognito-idp.\(region).amazonaws.com/")
        #expect(AWSEndpoints.managedLogin(prefix: "my-app", region: region, fipsAsked: true) == "https://my-app.auth-fips.\(region).amazoncognito.com")
        #expect(AWSEndpoints.managedLogin(prefix: "my-app", region: region, fipsAsked: false) == "https://my-app.auth.\(region).amazoncognito.com")
    }

    @Test(arguments: ["eu-west-1", "ap-southeast-2", "ca-central-1", "eu-central-2"])
    func elsewhereFIPSIsRefusedNotSentToTheOrdinaryHost(region: String) {
        for service in AWSEndpoints.Service.allCases {
            #expect(AWSEndpoints.url(service, region: region, fipsAsked: true) == nil)
            #expect(AWSEndpoints.url(service, region: region, fipsAsked: false) == "https://\(service.rawValue).\(region).amazonaws.com/")
        }
        #expect(AWSEndpoints.managedLogin(prefix: "my-app", region: region, fipsAsked: true) == nil)
    }

    @Test(arguments: ["us-gov-west-1", "us-gov-east-1"])
    func govCloudIsFIPSOnlyWhetherAskedOrNot(region: String) {
        for asked in [true, false] {
            #expect(AWSEndpoints.url(.userPools, region: region, fipsAsked: asked) == "https://cognito-idp-fips.\(region).amazonaws.com/")
            #expect(AWSEndpoints.url(.identityPools, region: region, fipsAsked: asked) == "https://cognito-identity-fips.\(region).amazonaws.com/")
            // STS's regional host in GovCloud is its FIPS endpoint.
            #expect(AWSEndpoints.url(.sts, region: region, fipsAsked: asked) == "https://sts.\(region).amazonaws.com/")
            #expect(AWSEndpoints.managedLogin(prefix: "agency", region: region, fipsAsked: asked) == "https://agency.auth-fips.\(region).amazoncognito.com")
        }
    }

    @Test func theIssuerIsTheRegionalHostWhicheverEndpointIssued() {
        #expect(AWSEndpoints.issuer(region: "us-gov-west-1", userPoolID: "us-gov-west-1_Abc") == "https://cognito-idp.us-gov-west-1.amazonaws.com/us-gov-west-1_Abc")
        #expect(AWSEndpoints.issuer(region: "us-east-1", userPoolID: "us-east-1_Abc") == "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Abc")
    }
}

/// The FIPS switch where endpoints are chosen, and the issuer tokens are held to.
@Suite struct FIPSEndpointTests {
    @Test func awsUseFIPSEndpointSwitchesAWSsEndpointsAndOnlyThose() throws {
        var profile = Profile(userPoolID: "us-east-1_A", clientID: "c")
        let fips = ["AWS_USE_FIPS_ENDPOINT": "TRUE"]
        #expect(try Endpoint.resolve(profile: profile, environment: fips).url == "https://cognito-idp-fips.us-east-1.amazonaws.com/")
        #expect(try Endpoint.resolve(profile: profile, environment: ["AWS_USE_FIPS_ENDPOINT": "false"]).url == "https://cognito-idp.us-east-1.amazonaws.com/")
        #expect(try Endpoint.service(.sts, variable: "AWS_ENDPOINT_URL_STS", region: "us-west-2", profile: profile, environment: fips).url
            == "https://sts-fips.us-west-2.amazonaws.com/")
        // An endpoint URL still wins, as in the SDKs.
        #expect(try Endpoint.resolve(profile: profile, environment: fips.merging(["AWS_ENDPOINT_URL": "https://e/"]) { $1 }).url == "https://e/")
        profile.endpointURL = "http://127.0.0.1:1/"
        #expect(try Endpoint.resolve(profile: profile, environment: fips).url == "http://127.0.0.1:1/")
        #expect(throws: ConfigError.self) { try Endpoint.resolve(profile: Profile(userPoolID: "us-east-1_A", clientID: "c"), environment: ["AWS_USE_FIPS_ENDPOINT": "yes"]) }
    }

    @Test func fipsWhereThereIsNoneIsRefusedBeforeAnythingIsSent() {
        let profile = Profile(userPoolID: "eu-west-1_A", clientID: "c")
        let fips = ["AWS_USE_FIPS_ENDPOINT": "true"]
        #expect(throws: EndpointError.noFIPS(service: "cognito-idp", region: "eu-west-1", setting: "AWS_USE_FIPS_ENDPOINT")) {
            try Endpoint.resolve(profile: profile, environment: fips)
        }
        #expect(throws: EndpointError.noFIPS(service: "cognito-identity", region: "eu-west-1", setting: "AWS_USE_FIPS_ENDPOINT")) {
            try Endpoint.service(.identityPools, variable: "AWS_ENDPOINT_URL_COGNITO_IDENTITY", region: "eu-west-1", profile: profile, environment: fips)
        }
        #expect(EndpointError.noFIPS(service: "cognito-idp", region: "eu-west-1", setting: "AWS_USE_FIPS_ENDPOINT").category == .configuration)
    }

    @Test func govCloudNeedsNoSwitch() throws {
        let profile = Profile(userPoolID: "us-gov-west-1_A", clientID: "c")
        #expect(try Endpoint.resolve(profile: profile, environment: [:]).url == "https://cognito-idp-fips.us-gov-west-1.amazonaws.com/")
        #expect(try Endpoint.resolve(profile: profile, environment: ["AWS_USE_FIPS_ENDPOINT": "false"]).url
            == "https://cognito-idp-fips.us-gov-west-1.amazonaws.com/")
    }

    @Test func tokensFromAWSsFIPSEndpointNameTheRegionalIssuer() {
        let profile = Profile(userPoolID: "us-gov-west-1_A", clientID: "c")
        let keys = TokenVerifier.poolKeys(endpoint: "https://cognito-idp-fips.us-gov-west-1.amazonaws.com/", profile: profile)
        #expect(keys.issuers == ["https://cognito-idp.us-gov-west-1.amazonaws.com/us-gov-west-1_A"])
        // The keys come from the endpoint in use: nothing goes to a non-FIPS host.
        #expect(keys.jwksURL == "https://cognito-idp-fips.us-gov-west-1.amazonaws.com/us-gov-west-1_A/.well-known/jwks.json")
        // A custom endpoint's keys still speak only for its own issuer.
        let local = TokenVerifier.poolKeys(endpoint: "http://127.0.0.1:9/", profile: profile)
        #expect(local.issuers == ["http://127.0.0.1:9/us-gov-west-1_A"])
    }
}

/// Where the FIPS switch is read: the profile's own, then the SDKs'.
@Suite struct FIPSRequestTests {
    static let commercial = Profile(userPoolID: "us-east-1_A", clientID: "c")

    @Test func theProfilesSettingHoldsWhateverTheEnvironmentSays() throws {
        var profile = Self.commercial
        profile.useFIPSEndpoint = true
        let request = try FIPSRequest(profile: profile, environment: ["AWS_USE_FIPS_ENDPOINT": "false"])
        #expect(request == FIPSRequest(asked: true, setting: FIPSRequest.profileSetting))
        #expect(try Endpoint.resolve(profile: profile, environment: ["AWS_USE_FIPS_ENDPOINT": "false"]).fips)
    }

    @Test func theSDKsOrderTheVariableBeforeTheConfigFile() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("aws-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: home + "/.aws", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let file = home + "/config"
        try Data("[default]\nregion = us-east-1\nuse_fips_endpoint = true\n\n[profile plain]\nuse_fips_endpoint=false\n".utf8).write(to: URL(fileURLWithPath: file))
        var environment = ["AWS_CONFIG_FILE": file]
        #expect(try FIPSRequest(profile: Self.commercial, environment: environment)
            == FIPSRequest(asked: true, setting: "use_fips_endpoint in \(file) [default]"))
        #expect(try Endpoint.resolve(profile: Self.commercial, environment: environment).url == "https://cognito-idp-fips.us-east-1.amazonaws.com/")
        environment["AWS_PROFILE"] = "plain"
        #expect(try FIPSRequest(profile: Self.commercial, environment: environment).asked == false)
        environment["AWS_PROFILE"] = "absent"
        #expect(try FIPSRequest(profile: Self.commercial, environment: environment) == FIPSRequest(asked: false, setting: nil))
        environment["AWS_PROFILE"] = nil
        environment["AWS_USE_FIPS_ENDPOINT"] = "false"
        #expect(try FIPSRequest(profile: Self.commercial, environment: environment) == FIPSRequest(asked: false, setting: "AWS_USE_FIPS_ENDPOINT"))
        // Without AWS_CONFIG_FILE, ~/.aws/config under HOME.
        try Data("# comment\n[ default ]\n; another\nuse_fips_endpoint = maybe\n".utf8).write(to: URL(fileURLWithPath: home + "/.aws/config"))
        #expect(throws: ConfigError.self) { try FIPSRequest(profile: Self.commercial, environment: ["HOME": home]) }
        #expect(try FIPSRequest(profile: Self.commercial, environment: ["HOME": "/nonexistent"]).asked == false)
    }

    @Test func theConfigFilesSectionsAreTheSDKs() {
        let text = "[profile default]\nuse_fips_endpoint = true\n[profile work]\nuse_fips_endpoint = false\n[work]\nuse_fips_endpoint = true\n"
        #expect(AWSSharedConfig.value("use_fips_endpoint", in: text, profile: "default") == "true")
        // `[work]` is not the profile `work`: only `[profile work]` is.
        #expect(AWSSharedConfig.value("use_fips_endpoint", in: text, profile: "work") == "false")
        #expect(AWSSharedConfig.value("region", in: text, profile: "work") == nil)
    }

    @Test func configureRefusesFIPSWhereAServiceTheProfileCallsHasNone() {
        var profile = Profile(userPoolID: "eu-west-1_A", clientID: "c")
        profile.useFIPSEndpoint = true
        #expect(Endpoint.profileProblem(profile) == .noFIPS(service: "cognito-idp", region: "eu-west-1", setting: FIPSRequest.profileSetting))
        // An endpoint URL of the profile's own is not AWS's: nothing to refuse for Cognito...
        profile.endpointURL = "http://127.0.0.1:9/"
        #expect(Endpoint.profileProblem(profile) == nil)
        // ...but the identity pool and STS are still AWS's.
        profile.identityPoolID = "eu-west-1:0a1b2c3d-0000-4000-8000-000000000001"
        #expect(Endpoint.profileProblem(profile) == .noFIPS(service: "cognito-identity", region: "eu-west-1", setting: FIPSRequest.profileSetting))
        profile.identityPoolID = "us-east-1:0a1b2c3d-0000-4000-8000-000000000001"
        #expect(Endpoint.profileProblem(profile) == nil)
        // The managed login's Cognito domain is AWS's too.
        profile.domain = "https://my-app.auth.eu-west-1.amazoncognito.com"
        #expect(Endpoint.profileProblem(profile) == .noFIPS(service: "the managed login", region: "eu-west-1", setting: FIPSRequest.profileSetting))
    }

    @Test func theManagedLoginsDomainIsItsFIPSFormWhenAskedForAndInGovCloud() throws {
        var profile = Self.commercial
        profile.domain = "https://my-app.auth.us-east-1.amazoncognito.com"
        #expect(try Endpoint.domain(profile, environment: [:]).url == "https://my-app.auth.us-east-1.amazoncognito.com")
        let fips = try Endpoint.domain(profile, environment: ["AWS_USE_FIPS_ENDPOINT": "true"])
        #expect(fips.url == "https://my-app.auth-fips.us-east-1.amazoncognito.com" && fips.fips)
        profile.domain = "https://my-app.auth.eu-west-1.amazoncognito.com"
        #expect(throws: EndpointError.noFIPS(service: "the managed login", region: "eu-west-1", setting: "AWS_USE_FIPS_ENDPOINT")) {
            try Endpoint.domain(profile, environment: ["AWS_USE_FIPS_ENDPOINT": "true"])
        }
        // A custom domain is the pool owner's: left as it is.
        profile.domain = "https://auth.example.gov"
        #expect(try Endpoint.domain(profile, environment: ["AWS_USE_FIPS_ENDPOINT": "true"]).url == "https://auth.example.gov")
        profile.domain = "https://agency.auth.us-gov-west-1.amazoncognito.com"
        #expect(try Endpoint.domain(profile, environment: [:]).url == "https://agency.auth-fips.us-gov-west-1.amazoncognito.com")
        #expect(AWSEndpoints.managedLoginPrefix(of: "https://a.auth-fips.us-east-1.amazoncognito.com")! == ("a", "us-east-1"))
        #expect(AWSEndpoints.managedLoginPrefix(of: "https://a.b.auth.us-east-1.amazoncognito.com") == nil)
    }
}
