import Foundation
import Synchronization
import Testing
import CogCredTestSupport
@testable import CogCredWrite

/// An in-memory git and kubectl: git config's multi-valued keys of one
/// file, and every command line run, in order.
final class FakePrograms: ProgramRunning {
    struct State {
        var gitConfig: [String: [String]] = [:]
        var insideRepository = true
        var ran: [[String]] = []
        /// A command line starting with one of these keys answers with its result.
        var answers: [String: ProgramResult] = [:]
        var missing: Set<String> = []
    }
    let state: Mutex<State>

    init(_ state: State = State()) { self.state = Mutex(state) }

    func run(_ arguments: [String]) throws(SetupError) -> ProgramResult {
        let missing = state.withLock { state in
            state.ran.append(arguments)
            return state.missing.contains(arguments[0])
        }
        if missing { throw .programMissing(arguments[0], reason: "No such file or directory") }
        return state.withLock { state in
            if let answer = state.answers.first(where: { arguments.joined(separator: " ").hasPrefix($0.key) })?.value { return answer }
            switch Array(arguments.dropFirst(arguments[0] == "git" ? 1 : 0)) {
            case ["rev-parse", "--git-dir"]:
                return ProgramResult(status: state.insideRepository ? 0 : 128)
            case let words where words.count >= 4 && words[0] == "config":
                let key = words[words.count - (words[2] == "-z" ? 1 : 2)]
                switch words[2] {
                case "-z":
                    guard let values = state.gitConfig[key] else { return ProgramResult(status: 1) }
                    return ProgramResult(status: 0, output: values.map { $0 + "\0" }.joined())
                case "--replace-all": state.gitConfig[key] = [words[4]]
                case "--add": state.gitConfig[key, default: []].append(words[4])
                default: return ProgramResult(status: 2)
                }
                return ProgramResult(status: 0)
            default:
                return ProgramResult(status: 0)
            }
        }
    }

    var ran: [[String]] { state.withLock { $0.ran } }
    var gitConfig: [String: [String]] { state.withLock { $0.gitConfig } }
}

@Suite struct GitHelperSetupTests {
    static let key = "credential.https://git.example.com.helper"

    @Test func writesTheResetEntryThenTheHelperOnceAndLeavesOtherHostsAlone() throws {
        let programs = FakePrograms(.init(gitConfig: [
            Self.key: ["store", "cache"], "credential.https://other.example.com.helper": ["store"],
        ]))
        let setup = GitHelperSetup(programs: programs)
        #expect(try setup.setUp(host: "git.example.com", profile: "work", scope: .global) == .written(replaced: ["store", "cache"]))
        #expect(programs.gitConfig[Self.key] == ["", "cog-cred --profile work"])
        #expect(programs.gitConfig["credential.https://other.example.com.helper"] == ["store"])
        let written = programs.ran.count
        #expect(try setup.setUp(host: "git.example.com", profile: "work", scope: .global) == .unchanged)
        #expect(programs.ran.count == written + 1)  // only the read
    }

    @Test func theDefaultProfileIsNamedAndAnotherProfileSwitchesTheHost() throws {
        let programs = FakePrograms()
        let setup = GitHelperSetup(programs: programs)
        #expect(try setup.setUp(host: "git.example.com", profile: "default", scope: .local) == .written(replaced: []))
        #expect(programs.gitConfig[Self.key] == ["", "cog-cred --profile default"])
        #expect(try setup.setUp(host: "git.example.com", profile: "work", scope: .local) == .written(replaced: ["cog-cred --profile default"]))
        #expect(programs.gitConfig[Self.key] == ["", "cog-cred --profile work"])
        #expect(programs.ran.filter { $0.count > 2 && $0[1] == "config" }.allSatisfy { $0[2] == "--local" })
    }

