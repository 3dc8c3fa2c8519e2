import Foundation
import Synchronization
import Testing
import CogCredTestSupport
@testable import CogCredWrite

/// configure's change and delete, the list of profiles and the session of a
/// profile no longer configured, on a real config file and an in-memory keyring.
@Suite struct ConfiguredProfilesTests {
    let store = InMemoryTokenStore()
    let config = ConfigStore(path: TestDirectories.path("profiles") + "/config.json")
    let memory = InMemoryRefreshMemory()
    let warnings = Warnings()
    let now: Int64 = 1_800_000_000

    var profiles: ConfiguredProfiles {
        let warnings = self.warnings
        return ConfiguredProfiles(
            config: config, store: store, refreshMemory: memory, lock: { _ in NoRefreshLock() }, clock: FakeClock(now),
            warn: { line in warnings.lines.withLock { $0.append(line) } })
    }

    var old: Profile {
        var profile = testProfile
        profile.clientSecretInKeyring = true
        return profile
    }

    /// The test profile configured as "default", signed in, with a client
    /// secret, a device and AWS credentials; "other" signed in beside it.
    func signedIn() throws {
        try config.save(ConfigFile(profiles: ["default": old, "other": testProfile]))
        for profile in ["default", "other"] {
            try store.write(.refresh, profile: profile, secret: "r", context: context)
            try store.write(.access, profile: profile, secret: TestJWT.access(iat: now, lifetime: 3600), context: context)
        }
        for kind in [SecretKind.clientSecret, .device, .awsCredentials, .identityID] {
            try store.write(kind, profile: "default", secret: "x", context: context)
        }
        memory.rememberInitiateAuth(profile: "default")
    }

    func stored(_ profile: String = "default") throws -> Set<SecretKind> {
        Set(try SecretKind.allCases.filter { try store.read($0, profile: profile) != nil })
    }

    /// Saves the old profile changed by `edit`, the secret kept; returns
    /// how many of the session's items were deleted.
    func save(_ edit: (inout Profile) -> Void) throws -> Int {
        var new = old
        edit(&new)
        let change = ProfileChange(from: old, to: new, newClientSecret: false)
        return try profiles.save("default", new, replacing: old, change: change, clientSecret: .keep)
    }

    @Test func anotherAppClientDeletesTheOldSessionSecretAndDeviceThenSaves() throws {
        try signedIn()
        #expect(try save { $0.clientID = "newclient" } == 5)
        #expect(try stored() == [])
        #expect(try stored("other") == [.refresh, .access])
        let saved = try config.profile("default")
        #expect(saved.clientID == "newclient" && saved.clientSecretInKeyring == nil)
        #expect(!memory.prefersInitiateAuth(profile: "default"))
        #expect(warnings.lines.withLock { $0 } == [])
    }

