import Testing
import CogCredTestSupport
@testable import CogCredRead

/// The profiles and their access tokens in memory, as both helper protocols
/// ask for them: what the commands and the front do with the keyring.
final class MemoryHelperStore: GitCredentialStore, DockerCredentialStore {
    enum Failure: Error, Equatable {
        case malformed(GitCredential.ParseError)
        case refused(DockerCredential.Refusal)
    }

    var file: ConfigFile
    var tokens: [String: IssuedToken]
    var stdin: [UInt8] = []
    /// --profile, when given.
    var named: String? = nil
    /// How many times standard input was read.
    var reads = 0
    /// What git was told when no token was handed out.
    var declined: [GitCredential.Refusal] = []

    init(config: ConfigFile, tokens: [String: IssuedToken]) {
        self.file = config
        self.tokens = tokens
    }

    func given(_ text: String) -> Self {
        stdin = Array(text.utf8)
        return self
    }

    // Both protocols.
    func accessToken(profile: String) throws(Failure) -> IssuedToken {
        guard let token = tokens[profile] else { throw .refused(.notFound) }
        return token
    }

    // git
    func input() -> [UInt8] {
        reads += 1
        return stdin
    }
    func malformed(_ error: GitCredential.ParseError) -> Failure { .malformed(error) }
    func profile(for request: GitCredential.Request) -> String? { GitCredential.profile(for: request, named: named, in: file) }
    func token(for request: GitCredential.Request) throws(Failure) -> GitCredential.Lookup {
        try GitCredential.lookup(request, named: named, in: file) { (profile: String) throws(Failure) in try accessToken(profile: profile) }
    }
    func decline(_ refusal: GitCredential.Refusal) { declined.append(refusal) }
    func forgetAccessToken(profile: String, onlyIf isIt: @escaping (String) -> Bool) {
        if let token = tokens[profile], isIt(token.value) { tokens[profile] = nil }
    }

    // docker
    func input(limit: Int) -> [UInt8] {
        reads += 1
        return Array(stdin.prefix(limit))
    }
    func refused(_ refusal: DockerCredential.Refusal) -> Failure { .refused(refusal) }
    func profile(forServerURL serverURL: String) -> String? {
        named ?? file.profile(forRegistry: DockerCredential.registryHost(serverURL))
    }
    func token(forServerURL serverURL: String) throws(Failure) -> IssuedToken? {
        try profile(forServerURL: serverURL).map { (profile: String) throws(Failure) in try accessToken(profile: profile) }
    }
    func forgetAccessToken(profile: String) { tokens[profile] = nil }
    func config() -> ConfigFile { file }
    func version() -> String { "cog-cred 1.2.3" }
}

enum HelperFixtures {
    static let token = IssuedToken(value: "a.b.c", claims: JWTClaims(exp: 1_800_000_000, iat: 0, username: "alice"))

    static func store() -> MemoryHelperStore {
        var work = Profile(userPoolID: "us-east-1_A", clientID: "c")
        work.username = "alice"
        work.gitURLs = ["https://git.example.com/"]
        work.dockerRegistries = ["registry.example.com"]
        let other = Profile(userPoolID: "us-east-1_B", clientID: "d")
        return MemoryHelperStore(config: ConfigFile(profiles: ["work": work, "other": other]), tokens: ["work": token, "other": token])
    }
}

/// git's helper protocol, action by action, over key=value lines.
@Suite struct GitCredentialHandleTests {
    let token = HelperFixtures.token

    @Test func getAnswersAConfiguredHostWithTheToken() throws {
        let store = HelperFixtures.store().given("protocol=https\nhost=git.example.com\n\n")
        #expect(try GitCredential.handle("get", store) == "username=alice\npassword=a.b.c\npassword_expiry_utc=1800000000\n")
    }

