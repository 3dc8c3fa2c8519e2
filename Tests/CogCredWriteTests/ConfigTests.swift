import Foundation
import Testing
@testable import CogCredWrite
@testable import CogCredRead

@Suite struct ConfigTests {
    func temporaryDirectory() throws -> String {
        let path = TestDirectories.path("config")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func theRegionComesFromThePoolIDUnlessGiven() {
        var profile = Profile(userPoolID: "eu-west-2_Abc123", clientID: "c")
        #expect(profile.effectiveRegion == "eu-west-2")
        profile.region = "us-east-1"
        #expect(profile.effectiveRegion == "us-east-1")
    }

    @Test(arguments: ["us-east-1_Abc123", "eu-central-1_x", "us-gov-west-1_ABC"])
    func acceptsPoolIDs(_ id: String) {
        #expect(ProfileValidation.poolIDProblem(id) == nil)
    }

    @Test(arguments: ["", "us-east-1", "_abc", "us-east-1_", "US-EAST-1_abc", "us-east_abc", "us-east-1_a-b", "us east-1_x"])
    func rejectsMalformedPoolIDs(_ id: String) {
        #expect(ProfileValidation.poolIDProblem(id) != nil)
    }

    @Test func validatesProfileNamesClientIDsAndEndpoints() {
        #expect(ProfileValidation.profileNameProblem("work-2.eu_x") == nil)
        #expect(ProfileValidation.profileNameProblem("") != nil)
        #expect(ProfileValidation.profileNameProblem("a b") != nil)
        #expect(ProfileValidation.profileNameProblem("../etc") != nil)
        #expect(ProfileValidation.clientIDProblem("1example23456789") == nil)
        #expect(ProfileValidation.clientIDProblem("has space") != nil)
        #expect(ProfileValidation.endpointProblem("http://127.0.0.1:5000/") == nil)
        #expect(ProfileValidation.endpointProblem("https://cognito-idp.us-east-1.amazonaws.com/") == nil)
        #expect(ProfileValidation.endpointProblem("ftp://x") != nil)
        #expect(ProfileValidation.endpointProblem("https://") != nil)
        #expect(ProfileValidation.endpointProblem("https://a b/") != nil)
    }

    @Test func timeoutsMustBePositiveAndBounded() {
        var profile = Profile(userPoolID: "us-east-1_A", clientID: "c")
        profile.requestTimeout = 0
        #expect(throws: ConfigError.self) { try profile.validate() }
        profile.requestTimeout = 10
        #expect(profile.timeouts == Timeouts(connect: 5, request: 10, command: 30))
    }

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
            #expect(throws: ConfigError.self, "\(remote)") { try Endpoint.resolve(profile: profile, environment: [:]) }
            #expect(Endpoint.profileProblem(profile) != nil, "\(remote)")
        }
        // HTTPS needs nothing, and is never marked clear text.
        profile.endpointURL = "https://10.0.0.5/"
        #expect(try Endpoint.resolve(profile: profile, environment: [:]).allowsCleartext == false)
        // The environment is held to the same rule, and names itself in the error.
        profile.endpointURL = nil
        #expect(throws: ConfigError.invalidValue("AWS_ENDPOINT_URL", Endpoint.cleartextProblem("http://minio:9000/"))) {
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
        #expect(Endpoint.profileProblem(profile)?.hasPrefix("invalid domain:") == true)
        #expect(throws: ConfigError.self) { try Endpoint.domain(profile) }
        profile.domain = "http://127.0.0.1:9000"
        #expect(try Endpoint.domain(profile).allowsCleartext)
    }

    @Test func pathsFollowXDG() {
        #expect(Paths(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]).configFile == "/x/cog-cred/config.json")
        #expect(Paths(environment: ["HOME": "/h"]).configFile == "/h/.config/cog-cred/config.json")
        // A relative XDG_CONFIG_HOME is invalid per the spec and ignored.
        #expect(Paths(environment: ["XDG_CONFIG_HOME": "rel", "HOME": "/h"]).configFile == "/h/.config/cog-cred/config.json")
    }

    @Test func savesWithPrivateModesAndReadsBack() throws {
        let dir = try temporaryDirectory() + "/nested/cog-cred"
        let store = ConfigStore(path: dir + "/config.json")
        #expect(try store.load() == ConfigFile())

        var profile = Profile(userPoolID: "us-east-1_Abc", clientID: "client1", endpointURL: "http://127.0.0.1:5000/", username: "a@b.c")
        profile.commandTimeout = 12
        try store.save(ConfigFile(profiles: ["work": profile]))

        #expect(try store.profile("work") == profile)
        var info = stat()
        #expect(stat(store.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(stat(dir, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        let text = try String(contentsOfFile: store.path, encoding: .utf8)
        #expect(text.contains("\"user-pool-id\": \"us-east-1_Abc\""))
        #expect(text.contains("http://127.0.0.1:5000/"))
    }

    @Test func aMissingProfileNamesTheFixingCommand() throws {
        let store = ConfigStore(path: try temporaryDirectory() + "/config.json")
        #expect(throws: ConfigError.profileNotFound(profile: "work", path: store.path)) { try store.profile("work") }
        #expect(ConfigError.profileNotFound(profile: "work", path: store.path).message.contains("cog-cred configure --profile work"))
    }

    @Test(arguments: [
        "not json",
        "{\"profiles\": 3}",
        "{\"profiles\": {\"x\": {\"client-id\": \"c\"}}}",
        "{\"profiles\": {\"bad name\": {\"user-pool-id\": \"us-east-1_A\", \"client-id\": \"c\"}}}",
        "{\"profiles\": {\"x\": {\"user-pool-id\": \"nope\", \"client-id\": \"c\"}}}",
        "{\"profiles\": {\"x\": {\"user-pool-id\": \"us-east-1_A\", \"client-id\": \"c\", \"request-timeout\": -1}}}",
    ])
    func aBrokenFileIsAConfigurationErrorThatNamesIt(content: String) throws {
        let path = try temporaryDirectory() + "/config.json"
        try content.write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try ConfigStore(path: path).load()
            Issue.record("expected an error")
        } catch {
            guard case .unreadable(let where_, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(where_ == path)
            #expect(error.category == .configuration)
            #expect(!error.message.contains("\n"))
        }
    }
}
