import Foundation
import Testing
import CogCredTestSupport
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
        // Through an agent: its words, and no path of its machine.
        let agents = ConfigError.profileNotInAgent(profile: "wrok", nearest: "work").message
        #expect(agents.hasPrefix("the agent's configuration has no profile 'wrok'; did you mean 'work'?"))
        #expect(!agents.contains(store.path) && ConfigError.profileNotInAgent(profile: "work").category == .configuration)
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

@Suite struct ConfigPermissionTests {
    @Test func aConfigOthersCanWriteIsRefused() throws {
        let dir = TestDirectories.path("permissions")
        let store = ConfigStore(path: dir + "/config.json")
        try store.save(ConfigFile(profiles: ["default": Profile(userPoolID: "us-east-1_A", clientID: "c")]))
        _ = try store.load()
        chmod(store.path, 0o666)
        #expect(throws: ConfigError.self) { try store.load() }
        chmod(store.path, 0o600)
        chmod(dir, 0o777)
        #expect(throws: ConfigError.self) { try store.load() }
        chmod(dir, 0o700)
        #expect(try store.load().profiles.count == 1)
    }

    /// ssh's StrictModes: every directory above the file counts, not only
    /// its own; a root-owned sticky one (like /tmp) is fine.
    @Test func aDirectoryHigherUpThatOthersCanWriteIsRefused() throws {
        let top = TestDirectories.path("strict")
        let store = ConfigStore(path: top + "/a/b/config.json")
        try store.save(ConfigFile(profiles: ["default": Profile(userPoolID: "us-east-1_A", clientID: "c")]))
        chmod(top, 0o777)
        #expect(throws: ConfigError.self) { try store.load() }
        if getuid() == 0 {
            chmod(top, 0o1777)  // root's and sticky
            #expect(try store.load().profiles.count == 1)
        }
        chmod(top, 0o755)
        #expect(try store.load().profiles.count == 1)
    }

    @Test func aSymbolicLinkOrAFIFOIsNotRead() throws {
        let dir = TestDirectories.path("link")
        let real = ConfigStore(path: dir + "/real/config.json")
        try real.save(ConfigFile(profiles: ["default": Profile(userPoolID: "us-east-1_A", clientID: "c")]))
        let linked = ConfigStore(path: dir + "/config.json")
        #expect(symlink(real.path, linked.path) == 0)
        #expect {
            try linked.load()
        } throws: { error in
            guard case .unsafePermissions(_, let reason)? = error as? ConfigError else { return false }
            return reason.contains("symbolic link")
        }
        let fifo = ConfigStore(path: dir + "/fifo/config.json")
        #expect(mkdir(dir + "/fifo", 0o700) == 0 && mkfifo(fifo.path, 0o600) == 0)
        #expect(throws: ConfigError.unreadable(path: fifo.path, reason: "not a regular file")) { try fifo.load() }
    }
}