    @Test func getAnswersWithBearerWhenGitAnnouncesAuthtype() throws {
        let store = HelperFixtures.store().given("capability[]=authtype\nprotocol=https\nhost=git.example.com\n\n")
        #expect(
            try GitCredential.handle("get", store)
                == "capability[]=authtype\nauthtype=Bearer\ncredential=a.b.c\nephemeral=true\n")
    }

    @Test func getForAnotherHostPrintsNothing() throws {
        // git then asks its next helper: no token goes to a host nobody named.
        let store = HelperFixtures.store().given("protocol=https\nhost=github.com\n\n")
        #expect(try GitCredential.handle("get", store) == "")
        store.named = "other"
        #expect(try GitCredential.handle("get", store).hasPrefix("username=alice\n"))
    }

    /// A token goes only where it may: a host git named, over https (plain
    /// http to this machine aside), in values holding no CR, LF or NUL,
    /// within the profile's git URLs; each refusal said once.
    @Test(arguments: [
        ("protocol=http\nhost=git.example.com\n\n", GitCredential.Refusal.notHTTPS(scheme: "http", host: "git.example.com")),
        ("protocol=https\nhost=\n\n", .noHost),
        ("protocol=https\nhost=  \n\n", .noHost),
        ("protocol=https\n\n", .noHost),
        ("protocol=https\nhost=git.example.com\rhost=evil.example\n\n", .controlCharacter(key: "host")),
        ("protocol=https\nhost=git.example.com\r\n\n", .controlCharacter(key: "host")),
        ("protocol=https\nhost=git.example.com\npath=a\rb\n\n", .controlCharacter(key: "path")),
        ("protocol=https\nhost=elsewhere.example\n\n", .outsidePatterns(profile: "work", scheme: "https", host: "elsewhere.example")),
        ("protocol=ssh\nhost=git.example.com\n\n", .notHTTPS(scheme: "ssh", host: "git.example.com")),
        ("url=http://git.example.com/org/repo.git\n\n", .notHTTPS(scheme: "http", host: "git.example.com")),
    ])
    func aNamedProfileHandsNoTokenWhereItMayNotGo(_ request: String, _ refusal: GitCredential.Refusal) throws {
        let store = HelperFixtures.store().given(request)
        store.named = "work"
        #expect(try GitCredential.handle("get", store) == "")
        #expect(store.declined == [refusal])
        #expect(refusal.message.hasPrefix("cog-cred: no token for git: ") && !refusal.message.contains("\r"))
    }

    @Test(arguments: [
        "protocol=https\nhost=git.example.com\n\n", "protocol=http\nhost=127.0.0.1:8080\n\n", "protocol=http\nhost=localhost\n\n",
        "protocol=http\nhost=[::1]:9418\n\n", "protocol=HTTPS\nhost=Git.Example.com\npath=org/repo.git\n\n",
    ])
    func httpsAndPlainHTTPToThisMachineAreAnswered(_ request: String) throws {
        let store = HelperFixtures.store().given(request)
        store.named = "other"  // no git URLs: any host
        #expect(try GitCredential.handle("get", store).hasPrefix("username=alice\n"))
        #expect(store.declined.isEmpty)
    }

    @Test func withoutANamedProfileAHostNoProfileAnswersIsPassedOverInSilence() throws {
        let store = HelperFixtures.store().given("protocol=http\nhost=github.com\n\n")
        #expect(try GitCredential.handle("get", store) == "")
        #expect(store.declined.isEmpty)
    }

    @Test func malformedInputIsTheStoresFailure() {
        let store = HelperFixtures.store().given("protocol=https\ngarbage\n")
        #expect(throws: MemoryHelperStore.Failure.malformed(.missingEquals(line: 2))) { try GitCredential.handle("get", store) }
        #expect(throws: MemoryHelperStore.Failure.malformed(.missingEquals(line: 2))) { try GitCredential.handle("store", store) }
    }

    @Test func eraseForgetsOnlyTheTokenWeIssued() throws {
        let store = HelperFixtures.store().given("protocol=https\nhost=git.example.com\npassword=someone-elses\n\n")
        #expect(try GitCredential.handle("erase", store) == "")
        #expect(store.tokens["work"] != nil)
        _ = store.given("protocol=https\nhost=git.example.com\nusername=alice\npassword=a.b.c\n\n")
        #expect(try GitCredential.handle("erase", store) == "")
        #expect(store.tokens["work"] == nil)
        #expect(store.tokens["other"] != nil)
    }

    @Test func storeKeepsNothing() throws {
        let store = HelperFixtures.store().given("protocol=https\nhost=git.example.com\nusername=bob\npassword=pw\n\n")
        #expect(try GitCredential.handle("store", store) == "")
        #expect(store.tokens["work"] == token)
    }

    @Test func capabilityReadsNoInput() throws {
        let store = HelperFixtures.store()
        #expect(try GitCredential.handle("capability", store) == "version 0\ncapability authtype\n")
        #expect(store.reads == 0)
    }

    @Test func anActionOfNewerGitIsIgnored() throws {
        let store = HelperFixtures.store().given("protocol=https\nhost=git.example.com\n\n")
        #expect(try GitCredential.handle("approve-something", store) == "")
        #expect(store.reads == 0)
        #expect(GitCredential.Action.allCases.map(\.rawValue) == ["get", "store", "erase", "capability"])
    }
}