    @Test func localOutsideARepositoryWritesNothing() {
        let programs = FakePrograms(.init(insideRepository: false))
        #expect(throws: SetupError(.repositoryScopeOutsideRepository, category: .usage)) {
            try GitHelperSetup(programs: programs).setUp(host: "h", profile: "p", scope: .local)
        }
        #expect(programs.gitConfig.isEmpty)
        #expect((try? GitHelperSetup(programs: programs).setUp(host: "h", profile: "p", scope: .local)) == nil)
    }

    @Test func gitMissingOrRefusingIsOneError() {
        let missing = FakePrograms(.init(missing: ["git"]))
        #expect(performing: { try GitHelperSetup(programs: missing).setUp(host: "h", profile: "p", scope: .global) },
                throws: { ($0 as? SetupError)?.category == .programUnavailable })
        let broken = FakePrograms(.init(answers: ["git config --global -z": ProgramResult(status: 3, errorOutput: "fatal: bad config line 1 in file /h/.gitconfig\n")]))
        #expect(performing: { try GitHelperSetup(programs: broken).setUp(host: "h", profile: "p", scope: .global) },
                throws: { ($0 as? SetupError)?.message == "git config: fatal: bad config line 1 in file /h/.gitconfig" })
    }

    @Test func aFailureAfterTheResetSaysTheHostHasNoHelperNow() {
        let programs = FakePrograms(.init(answers: ["git config --global --add": ProgramResult(status: 255, errorOutput: "error: could not lock config file\n")]))
        #expect(performing: { try GitHelperSetup(programs: programs).setUp(host: "h", profile: "p", scope: .global) },
                throws: { ($0 as? SetupError)?.reason == .helpersCleared(host: "h", failure: "git config: error: could not lock config file") })
    }

    @Test(arguments: [
        ("git.example.com", "git.example.com"), ("Git.Example.COM:8443", "git.example.com:8443"),
        ("https://git.example.com/", "git.example.com"), ("127.0.0.1:3000", "127.0.0.1:3000"), ("[::1]:8443", "[::1]:8443"),
        // A remote's URL: the host and port git matches credential.https://HOST by.
        ("https://git.example.com/org/repo.git", "git.example.com"), ("HTTPS://git.example.com:8443/x?y#z", "git.example.com:8443"),
        ("https://alice:secret@git.example.com/org/repo.git", "git.example.com"), ("https://a@b@git.example.com", "git.example.com"),
        // 443 is https's own: git drops it, so host:443 and host are one entry.
        ("https://git.example.com:443/x", "git.example.com"), ("git.example.com:443", "git.example.com"), ("[::1]:443", "[::1]"),
    ])
    func hosts(_ text: String, _ host: String) {
        #expect(GitHelperSetup.host(text) == host)
    }

    @Test(arguments: ["", "http://git.example.com", "ssh://git.example.com/repo.git", "git.example.com:", "git.example.com:http",
                      "-c", "a b", "host\nhelper", "a/b", "héllo.example", "git@git.example.com:org/repo.git", "https://",
                      "https://git.example.com:99999999/", "https://user:pw@/x", "user@git.example.com"])
    func notHosts(_ text: String) {
        #expect(GitHelperSetup.host(text) == nil)
    }

    @Test func aShownAddressHasNoUserinfoAndOneLibcurlCannotReadIsNotShown() {
        #expect(ServerAddress.shown("ftp://alice:s3cret@host/org/repo.git") == ": 'ftp://host/org/repo.git'")
        #expect(ServerAddress.shown("https://host/a@b") == ": 'https://host/a@b'")
        // A space libcurl refuses; a "/" in the password ends libcurl's authority.
        #expect(ServerAddress.shown("https://alice:s3cret@bad host/org/repo.git") == "")
        #expect(ServerAddress.shown("https://alice:s3/cret@host:1/") == "")
    }
}

@Suite struct DockerHelperSetupTests {
    /// A new directory with a cog-cred config holding the profiles `work` and `home`.
    func directory(_ registries: [String: [String]] = [:]) throws -> (String, ConfigStore) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("docker-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let config = ConfigStore(path: path + "/cog-cred/config.json")
        var file = ConfigFile(profiles: ["work": testProfile, "home": testProfile])
        for (name, hosts) in registries { file.profiles[name]?.dockerRegistries = hosts }
        try config.save(file)
        return (path, config)
    }

