import Testing
import CogCredTestSupport
@testable import CogCredWrite

/// `configure`'s merge of settings into a profile: what each setting does to
/// its field, what is refused, and what is worth a note.
@Suite struct ProfileSettingsMergeTests {
    static let old: Profile = {
        var profile = Profile(userPoolID: "us-east-1_Old", clientID: "oldclient")
        profile.username = "alice"
        profile.scopes = ["openid"]
        profile.gitURLs = ["https://git.example/"]
        profile.clientSecretInKeyring = true
        return profile
    }()

    static func settings(_ change: (inout ProfileSettings) -> Void) -> ProfileSettings {
        var settings = ProfileSettings()
        change(&settings)
        return settings
    }

    static func merged(_ change: (inout ProfileSettings) -> Void, into existing: Profile? = old) throws -> ProfileSettingsMerge {
        try ProfileSettingsMerge("work", settings(change), into: existing)
    }

    @Test func settingsNotGivenKeepTheirValue() throws {
        let merge = try Self.merged { $0.region = "eu-west-1" }
        var expected = Self.old
        expected.region = "eu-west-1"
        #expect(merge.profile == expected)
        #expect(!merge.unchanged)
        #expect(merge.change == ProfileChange())
    }

    @Test func anEmptyValueClearsAnOptionalSetting() throws {
        let merge = try Self.merged {
            $0.username = ""
            $0.scopes = " "
            $0.gitURLs = [""]
        }
        #expect(merge.profile.username == nil)
        #expect(merge.profile.scopes == nil)
        #expect(merge.profile.gitURLs == nil)
    }

    @Test func valuesAreKeptInTheFilesForm() throws {
        let merge = try Self.merged {
            $0.domain = "my-app"
            $0.scopes = "openid  email\tprofile"
            $0.grant = Grant.userSignIn.rawValue
            $0.dockerRegistries = ["https://Registry.Example:5000/v2/", ""]
            $0.allowInsecureHTTP = false
            $0.basicFlow = true
            $0.roleARN = "arn:aws:iam::123456789012:role/Reader"
        }
        #expect(merge.profile.domain == "https://my-app.auth.us-east-1.amazoncognito.com")
        #expect(merge.profile.scopes == ["openid", "email", "profile"])
        // The default grant is not written.
        #expect(merge.profile.grant == nil)
        #expect(merge.profile.dockerRegistries == ["registry.example:5000"])
        #expect(merge.profile.allowInsecureHTTP == nil)
        #expect(merge.profile.basicFlow == true)
    }

    @Test func theSameSettingsChangeNothing() throws {
        #expect(try Self.merged { $0.username = "alice" }.unchanged)
        // No secret is stored to remove... but this one is.
        #expect(!(try Self.merged { $0.removeClientSecret = true }.unchanged))
        var without = Self.old
        without.clientSecretInKeyring = nil
        #expect(try Self.merged({ $0.removeClientSecret = true }, into: without).unchanged)
        #expect(!(try Self.merged { $0.newClientSecret = true }.unchanged))
    }

