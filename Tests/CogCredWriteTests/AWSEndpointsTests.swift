import Testing
@testable import CogCredWrite

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