    @Test func aChangeThatSignsOutIsPutToTheCallerFirstAndARefusalChangesNothing() throws {
        struct Declined: Error {}
        try signedIn()
        let before = try config.load()
        var asked: [SessionStatus] = []
        var settings = ProfileSettings()
        settings.clientID = "newclient"
        #expect(throws: Declined.self) {
            try profiles.configure("default", settings, replacing: old, confirmEndingSession: { asked.append($0); throw Declined() }, clientSecret: { "" })
        }
        #expect(asked.map(\.signedIn) == [true])
        #expect(try config.load() == before)
        #expect(try stored() == [.refresh, .access, .clientSecret, .device, .awsCredentials, .identityID])
        // A change that keeps the session is not asked about; nor is one of a profile not signed in.
        settings = ProfileSettings()
        settings.requestTimeout = 9
        _ = try profiles.configure("default", settings, replacing: old, confirmEndingSession: { _ in Issue.record("asked") }, clientSecret: { "" })
        settings = ProfileSettings()
        settings.clientID = "newclient"
        _ = try profiles.configure("other", settings, replacing: testProfile, confirmEndingSession: { _ in }, clientSecret: { "" })
        settings.clientID = "third"
        _ = try profiles.configure(
            "other", settings, replacing: try config.profile("other"),
            confirmEndingSession: { _ in Issue.record("asked of a profile signed out") }, clientSecret: { "" })
    }

    @Test func aNewSecretIsStoredForTheNewClientBeforeTheConfigSaysSo() throws {
        try signedIn()
        var new = old
        new.clientID = "newclient"
        let change = ProfileChange(from: old, to: new, newClientSecret: true)
        _ = try profiles.save("default", new, replacing: old, change: change, clientSecret: .store("s3cret"))
        let binding = ItemBinding(userPoolID: testProfile.userPoolID, clientID: "newclient")
        #expect(try store.read(.clientSecret, profile: "default", binding: binding) == "s3cret")
        #expect(try config.profile("default").clientSecretInKeyring == true)
    }

    @Test func aSecretThatCannotBeStoredSavesNothing() throws {
        try signedIn()
        store.failAll(with: .locked)
        #expect(throws: SecretServiceError.locked) {
            try profiles.save("default", old, replacing: old, change: ProfileChange(), clientSecret: .store("s3cret"))
        }
        store.failAll(with: nil)
        #expect(try config.profile("default") == old)
    }

    /// A new profile, or one pointed at another client, is saved before its
    /// secret is stored (an agent keeps items only for what its machine
    /// configures), and put back when the secret cannot be stored.
    @Test func aSecretForANewProfileOrClientThatCannotBeStoredLeavesTheConfigAsItWas() throws {
        try signedIn()
        store.failAll(with: .locked)
        var moved = old
        moved.clientID = "newclient"
        #expect(throws: SecretServiceError.locked) {
            try profiles.save(
                "default", moved, replacing: old, change: ProfileChange(from: old, to: moved, newClientSecret: true), clientSecret: .store("s3cret"))
        }
        #expect(throws: SecretServiceError.locked) {
            try profiles.save("ci", testProfile, replacing: nil, change: ProfileChange(), clientSecret: .store("s3cret"))
        }
        store.failAll(with: nil)
        #expect(try config.load().profiles == ["default": old, "other": testProfile])
    }

    @Test func anUnreachableKeyringWarnsAndTheChangeIsSavedAnyway() throws {
        try signedIn()
        store.failAll(with: .locked)
        #expect(try save { $0.userPoolID = "us-east-1_New" } == 0)
        #expect(try config.profile("default").userPoolID == "us-east-1_New")
        let lines = warnings.lines.withLock { $0 }
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.hasPrefix("cog-cred: warning: the old") })
    }

    @Test func anotherIdentityPoolDropsOnlyTheAWSCredentials() throws {
        try signedIn()
        #expect(try save { $0.identityPoolID = "us-east-1:11111111-1111-1111-1111-111111111111" } == 0)
        #expect(try stored() == [.refresh, .access, .clientSecret, .device])
    }

    @Test func removingTheSecretDeletesItAndSaysSo() throws {
        try signedIn()
        _ = try profiles.save("default", old, replacing: old, change: ProfileChange(), clientSecret: .remove)
        #expect(try !stored().contains(.clientSecret))
        #expect(try config.profile("default").clientSecretInKeyring == nil)
    }

    @Test func deletingAProfileDeletesItsItemsThenItsSettings() throws {
        try signedIn()
        #expect(try profiles.delete("default") == 6)
        #expect(try stored() == [])
        #expect(try stored("other") == [.refresh, .access])
        #expect(try config.load().profiles.keys.sorted() == ["other"])
        #expect(!memory.prefersInitiateAuth(profile: "default"))
    }

    @Test func aProfileIsNotDeletedWhileTheKeyringCannotBeReached() throws {
        try signedIn()
        store.failAll(with: .locked)
        #expect(throws: SecretServiceError.locked) { try profiles.delete("default") }
        #expect(try config.load().profiles.count == 2)
        #expect(throws: ConfigError.profileNotFound(profile: "nobody", path: config.path)) { try profiles.delete("nobody") }
    }

    @Test func theListNamesEveryProfileWithItsSession() throws {
        try signedIn()
        try config.save(ConfigFile(profiles: ["default": old, "other": testProfile, "new": testProfile]))
        let (list, failure) = try profiles.summaries()
        #expect(failure == nil)
        #expect(list.map(\.name) == ["default", "new", "other"])
        #expect(list.map { $0.status?.signedIn } == [true, false, true])
        #expect(list[0].status?.accessTokenExpiresAt == now + 3600)
    }

    @Test func aKeyringThatCannotBeAskedLeavesTheListUnknown() throws {
        try signedIn()
        store.failAll(with: .noSessionBus)
        let (list, failure) = try profiles.summaries()
        #expect(failure == .noSessionBus)
        #expect(list.map(\.name) == ["default", "other"] && list.allSatisfy { $0.status == nil })
    }

    @Test func anUnconfiguredProfilesSessionDeletesWhateverItsNameHolds() throws {
        try store.write(.refresh, profile: "gone", secret: "r", context: context)
        try store.write(.access, profile: "gone", secret: "a", context: context)
        #expect(try profiles.forgetUnconfigured("gone") == 2)
        #expect(try stored("gone") == [])
    }

    @Test func theHelpersFindTheirProfileByURLOrRegistry() throws {
        var git = testProfile
        git.gitURLs = ["https://git.example.com/"]
        var docker = testProfile
        docker.dockerRegistries = ["registry.example.com"]
        try config.save(ConfigFile(profiles: ["git": git, "docker": docker]))
        let request = try GitCredential.parse(Array("protocol=https\nhost=git.example.com\n\n".utf8))
        #expect(try profiles.profileName(for: request) == "git")
        #expect(try profiles.profileName(forRegistry: "https://registry.example.com/v2/") == "docker")
        #expect(try profiles.profileName(forRegistry: "elsewhere.example") == nil)
    }
}

/// What a use case warned the person of.
final class Warnings: Sendable {
    let lines = Mutex<[String]>([])
}