    @Test func aNewProfileNeedsItsPoolAndClient() throws {
        #expect(throws: ConfigError.missingSetting(profile: "work", setting: "user-pool-id")) {
            try Self.merged({ $0.clientID = "client" }, into: nil)
        }
        #expect(throws: ConfigError.missingSetting(profile: "work", setting: "client-id")) {
            try Self.merged({ $0.userPoolID = "us-east-1_New" }, into: nil)
        }
        let merge = try Self.merged({ $0.userPoolID = "us-east-1_New"; $0.clientID = "client" }, into: nil)
        #expect(merge.profile == Profile(userPoolID: "us-east-1_New", clientID: "client"))
        #expect(merge.change == ProfileChange())
    }

    /// (what is given, the problem it is refused with)
    static let refusals: [(String, @Sendable (inout ProfileSettings) -> Void, @Sendable (ProfileSettingsProblem) -> Bool)] = [
        ("a bad domain prefix", { $0.domain = "My_App" }, { if case .invalidDomain = $0 { true } else { false } }),
        ("an unreadable CA bundle", { $0.caBundle = "/nonexistent/ca.pem" },
         { if case .unreadableCABundle("/nonexistent/ca.pem") = $0 { true } else { false } }),
        ("a bad pool id", { $0.userPoolID = "nope" }, { if case .invalidValue = $0 { true } else { false } }),
        ("plain HTTP elsewhere", { $0.endpointURL = "http://cognito.example" }, { if case .endpoint(.cleartext) = $0 { true } else { false } }),
        ("a machine without a secret", { $0.grant = "client-credentials"; $0.domain = "https://auth.example"; $0.clientID = "other" },
         { if case .clientCredentialsWithoutSecret = $0 { true } else { false } }),
        ("browser sign-in without a domain", { $0.authFlow = AuthFlow.browser.rawValue },
         { if case .browserWithoutDomain = $0 { true } else { false } }),
        ("FIPS where there is none", { $0.region = "eu-west-1"; $0.useFIPSEndpoint = true },
         { if case .endpoint(.noFIPS(service: "cognito-idp", region: "eu-west-1", _)) = $0 { true } else { false } }),
    ]

    @Test func aCognitoDomainTakesTheFormTheFIPSSettingCallsFor() throws {
        var merge = try Self.merged { $0.useFIPSEndpoint = true; $0.domain = "my-app" }
        #expect(merge.profile.useFIPSEndpoint == true)
        #expect(merge.profile.domain == "https://my-app.auth-fips.us-east-1.amazoncognito.com")
        // Switched off later, without --domain: the stored domain follows.
        merge = try ProfileSettingsMerge("work", Self.settings { $0.useFIPSEndpoint = false }, into: merge.profile)
        #expect(merge.profile.useFIPSEndpoint == nil)
        #expect(merge.profile.domain == "https://my-app.auth.us-east-1.amazoncognito.com")
        // GovCloud: auth-fips with no setting; a custom domain is left alone.
        merge = try Self.merged { $0.userPoolID = "us-gov-west-1_Agency"; $0.domain = "agency" }
        #expect(merge.profile.domain == "https://agency.auth-fips.us-gov-west-1.amazoncognito.com")
        merge = try Self.merged { $0.useFIPSEndpoint = true; $0.domain = "https://auth.example.com" }
        #expect(merge.profile.domain == "https://auth.example.com")
    }

    @Test(arguments: refusals.indices)
    func whatIsRefused(_ index: Int) {
        let (what, change, expected) = Self.refusals[index]
        do {
            _ = try Self.merged(change)
            Issue.record("\(what) was accepted")
        } catch let problem as ProfileSettingsProblem {
            #expect(expected(problem), "\(what): \(problem)")
        } catch {
            Issue.record("\(what): \(error)")
        }
    }

    @Test func aMachineKeepsItsStoredSecretOrIsGivenOne() throws {
        // The stored secret is this client's: it stays.
        _ = try Self.merged { $0.grant = "client-credentials"; $0.domain = "https://auth.example" }
        // Another client's is dropped, so the new one must come with the change.
        let merge = try Self.merged {
            $0.grant = "client-credentials"
            $0.domain = "https://auth.example"
            $0.clientID = "other"
            $0.newClientSecret = true
        }
        #expect(merge.profile.clientSecretInKeyring == true)
        #expect(merge.change == ProfileChange(endsSession: true))
    }

    @Test func anotherClientDropsTheStoredSecret() throws {
        let merge = try Self.merged { $0.clientID = "newclient" }
        #expect(merge.profile.clientSecretInKeyring == nil)
        #expect(merge.change == ProfileChange(endsSession: true, dropsClientSecret: true))
        #expect(
            merge.notes(replacing: Self.old, tokensDeleted: true) == [
                .clientSecretDropped(oldClientID: "oldclient", newClientID: "newclient"),
                .sessionEnded(tokensDeleted: true),
            ])
    }

    @Test func notesOnAMethodThatIsNotUsed() throws {
        let srp = try Self.merged { $0.method = SignInMethod.passkey.rawValue }
        #expect(srp.notes(replacing: Self.old, tokensDeleted: false) == [.methodUnused(flow: .srp), .passkeyWithoutRelyingParty])
        let choice = try Self.merged {
            $0.authFlow = AuthFlow.choice.rawValue
            $0.method = SignInMethod.passkey.rawValue
            $0.passkeyRPID = "auth.example.com"
        }
        #expect(choice.notes(replacing: Self.old, tokensDeleted: false) == [])
    }

    @Test func onlyASettingCountsAsAChange() {
        #expect(!ProfileSettings().changesAnything)
        #expect(Self.settings { $0.basicFlow = false }.changesAnything)
        #expect(Self.settings { $0.dockerRegistries = [""] }.changesAnything)
        #expect(Self.settings { $0.removeClientSecret = true }.changesAnything)
    }
}