/// docker's helper protocol, action by action, over its ServerURL and JSON lines.
@Suite struct DockerCredentialHandleTests {
    @Test func getAnswersAMappedRegistryWithJSON() throws {
        let store = HelperFixtures.store().given("https://Registry.Example.com/v2/\n")
        #expect(
            try DockerCredential.handle("get", store)
                == #"{"Secret":"a.b.c","ServerURL":"https://Registry.Example.com/v2/","Username":"alice"}"# + "\n")
    }

    @Test func getForARegistryNoProfileMapsIsNotFound() {
        let store = HelperFixtures.store().given("docker.io\n")
        #expect(throws: MemoryHelperStore.Failure.refused(.notFound)) { try DockerCredential.handle("get", store) }
        #expect(throws: MemoryHelperStore.Failure.refused(.notFound)) { try DockerCredential.handle("erase", store) }
    }

    @Test func eraseForgetsTheToken() throws {
        let store = HelperFixtures.store().given("registry.example.com")
        #expect(try DockerCredential.handle("erase", store) == "")
        #expect(store.tokens["work"] == nil)
        #expect(store.tokens["other"] != nil)
    }

    @Test func storeAcceptsOnlyACredentialForAMappedRegistry() throws {
        let store = HelperFixtures.store().given(#"{"ServerURL":"registry.example.com","Username":"u","Secret":"s"}"#)
        #expect(try DockerCredential.handle("store", store) == "")
        #expect(store.tokens["work"] == HelperFixtures.token)
        _ = store.given(#"{"ServerURL":"docker.io","Username":"u","Secret":"s"}"#)
        #expect(throws: MemoryHelperStore.Failure.refused(.registryNotMapped)) { try DockerCredential.handle("store", store) }
        _ = store.given("registry.example.com\n")
        #expect(throws: MemoryHelperStore.Failure.refused(.notACredential)) { try DockerCredential.handle("store", store) }
    }

    @Test func listNamesTheMappedRegistries() throws {
        #expect(try DockerCredential.handle("list", HelperFixtures.store()) == #"{"registry.example.com":"alice"}"# + "\n")
    }

    @Test func versionAndUnknownActions() throws {
        let store = HelperFixtures.store()
        #expect(try DockerCredential.handle("version", store) == "cog-cred 1.2.3\n")
        #expect(throws: MemoryHelperStore.Failure.refused(.unknownAction("frobnicate"))) {
            try DockerCredential.handle("frobnicate", store)
        }
        #expect(store.reads == 0)
        #expect(DockerCredential.Action.allCases.map(\.rawValue) == ["get", "store", "erase", "list", "version"])
    }
}
