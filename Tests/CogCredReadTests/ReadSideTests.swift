import Testing
import CogCredTestSupport

@testable import CogCredRead

/// The front binary's command line: only what cog-cred-cli would accept,
/// exactly; anything else is nil and goes to cog-cred-cli.
@Suite struct ReadRequestTests {
    func parse(_ words: String, as name: String = "/usr/bin/cog-cred") -> ReadRequest? {
        ReadRequest.parse([name] + words.split(separator: " ").map(String.init))
    }

    @Test func recognisesEveryReadPath() {
        #expect(parse("token") == .token(.init(shape: .token(.bare), choice: .access, profile: nil, minTTL: nil)))
        #expect(parse("token --id-token --format json --profile work --min-ttl 300")
            == .token(.init(shape: .token(.json), choice: .id, profile: "work", minTTL: 300)))
        #expect(parse("token --format=env --profile=w") == .token(.init(shape: .token(.env), choice: .access, profile: "w", minTTL: nil)))
        #expect(parse("get-header") == .token(.init(shape: .header, choice: .access, profile: nil, minTTL: nil)))
        #expect(parse("kubectl-credential --id-token") == .token(.init(shape: .execCredential(nil), choice: .id, profile: nil, minTTL: nil)))
        #expect(parse("exec --profile p -- curl -H x --profile y") == .exec(profile: "p", minTTL: nil, choice: .access, command: ["curl", "-H", "x", "--profile", "y"]))
        #expect(parse("exec --id-token -- env") == .exec(profile: nil, minTTL: nil, choice: .id, command: ["env"]))
        #expect(parse("get-header --id-token") == .token(.init(shape: .header, choice: .id, profile: nil, minTTL: nil)))
        #expect(parse("token --json") == .token(.init(shape: .token(.json), choice: .access, profile: nil, minTTL: nil)))
        #expect(parse("token --json --format json") == .token(.init(shape: .token(.json), choice: .access, profile: nil, minTTL: nil)))
        // Contradictions are cog-cred-cli's to word.
        #expect(parse("token --json --format env") == nil)
        #expect(parse("token --json --json") == nil)
        #expect(parse("git-credential get") == .git(.get, profile: nil))
        #expect(parse("git-credential --profile p get") == .git(.get, profile: "p"))
        #expect(parse("get", as: "/x/git-credential-cog-cred") == .git(.get, profile: nil))
        #expect(parse("get", as: "docker-credential-cog-cred") == .dockerGet)
        #expect(parse("docker-credential list") == .dockerList)
        // The profile before the subcommand, as aws and gh take it, and -p.
        let work = ReadRequest.token(.init(shape: .token(.bare), choice: .access, profile: "work", minTTL: nil))
        for words in ["--profile work token", "-p work token", "--profile=work token", "token -p work"] {
            #expect(parse(words) == work, "\(words)")
        }
        #expect(parse("-p w git-credential get") == .git(.get, profile: "w"))
        #expect(parse("-p w get", as: "git-credential-cog-cred") == .git(.get, profile: "w"))
        #expect(parse("git-credential store") == .git(.store, profile: nil))
        #expect(parse("git-credential erase") == .git(.erase, profile: nil))
        // Through an agent, the session's other commands.
        #expect(parse("whoami --json -p w") == .whoami(profile: "w", json: true))
        #expect(parse("status --offline --no-prompt") == .status(profile: nil, json: false, offline: true))
        #expect(parse("status --verify") == nil)  // fetches the pool's keys: cog-cred-cli's
        #expect(parse("refresh --profile=w") == .refresh(profile: "w"))
        #expect(parse("logout --global") == .signOut(profile: nil, scope: .global, confirmed: false))
        #expect(parse("sign-out --local -p w") == .signOut(profile: "w", scope: .local, confirmed: false))
        #expect(parse("sign-out") == .signOut(profile: nil, scope: .revoke, confirmed: false))
        #expect(parse("sign-out --yes --global") == .signOut(profile: nil, scope: .global, confirmed: true))
        #expect(parse("sign-out --yes --yes") == nil)
        #expect(parse("sign-out --local --global") == nil)
        #expect(ReadRequest.signOut(profile: nil, scope: .revoke, confirmed: false).needsAgent && !ReadRequest.dockerList.needsAgent)
    }

    @Test func theArgumentsAreReadAsTheStandardLibraryReadsThem() {
        #expect(CommandLineWords.ofThisProcess() == CommandLine.arguments)
        #expect(!CommandLineWords.ofThisProcess().isEmpty)
    }

    @Test func theProfileMovesAfterTheCommandWordsFromAnywhereAndNothingElseDoes() {
        let move = { (words: [String]) in CommandLineWords.profileAfterCommand(words) }
        #expect(move(["--profile", "w", "token", "--id-token"]) == ["token", "--profile", "w", "--id-token"])
        #expect(move(["-p", "w", "--profile=x", "status"]) == ["status", "-p", "w", "--profile=x"])
        #expect(move(["--help", "token"]) == ["--help", "token"])
        #expect(move(["--profile", "w"]) == ["--profile", "w"])
        #expect(move(["--profile", "w", "--version"]) == ["--profile", "w", "--version"])
        #expect(move(["token", "--profile", "w"]) == ["token", "--profile", "w"])
        // After another option, before the command: still moved.
        #expect(move(["--debug", "-p", "w", "token"]) == ["--debug", "token", "-p", "w"])
        // A value-less --profile at the end is left for the parser to refuse.
        #expect(move(["token", "--profile"]) == ["token", "--profile"])
        // exec's command keeps its own -p.
        #expect(move(["exec", "--", "grep", "-p", "x"]) == ["exec", "--", "grep", "-p", "x"])
        #expect(move(["-p", "w", "exec", "--", "grep", "-p", "x"]) == ["exec", "-p", "w", "--", "grep", "-p", "x"])
    }

    @Test func theProfileMovesAfterANestedCommandsWords() {
        let groups = ["passkey": ["list", "add"], "mfa": ["enable", "show"]]
        let move = { (words: [String]) in
            CommandLineWords.profileAfterCommand(words) { path, word in path.count == 1 && groups[path[0]]?.contains(word) == true }
        }
        #expect(move(["-p", "w", "passkey", "list"]) == ["passkey", "list", "-p", "w"])
        #expect(move(["passkey", "--profile=w", "list", "--json"]) == ["passkey", "list", "--profile=w", "--json"])
        #expect(move(["mfa", "enable", "-p", "w", "totp"]) == ["mfa", "enable", "-p", "w", "totp"])
        #expect(move(["-p", "w", "mfa", "enable", "totp"]) == ["mfa", "enable", "-p", "w", "totp"])
        // A group named alone keeps the options after it (its default subcommand takes them).
        #expect(move(["-p", "w", "mfa"]) == ["mfa", "-p", "w"])
        // Without the tree (the front), only the first word is the command's.
        #expect(CommandLineWords.profileAfterCommand(["-p", "w", "passkey", "list"]) == ["passkey", "-p", "w", "list"])
    }

    @Test func aJoinedShortProfileIsSplitBeforeTheTerminatorOnly() {
        let normalized = { (words: [String]) in CommandLineWords.normalized(words) }
        #expect(normalized(["-pwork", "token"]) == ["token", "-p", "work"])
        #expect(normalized(["git-credential", "-pwork", "get"]) == ["git-credential", "-p", "work", "get"])
        #expect(normalized(["exec", "-pw", "--", "grep", "-pattern"]) == ["exec", "-p", "w", "--", "grep", "-pattern"])
        #expect(normalized(["-p", "w", "status"]) == ["status", "-p", "w"])
        #expect(normalized(["token", "-p"]) == ["token", "-p"])
        #expect(parse("-pwork token") == .token(.init(shape: .token(.bare), choice: .access, profile: "work", minTTL: nil)))
        #expect(parse("git-credential -pwork get") == .git(.get, profile: "work"))
    }

    @Test func aNearMissIsNamedAndAStrangerIsNot() {
        #expect(NearMiss.closest(to: "wrok", in: ["default", "work"]) == "work")
        #expect(NearMiss.closest(to: "--passwrod-stdin", in: ["--password-stdin", "--profile"]) == "--password-stdin")
        #expect(NearMiss.closest(to: "prod", in: ["default", "work"]) == nil)
        #expect(NearMiss.closest(to: "ab", in: ["xy"]) == nil)  // two edits of two letters: a stranger
        #expect(NearMiss.closest(to: "work", in: ["work"]) == nil)
    }

    @Test(arguments: [
        "", "--help", "token --help", "token -h", "tokn", "token --bogus", "token --format yaml", "token --min-ttl -5",
        "token --min-ttl 86401", "token --min-ttl x", "token --profile", "token --profile bad/name", "token --profile a --profile b",
        "token --id-token --id-token", "get-header --id-token --id-token", "get-header --format json", "exec", "exec --", "exec true",
        "git-credential forget", "git-credential", "docker-credential store", "docker-credential get extra", "refresh extra",
        "status --verify", "whoami --bogus", "sign-in", "--profile p status --json --json", "--profile p tokn", "token extra",
        "-p a token --profile b", "--profile", "-p p", "token -p", "version", "--version", "version extra", "-p work version",
        "setup-docker registry.example.com",
    ])
    func handsOverAnythingElse(_ words: String) {
        #expect(parse(words) == nil, "\(words)")
    }

    @Test func aFirstLookNamesTheSameCommands() {
        #expect(ReadRequest.mayBeRead(["cog-cred", "token"]))
        #expect(ReadRequest.mayBeRead(["/bin/git-credential-cog-cred", "get"]))
        #expect(!ReadRequest.mayBeRead(["cog-cred", "status"]))
        #expect(!ReadRequest.mayBeRead(["cog-cred"]))
        #expect(ReadRequest.mayBeRead(["cog-cred", "--profile", "w", "exec", "--", "true"]))
        #expect(!ReadRequest.mayBeRead(["cog-cred", "-p", "w", "sign-in"]))
    }

    /// The name git and docker run the helpers by, from argv[0] as given.
    @Test func takesTheProgramNameFromAnyPath() {
        #expect(ReadRequest.baseName("/usr/bin/git-credential-cog-cred") == "git-credential-cog-cred")
        #expect(ReadRequest.baseName("docker-credential-cog-cred") == "docker-credential-cog-cred")
        #expect(ReadRequest.baseName("./bin//cog-cred/") == "cog-cred")
        #expect(ReadRequest.baseName("/") == "/")
        #expect(ReadRequest.baseName("") == "")
    }
}

