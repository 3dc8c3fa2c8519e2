import Synchronization
import Testing
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
        #expect(throws: SetupError.self) { try GitHelperSetup(programs: programs).setUp(host: "h", profile: "p", scope: .local) }
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
                throws: { ($0 as? SetupError)?.message.contains("run setup-git again") == true })
    }

    @Test(arguments: [
        ("git.example.com", "git.example.com"), ("Git.Example.COM:8443", "git.example.com:8443"),
        ("https://git.example.com/", "git.example.com"), ("127.0.0.1:3000", "127.0.0.1:3000"), ("[::1]:443", "[::1]:443"),
    ])
    func hosts(_ text: String, _ host: String) {
        #expect(GitHelperSetup.host(text) == host)
    }

    @Test(arguments: ["", "http://git.example.com", "https://git.example.com/repo.git", "git.example.com:", "git.example.com:http",
                      "-c", "a b", "host\nhelper", "a/b", "héllo.example"])
    func notHosts(_ text: String) {
        #expect(GitHelperSetup.host(text) == nil)
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
        #expect(outcome == .init(user: "cog-cred-work", apiVersion: "client.authentication.k8s.io/v1", context: "prod"))
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

    @Test func anUnknownClusterWritesNothing() {
        let programs = FakePrograms(.init(answers: [
            "kubectl version": Self.version("32"), "kubectl config get-clusters": ProgramResult(status: 0, output: "NAME\nstage\n"),
        ]))
        #expect(performing: { try KubectlUserSetup(programs: programs).setUp(.init(profile: "p", cluster: "prod")) },
                throws: { ($0 as? SetupError)?.category == .configuration })
        #expect(!programs.ran.contains { $0.contains("set-credentials") })
    }
}
