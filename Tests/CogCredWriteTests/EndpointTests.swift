import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

/// Where Cognito and the OAuth domain are reached, and when plain HTTP may be used.
@Suite struct EndpointTests {
    @Test func endpointPrecedenceFollowsTheAWSSDKs() throws {
        var profile = Profile(userPoolID: "eu-west-1_A", clientID: "c")
        func url(_ environment: [String: String] = [:]) throws -> String {
            try Endpoint.resolve(profile: profile, environment: environment).url
        }
        #expect(try url() == "https://cognito-idp.eu-west-1.amazonaws.com/")
        profile.endpointURL = "http://127.0.0.1:1/"
        #expect(try url() == "http://127.0.0.1:1/")
        #expect(try url(["AWS_ENDPOINT_URL": "https://g/"]) == "https://g/")
        #expect(try Endpoint.resolve(profile: profile, environment: ["AWS_ENDPOINT_URL": "https://g/"]).variable == "AWS_ENDPOINT_URL")
        #expect(try url(["AWS_ENDPOINT_URL": "https://g/", "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER": "https://s/"]) == "https://s/")
        #expect(throws: ConfigError.self) { try url(["AWS_ENDPOINT_URL": "nonsense"]) }
    }

    @Test func plainHTTPOnlyToThisMachineUnlessTheProfileAllowsIt() throws {
        var profile = Profile(userPoolID: "eu-west-1_A", clientID: "c")
        for local in [
            "http://127.0.0.1:5000/", "http://127.8.9.10/", "http://localhost:1/", "HTTP://LOCALHOST/", "http://[::1]:9/",
            "http://[0:0:0:0:0:0:0:1]/", "http://user:pw@127.0.0.1/",
        ] {
            profile.endpointURL = local
            let resolved = try Endpoint.resolve(profile: profile, environment: [:])
            #expect(resolved.allowsCleartext, "\(local)")
            #expect(Endpoint.profileProblem(profile) == nil, "\(local)")
        }
        for remote in [
            "http://10.0.0.5:4566/", "http://cognito.example.com/", "http://128.0.0.1/", "http://localhost.example.com/",
            "http://127.0.0.1.example.com/", "http://[::2]/", "http://127.0.0.1@evil.example.com/", "http://127.1/",
        ] {
            profile.endpointURL = remote
            #expect(throws: EndpointError.self, "\(remote)") { try Endpoint.resolve(profile: profile, environment: [:]) }
            #expect(Endpoint.profileProblem(profile) != nil, "\(remote)")
        }
        // HTTPS needs nothing, and is never marked clear text.
        profile.endpointURL = "https://10.0.0.5/"
        #expect(try Endpoint.resolve(profile: profile, environment: [:]).allowsCleartext == false)
        // The environment is held to the same rule, and names itself in the error.
        profile.endpointURL = nil
        #expect(throws: EndpointError.cleartext(setting: "AWS_ENDPOINT_URL", url: "http://minio:9000/")) {
            try Endpoint.resolve(profile: profile, environment: ["AWS_ENDPOINT_URL": "http://minio:9000/"])
        }
        // Allowed explicitly: used, and still marked clear text for the transport.
        profile.allowInsecureHTTP = true
        #expect(try Endpoint.resolve(profile: profile, environment: ["AWS_ENDPOINT_URL": "http://minio:9000/"]).allowsCleartext)
        profile.endpointURL = "http://cognito.example.com/"
        #expect(Endpoint.profileProblem(profile) == nil)
        #expect(try Profile(json: try JSONFields(profile.json, path: [])).allowInsecureHTTP == true)
    }

    @Test func oauthSettingsValidateAndRoundTrip() throws {
        #expect(ProfileValidation.expandDomain("my-app", region: "eu-west-1") == "https://my-app.auth.eu-west-1.amazoncognito.com")
        #expect(ProfileValidation.expandDomain("https://auth.example.com/", region: "x") == "https://auth.example.com")
        #expect(ProfileValidation.domainPrefixProblem("my-app-2") == nil)
        #expect(ProfileValidation.domainPrefixProblem("My_App") != nil)
        #expect(ProfileValidation.scopeProblem("orders/read") == nil)
        #expect(ProfileValidation.scopeProblem("a\"b") != nil)
        var profile = Profile(userPoolID: "us-east-1_A", clientID: "c")
        profile.grant = "client-credentials"
        #expect(throws: ConfigError.invalidValue("grant", "client-credentials needs the pool's domain (--domain)")) {
            try profile.validate()
        }
        profile.domain = "https://my-app.auth.us-east-1.amazoncognito.com"
        profile.scopes = ["orders/read", "openid"]
        try profile.validate()
        #expect(profile.handedOutKinds == [.access])
        #expect(try Profile(json: try JSONFields(profile.json, path: [])) == profile)
        profile.grant = "robot"
        #expect(throws: ConfigError.self) { try profile.validate() }
        profile.grant = nil
        #expect(profile.effectiveGrant == .userSignIn && profile.handedOutKinds == [.access, .id])
        // The domain is held to the endpoint's clear-text rule.
        profile.domain = "http://auth.example.com"
        #expect(Endpoint.profileProblem(profile) == .cleartext(setting: "domain", url: "http://auth.example.com"))
        #expect(throws: EndpointError.self) { try Endpoint.domain(profile, environment: [:]) }
        profile.domain = "http://127.0.0.1:9000"
        #expect(try Endpoint.domain(profile, environment: [:]).allowsCleartext)
    }
}
