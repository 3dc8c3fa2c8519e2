import Foundation
import Testing
import CogCredTestSupport
@testable import CogCredRead

@Suite struct GitCredentialTests {
    func parse(_ text: String) throws -> GitCredential.Request { try GitCredential.parse(Array(text.utf8)) }

    @Test func readsKeyValueLinesUntilABlankLine() throws {
        let request = try parse("protocol=https\nhost=git.example.com\nwwwauth[]=Bearer realm=\"x\"\ncapability[]=authtype\n\nignored=after\n")
        #expect(request.value("protocol") == "https")
        #expect(request.value("wwwauth[]") == "Bearer realm=\"x\"")  // values keep their '='
        #expect(request.capabilities == ["authtype"])
        #expect(request.value("ignored") == nil)
        #expect(request.target?.host == "git.example.com")
    }

    @Test func endOfInputEndsTheRequestToo() throws {
        #expect(try parse("protocol=http\nhost=127.0.0.1:8080").value("host") == "127.0.0.1:8080")
        #expect(try parse("").attributes.isEmpty)
    }

    @Test func aURLKeyGivesTheTarget() throws {
        let target = try #require(try parse("url=https://alice@Git.Example.com:8443/team/repo.git\n").target)
        #expect(target.scheme == "https")
        #expect(target.host == "git.example.com:8443")
        #expect(target.path == "team/repo.git")
    }

    @Test func refusesNULBytesLongLinesAndLinesWithoutEquals() {
        #expect(throws: GitCredential.ParseError.nulByte(line: 2)) { try parse("protocol=https\nhost=a\u{0}b\n") }
        #expect(throws: GitCredential.ParseError.missingEquals(line: 1)) { try parse("garbage\n") }
        let long = "password=" + String(repeating: "x", count: 65536) + "\n"
        #expect(throws: GitCredential.ParseError.lineTooLong(line: 1)) { try parse(long) }
        #expect(GitCredential.ParseError.nulByte(line: 1).category == .dataError)
    }

    @Test func answersWithBearerWhenGitCanTakeIt() {
        let token = IssuedToken(value: "a.b.c", claims: JWTClaims(exp: 1_800_000_000, iat: 0, username: "alice"))
        #expect(GitCredential.answer(token: token, username: "alice", bearer: true)
            == "capability[]=authtype\nauthtype=Bearer\ncredential=a.b.c\nephemeral=true\n")
        #expect(GitCredential.answer(token: token, username: "alice", bearer: false)
            == "username=alice\npassword=a.b.c\npassword_expiry_utc=1800000000\n")
    }

    @Test func eraseMatchesOnlyOurCredential() throws {
        #expect(GitCredential.erases(try parse("password=tok\n"), token: "tok"))
        #expect(GitCredential.erases(try parse("authtype=Bearer\ncredential=tok\n"), token: "tok"))
        #expect(!GitCredential.erases(try parse("password=other\n"), token: "tok"))
        #expect(!GitCredential.erases(try parse("username=alice\n"), token: "tok"))
    }

    @Test func urlPatternsMatchSchemeHostAndAPathPrefixWhenGiven() throws {
        let pattern = try #require(URLPattern("https://git.example.com/team/"))
        #expect(pattern.matches(scheme: "https", host: "git.example.com", path: nil))
        #expect(pattern.matches(scheme: "https", host: "git.example.com", path: "team/repo.git"))
        #expect(!pattern.matches(scheme: "https", host: "git.example.com", path: "teammate/repo.git"))
        #expect(!pattern.matches(scheme: "http", host: "git.example.com", path: nil))
        #expect(!pattern.matches(scheme: "https", host: "git.example.com:8443", path: nil))
        #expect(URLPattern("not a url") == nil)
    }

    @Test func profilesAreChosenByPattern() {
        var work = Profile(userPoolID: "us-east-1_A", clientID: "c")
        work.gitURLs = ["https://git.work.example/"]
        work.dockerRegistries = ["registry.work.example:5000"]
        let file = ConfigFile(profiles: ["work": work, "default": Profile(userPoolID: "us-east-1_B", clientID: "d")])
        #expect(file.profile(forGit: "https", host: "git.work.example", path: nil) == "work")
        #expect(file.profile(forGit: "https", host: "github.com", path: nil) == nil)
        #expect(file.profile(forRegistry: "registry.work.example:5000") == "work")
        #expect(file.profile(forRegistry: "registry.work.example") == nil)
    }
}

@Suite struct OutputFormatTests {
    let token = IssuedToken(value: "a.b.c", claims: JWTClaims(exp: 1_795_813_500, iat: 0, username: "alice"))