    @Test(arguments: [("registry.example.com", "registry.example.com"), ("Registry.Example.com:5000", "registry.example.com:5000"),
                      ("https://registry.example.com/v2/", "registry.example.com"), ("http://u:p@localhost:5000/v2/", "localhost:5000"),
                      ("https://registry.example.com:443/", "registry.example.com:443")])
    func registries(_ text: String, _ key: String) {
        #expect(DockerHelperSetup.registry(text) == key)
    }

    @Test(arguments: ["", "docker://registry.example.com", "registry.example.com/team/image", "a b", "registry.example.com:x"])
    func notRegistries(_ text: String) {
        #expect(DockerHelperSetup.registry(text) == nil)
    }

    @Test func dockerConfigIsWhereDockerReadsIt() {
        #expect(DockerHelperSetup.dockerConfigPath(environment: ["HOME": "/h"]) == "/h/.docker/config.json")
        #expect(DockerHelperSetup.dockerConfigPath(environment: ["HOME": "/h", "DOCKER_CONFIG": "/d"]) == "/d/config.json")
        #expect(DockerHelperSetup.dockerConfigPath(environment: [:]) == nil)
    }

    @Test func writesTheEntryKeepsTheRestAndASecondRunWritesNothing() throws {
        let (path, config) = try directory()
        let docker = path + "/config.json"
        let before = #"{"auths": {"other.example.com": {"auth": "dXNlcjpwdw=="}}, "credsStore": "secretservice", "#
            + #""credHelpers": {"gcr.io": "gcloud"}, "proxies": {"default": {"httpProxy": "http://proxy:3128"}}, "n": 3, "x": [1.5, true, null]}"#
        try Data(before.utf8).write(to: URL(fileURLWithPath: docker))
        chmod(docker, 0o640)
        let setup = DockerHelperSetup(dockerConfig: docker, config: config)
        let outcome = try setup.setUp(registry: "registry.example.com", profile: "work")
        #expect(outcome.wroteDockerConfig && outcome.mapped && outcome.replacedHelper == nil && outcome.unmappedFrom.isEmpty)
        var expected = try #require(JSONValue.parse(Array(before.utf8))?.objectValue)
        expected["credHelpers"] = .object(["gcr.io": .string("gcloud"), "registry.example.com": .string("cog-cred")])
        let written = try Data(contentsOf: URL(fileURLWithPath: docker))
        #expect(JSONValue.parse(Array(written)) == .object(expected))
        #expect(try FileManager.default.attributesOfItem(atPath: docker)[.posixPermissions] as? Int == 0o640)
        #expect(try config.profile("work").dockerRegistries == ["registry.example.com"])

        let again = try setup.setUp(registry: "registry.example.com", profile: "work")
        #expect(!again.changed)
        #expect(try Data(contentsOf: URL(fileURLWithPath: docker)) == written)
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == ["cog-cred", "config.json"])
    }

    @Test func aNewFileIs0600InADirectory0700() throws {
        let (path, config) = try directory()
        let docker = path + "/new/.docker/config.json"
        _ = try DockerHelperSetup(dockerConfig: docker, config: config).setUp(registry: "r.example.com", profile: "work")
        #expect(try FileManager.default.attributesOfItem(atPath: docker)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: path + "/new/.docker")[.posixPermissions] as? Int == 0o700)
        #expect(JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: docker)))) == .object(["credHelpers": .object(["r.example.com": .string("cog-cred")])]))
    }

    @Test func anotherProfilesRegistryMovesAndAnotherHelperIsReplaced() throws {
        let (path, config) = try directory(["home": ["r.example.com", "s.example.com"]])
        let docker = path + "/config.json"
        try Data(#"{"credHelpers": {"r.example.com": "ecr-login"}}"#.utf8).write(to: URL(fileURLWithPath: docker))
        let outcome = try DockerHelperSetup(dockerConfig: docker, config: config).setUp(registry: "r.example.com", profile: "work")
        #expect(outcome.replacedHelper == "ecr-login" && outcome.unmappedFrom == ["home"] && outcome.mapped)
        #expect(try config.profile("home").dockerRegistries == ["s.example.com"])
        #expect(try config.load().profile(forRegistry: "r.example.com") == "work")
    }

    @Test(arguments: ["{", "[]", #"{"credHelpers": ["r.example.com"]}"#, #"{"credHelpers": {"r.example.com": 1}}"#, "{} {}"])
    func aMalformedConfigChangesNothing(_ text: String) throws {
        let (path, config) = try directory()
        let docker = path + "/config.json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: docker))
        let before = try config.load()
        #expect(performing: { try DockerHelperSetup(dockerConfig: docker, config: config).setUp(registry: "r.example.com", profile: "work") },
                throws: { ($0 as? SetupError)?.category == .configuration && ($0 as? SetupError)?.message.contains(docker) == true })
        #expect(try Data(contentsOf: URL(fileURLWithPath: docker)) == Data(text.utf8))
        #expect(try config.load() == before)
    }

    @Test func aLinkedConfigIsWrittenWhereTheLinkLeadsAndStaysALink() throws {
        let (path, config) = try directory()
        try FileManager.default.createDirectory(atPath: path + "/dotfiles", withIntermediateDirectories: false)
        try Data(#"{"auths": {}}"#.utf8).write(to: URL(fileURLWithPath: path + "/dotfiles/docker.json"))
        try FileManager.default.createSymbolicLink(atPath: path + "/config.json", withDestinationPath: path + "/dotfiles/docker.json")
        _ = try DockerHelperSetup(dockerConfig: path + "/config.json", config: config).setUp(registry: "r.example.com", profile: "work")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path + "/config.json") == path + "/dotfiles/docker.json")
        #expect(JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path + "/dotfiles/docker.json"))))?["credHelpers"]
                == .object(["r.example.com": .string("cog-cred")]))
    }

    @Test func anEmptyFileIsAnEmptyConfig() throws {
        let (path, config) = try directory()
        let docker = path + "/config.json"
        _ = FileManager.default.createFile(atPath: docker, contents: Data("\n".utf8))
        #expect(try DockerHelperSetup(dockerConfig: docker, config: config).setUp(registry: "r.example.com", profile: "work").wroteDockerConfig)
    }
}