@Suite struct JSONValueTests {
    @Test func parsesStrictJSONOnly() {
        #expect(JSONValue.parse(Array(#" {"a": [1, 2.5, "x", true, null]} "#.utf8))
            == .object(["a": .array([.int(1), .double(2.5), .string("x"), .bool(true), .null])]))
        #expect(JSONValue.parse(Array("null".utf8)) == .null)
        #expect(JSONValue.parse(Array("1".utf8)) == .int(1))
        #expect(JSONValue.parse([0x22, 0xFF, 0x22]) == nil)  // not UTF-8
        for bad in ["", "{", "{\"a\":1} x", "[1,]", "{\"a\":1,}", "01", "nul", "{\"a\":1}{}", "/* c */ 1"] {
            #expect(JSONValue.parse(Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    @Test func printsSortedCompactAndKeepsSlashesAndNULs() {
        let value = JSONValue.object(["b": .string("https://x/y"), "a": .int(1), "c": .string("nul\u{0}here\n\"q\"")])
        #expect(value.compactText == #"{"a":1,"b":"https://x/y","c":"nul\u0000here\n\"q\""}"#)
        #expect(JSONValue.parse(Array(value.compactText.utf8)) == value)
    }
}

@Suite struct BusAddressTests {
    @Test func plainSessionsOnlyWhenEveryAddressIsAUnixSocket() {
        #expect(BusAddress("unix:path=/run/user/1/bus").isLocalOnly)
        #expect(BusAddress("unix:abstract=/tmp/x,guid=1;unix:path=/y").isLocalOnly)
        #expect(!BusAddress("unix:path=/y;tcp:host=127.0.0.1,port=1").isLocalOnly)
        #expect(!BusAddress("tcp:host=localhost,port=1").isLocalOnly)
        #expect(!BusAddress("").isLocalOnly)
        // Empty entries are skipped, as D-Bus does; a cut-off or other prefix is not Unix.
        #expect(BusAddress(";unix:path=/a;;unix:path=/b;").isLocalOnly)
        #expect(!BusAddress(";").isLocalOnly)
        #expect(!BusAddress("unix").isLocalOnly)
        #expect(!BusAddress("unix:path=/a;unix").isLocalOnly)
        #expect(!BusAddress("unix:path=/a;;tcp:host=x,port=1").isLocalOnly)
        #expect(!BusAddress("unixexec:path=/bin/x").isLocalOnly)
        #expect(!BusAddress("UNIX:path=/a").isLocalOnly)
    }