    @Test func formats() throws {
        let one: [SecretKind: IssuedToken] = [.access: token]
        #expect(TokenOutput.render(.bare, choice: .access, tokens: one) == "a.b.c")
        #expect(TokenOutput.render(.header, choice: .access, tokens: one) == "Authorization: Bearer a.b.c")
        #expect(TokenOutput.render(.json, choice: .access, tokens: one)
            == #"{"expires_at":"2026-11-27T21:05:00Z","token":"a.b.c","token_type":"Bearer"}"#)
        #expect(TokenOutput.shellQuoted("it's") == #"'it'\''s'"#)
    }

    @Test func envSetsWhatExecSetsTheChosenTokenAuthorizing() {
        let id = IssuedToken(value: "i.d.t", claims: JWTClaims(exp: 1_795_813_400, iat: 0, username: "alice"))
        #expect(TokenOutput.kinds(.env, choice: .id) == [.access, .id])
        #expect(TokenOutput.kinds(.json, choice: .id) == [.id])
        let expected = """
            export COG_CRED_ACCESS_TOKEN='a.b.c'
            export COG_CRED_ID_TOKEN='i.d.t'
            export COG_CRED_AUTHORIZATION='Bearer a.b.c'
            export COG_CRED_TOKEN_EXPIRES_AT='2026-11-27T21:03:20Z'
            """
        #expect(TokenOutput.render(.env, choice: .access, tokens: [.access: token, .id: id]) == expected)
        // --id-token: both tokens still set, the ID token in the header, as exec --id-token sets it.
        #expect(TokenOutput.render(.env, choice: .id, tokens: [.access: token, .id: id])
            == expected.replacingOccurrences(of: "'Bearer a.b.c'", with: "'Bearer i.d.t'"))
        #expect(TokenOutput.execVariables(access: token, id: id, authorizing: .id)["COG_CRED_AUTHORIZATION"] == .some("Bearer i.d.t"))
        // No ID token to give: an inherited one is unset, never left standing.
        #expect(TokenOutput.exports(access: token, id: nil) == """
            export COG_CRED_ACCESS_TOKEN='a.b.c'
            unset COG_CRED_ID_TOKEN
            export COG_CRED_AUTHORIZATION='Bearer a.b.c'
            export COG_CRED_TOKEN_EXPIRES_AT='2026-11-27T21:05:00Z'
            """)
        #expect(TokenOutput.execVariables(access: token, id: nil)["COG_CRED_ID_TOKEN"] == .some(nil))
    }

    @Test func execCredentialIsInTheAskedVersion() throws {
        for version in KubernetesExecInfo.APIVersion.allCases {
            let text = TokenOutput.execCredential(token, apiVersion: version)
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
            #expect(object["apiVersion"] as? String == version.rawValue)
            #expect(object["kind"] as? String == "ExecCredential")
            let status = object["status"] as! [String: Any]
            #expect(status["token"] as? String == "a.b.c")
            #expect(status["expirationTimestamp"] as? String == "2026-11-27T21:05:00Z")
        }
    }

    @Test func kubernetesExecInfoAsKubectlSendsIt() {
        #expect(KubernetesExecInfo.parse(nil) == .success(.standalone))
        let v1beta1 = #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":true}}"#
        #expect(KubernetesExecInfo.parse(v1beta1) == .success(KubernetesExecInfo(apiVersion: .v1beta1, interactive: true)))
        let v1 = #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false,"cluster":{"server":"https://k"}}}"#
        #expect(KubernetesExecInfo.parse(v1) == .success(KubernetesExecInfo(apiVersion: .v1, interactive: false)))
        // No spec.interactive: not interactive, the safe reading.
        let bare = #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1"}"#
        #expect(KubernetesExecInfo.parse(bare) == .success(KubernetesExecInfo(apiVersion: .v1, interactive: false)))
        #expect(KubernetesExecInfo.parse("") == .failure(.notJSON))
        #expect(KubernetesExecInfo.parse("[]") == .failure(.notJSON))
        #expect(KubernetesExecInfo.parse(#"{"kind":"Pod","apiVersion":"v1"}"#) == .failure(.notExecCredential))
        #expect(KubernetesExecInfo.parse(#"{"kind":"ExecCredential"}"#) == .failure(.unsupportedVersion("")))
        let alpha = #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1alpha1"}"#
        #expect(KubernetesExecInfo.parse(alpha) == .failure(.unsupportedVersion("client.authentication.k8s.io/v1alpha1")))
        // The caller's text in the refusal stays on one line (found by fuzz-kubernetes-exec-info).
        let forged = #"{"kind":"ExecCredential","apiVersion":"v9\ncog-cred: all is well"}"#
        guard case .failure(let error) = KubernetesExecInfo.parse(forged) else { Issue.record("accepted"); return }
        #expect(!error.message.contains("\n") && error.message.contains("apiVersion v9 cog-cred: all is well;"))
    }

    @Test func registryHostsAreNormalised() {
        #expect(DockerCredential.registryHost("https://Registry.Example.com/v2/") == "registry.example.com")
        #expect(DockerCredential.registryHost("registry.example.com:5000\n") == "registry.example.com:5000")
    }
}