@Suite struct KubectlUserSetupTests {
    static func version(_ minor: String) -> ProgramResult {
        ProgramResult(status: 0, output: #"{"clientVersion": {"major": "1", "minor": "\#(minor)"}}"#)
    }

    @Test func v1WithNeverFromKubectl126AndTheContextBound() throws {
        let programs = FakePrograms(.init(answers: [
            "kubectl version": Self.version("32"),
            "kubectl --kubeconfig /k config get-clusters": ProgramResult(status: 0, output: "NAME\nprod\nstage\n"),
        ]))
        let request = KubectlUserSetup.Request(profile: "work", cluster: "prod", kubeconfig: "/k", idToken: true)
        let outcome = try KubectlUserSetup(programs: programs).setUp(request)
        #expect(outcome == .init(user: "cog-cred-work", apiVersion: "client.authentication.k8s.io/v1", context: "prod", file: "/k"))
        #expect(programs.ran.suffix(2) == [
            ["kubectl", "--kubeconfig", "/k", "config", "set-credentials", "cog-cred-work", "--exec-command=cog-cred",
             "--exec-api-version=client.authentication.k8s.io/v1", "--exec-arg=kubectl-credential", "--exec-arg=--profile",
             "--exec-arg=work", "--exec-arg=--id-token", "--exec-interactive-mode=Never"],
            ["kubectl", "--kubeconfig", "/k", "config", "set-context", "prod", "--cluster=prod", "--user=cog-cred-work"],
        ])
    }

    @Test(arguments: [("20", "client.authentication.k8s.io/v1beta1"), ("25", "client.authentication.k8s.io/v1beta1"),
                      ("26+", "client.authentication.k8s.io/v1")])
    func theApiVersionFollowsKubectl(_ minor: String, _ apiVersion: String) throws {
        let programs = FakePrograms(.init(answers: ["kubectl version": Self.version(minor)]))
        let outcome = try KubectlUserSetup(programs: programs).setUp(.init(profile: "default", user: "me", kubeconfig: "/k"))
        #expect(outcome.apiVersion == apiVersion)
        let credentials = try #require(programs.ran.last)
        // interactiveMode: only v1 has it, and only kubectl 1.26 can set it.
        #expect(credentials.contains("--exec-interactive-mode=Never") == apiVersion.hasSuffix("/v1"))
        #expect(credentials[5] == "me" && !programs.ran.contains { $0.contains("set-context") })
    }

    @Test func aKubeconfigAlreadySoIsNotWrittenAgain() throws {
        let view = #"{"users": [{"name": "cog-cred-work", "user": {"exec": {"command": "cog-cred", "apiVersion": "client.authentication.k8s.io/v1", "#
            + #""args": ["kubectl-credential", "--profile", "work"], "env": null, "interactiveMode": "Never", "provideClusterInfo": false}}}], "#
            + #""contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "cog-cred-work", "namespace": "team"}}]}"#
        let answers = [
            "kubectl version": Self.version("32"), "kubectl config get-clusters": ProgramResult(status: 0, output: "NAME\nprod\n"),
            "kubectl config view": ProgramResult(status: 0, output: view),
        ]
        let programs = FakePrograms(.init(answers: answers))
        let setup = KubectlUserSetup(programs: programs, environment: ["HOME": "/h"])
        let outcome = try setup.setUp(.init(profile: "work", cluster: "prod"))
        #expect(!outcome.changed && outcome.file == "/h/.kube/config")
        #expect(!programs.ran.contains { $0.contains("set-credentials") || $0.contains("set-context") })
        // Another setting (the ID token, another cluster's context) is written.
        for request in [KubectlUserSetup.Request(profile: "work", cluster: "prod", idToken: true),
                        KubectlUserSetup.Request(profile: "work", cluster: "prod", context: "other")] {
            let again = FakePrograms(.init(answers: answers))
            #expect(try KubectlUserSetup(programs: again).setUp(request).changed)
            #expect(again.ran.contains { $0.contains("set-credentials") })
        }
    }

    @Test func theFileNamedIsTheFirstOfKubeconfigsThatHoldsTheUser() throws {
        let programs = FakePrograms(.init(answers: [
            "kubectl version": Self.version("32"),
            "kubectl --kubeconfig /b config view": ProgramResult(status: 0, output: #"{"users": [{"name": "cog-cred-work", "user": {}}]}"#),
            "kubectl --kubeconfig /c config view": ProgramResult(status: 0, output: #"{"users": [{"name": "cog-cred-work", "user": {}}]}"#),
        ]))
        let outcome = try KubectlUserSetup(programs: programs, environment: ["KUBECONFIG": "/a::/b:/c:/a"]).setUp(.init(profile: "work"))
        #expect(outcome.changed && outcome.file == "/b")
    }

    @Test func anUnknownClusterWritesNothing() {
        let programs = FakePrograms(.init(answers: [
            "kubectl version": Self.version("32"), "kubectl config get-clusters": ProgramResult(status: 0, output: "NAME\nstage\n"),
        ]))
        #expect(performing: { try KubectlUserSetup(programs: programs).setUp(.init(profile: "p", cluster: "prod")) },
                throws: { ($0 as? SetupError)?.category == .configuration })
        #expect(!programs.ran.contains { $0.contains("set-credentials") })
    }
}