    @Test func neverAutolaunches() {
        #expect(throws: SecretServiceError.noSessionBus) {
            try BusAddress.session(environment: { $0 == "DBUS_SESSION_BUS_ADDRESS" ? "autolaunch:" : nil })
        }
        #expect(throws: SecretServiceError.noSessionBus) { try BusAddress.session(environment: { _ in nil }) }
    }
}

/// The byte-for-byte search the read side uses in place of _StringProcessing's.
@Suite struct ByteSearchTests {
    @Test func findsTheFirstOccurrence() throws {
        let url = "https://git.example.com/a://b"
        let range = try #require(url.firstByteRange(of: "://"))
        #expect(url[..<range.lowerBound] == "https")
        #expect(url[range.upperBound...] == "git.example.com/a://b")
        #expect("é://x".firstByteRange(of: "://").map { "é://x"[$0.upperBound...] } == "x")
        #expect("abc".firstByteRange(of: "abc") == "abc".startIndex..<"abc".endIndex)
        #expect("ab".firstByteRange(of: "") == "ab".startIndex..<"ab".startIndex)
    }

    @Test func reportsAbsence() {
        #expect("https:/host".firstByteRange(of: "://") == nil)
        #expect("ab".firstByteRange(of: "abc") == nil)
        #expect("".firstByteRange(of: "a") == nil)
        #expect("xx:/".firstByteRange(of: "://") == nil)
        #expect(!"arn:aws:sts::1:role/x".containsBytes(":iam::"))
        #expect("arn:aws:iam::1:role/x".containsBytes(":iam::") && "arn:aws:iam::1:role/x".containsBytes(":role/"))
    }
}
