import ArgumentParser
import Testing
@testable import CogCredRead
@testable import cog_cred_cli

/// The front (ReadRequest) and cog-cred-cli (ArgumentParser) parse the read
/// commands by one grammar: every argument list the front takes, the CLI
/// takes too, with the same meaning. The lists combine the forms, well
/// formed or not, of the options each command has, so that every form of
/// an option meets every form of every other option in some list (all
/// pairs). Every combination (3,300 lists) cost more than a minute of CPU:
/// a debug build's ArgumentParser validates its commands at each parse.
@Suite struct ReadGrammarTests {
    /// Every way to give (or not give) a profile, after the subcommand.
    static let profiles: [[String]] = [[], ["--profile", "work"], ["-p", "work"], ["-pwork"], ["--profile=work"], ["--profile", "bad name"]]
    static let minTTLs: [[String]] = [
        [], ["--min-ttl", "0"], ["--min-ttl=300"], ["--min-ttl", "43200"], ["--min-ttl", "43201"], ["--min-ttl", "86400"],
        ["--min-ttl", "86401"], ["--min-ttl", "-5"], ["--min-ttl", "soon"], ["--min-ttl"],
    ]
    static let prompts: [[String]] = [[], ["--no-prompt"]]
    static let formats: [[String]] = [
        [], ["--format", "json"], ["--format=env"], ["--format", "header"], ["--format", "xml"], ["--json"],
        ["--json", "--format", "json"], ["--json", "--format", "env"],
    ]
    static let idTokens: [[String]] = [[], ["--id-token"]]
    static let jsons: [[String]] = [[], ["--json"], ["--json", "--json"]]
    static let statusFlags: [[String]] = [[], ["--offline"], ["--verify"], ["--offline", "--verify"], ["--offline", "--offline"]]
    static let scopes: [[String]] = [[], ["--global"], ["--local"], ["--global", "--local"], ["--local", "--local"]]
    static let commands = [
        "token", "get-header", "kubectl-credential", "exec", "aws-credentials", "git-credential", "docker-credential",
        // Answered by the front through an agent.
        "whoami", "status", "refresh", "sign-out",
    ]

    /// (program name, words after it) for every list.
    static func argumentLists() -> [(String, [String])] {
        commands.flatMap(argumentLists(command:))
    }

    /// (program name, words after it) for one read command's lists.
    static func argumentLists(command: String) -> [(String, [String])] {
        var lists: [(String, [String])] = []
        // The options every read but the helpers' has, their forms paired.
        for row in allPairs([profiles.count, minTTLs.count, prompts.count]) {
            let profile = profiles[row[0]], minTTL = minTTLs[row[1]], prompt = prompts[row[2]]
            let options: [String] = profile + minTTL + prompt
            switch command {
            case "token":
                // The profile before the subcommand, as users type it too.
                lists.append(("cog-cred", profile + ["token"] + minTTL + prompt))
                lists.append(("cog-cred", ["token"] + minTTL + ["--debug"] + profile + prompt))
            case "get-header", "kubectl-credential":
                lists.append(("cog-cred", [command] + options))
                lists.append(("cog-cred", [command, "--id-token"] + options))
            case "exec":
                lists.append(("cog-cred", ["exec"] + options + ["--", "printenv", "--min-ttl"]))
                lists.append(("cog-cred", ["exec", "--id-token"] + options + ["--", "printenv"]))
                // The command's own words, flags of ours among them, are passed on as typed.
                lists.append(("cog-cred", ["exec"] + options + ["--", "printenv", "--id-token", "--no-prompt", "-p", "x"]))
                lists.append(("cog-cred", ["exec"] + options + ["--"]))
            case "aws-credentials":
                lists.append(("cog-cred", ["aws-credentials"] + options))
            default: break
            }
        }
        if command == "token" {
            for row in allPairs([profiles.count, minTTLs.count, prompts.count, formats.count, idTokens.count]) {
                let options: [String] = profiles[row[0]] + minTTLs[row[1]] + prompts[row[2]]
                lists.append(("cog-cred", ["token"] + options + formats[row[3]] + idTokens[row[4]]))
            }
        }
        switch command {
        case "whoami":
            for row in allPairs([profiles.count, prompts.count, jsons.count]) {
                lists.append(("cog-cred", ["whoami"] + profiles[row[0]] + prompts[row[1]] + jsons[row[2]]))
            }
        case "status":
            for row in allPairs([profiles.count, prompts.count, jsons.count, statusFlags.count]) {
                lists.append(("cog-cred", ["status"] + statusFlags[row[3]] + profiles[row[0]] + prompts[row[1]] + jsons[row[2]]))
            }
        case "refresh":
            for row in allPairs([profiles.count, prompts.count]) {
                lists.append(("cog-cred", profiles[row[0]] + ["refresh"] + prompts[row[1]]))
            }
        case "sign-out":
            let answers = [[], ["--yes"], ["--yes", "--yes"]]
            for row in allPairs([profiles.count, prompts.count, scopes.count, answers.count]) {
                for name in ["sign-out", "logout"] {
                    lists.append(("cog-cred", [name] + scopes[row[2]] + profiles[row[0]] + answers[row[3]] + prompts[row[1]]))
                }
            }
        default: break
        }
        for profile in profiles {
            for action in ["get", "store", "erase", "capability", "list"] {
                switch command {
                case "git-credential":
                    lists.append(("cog-cred", ["git-credential"] + profile + [action]))
                    lists.append(("git-credential-cog-cred", profile + [action]))
                case "docker-credential":
                    lists.append(("/usr/bin/docker-credential-cog-cred", profile + [action]))
                    lists.append(("cog-cred", ["docker-credential", action] + profile))
                default: break
                }
            }
        }
        return lists
    }

    /// Rows of form indices, one per option (`counts` forms each), in which
    /// every form of an option meets every form of every other option at
    /// least once: a pairwise covering array, built greedily. Each row
    /// starts from the first pair still to meet and fills the other options
    /// with the forms that meet the most new pairs.
    static func allPairs(_ counts: [Int]) -> [[Int]] {
        struct Pair: Hashable { var option: Int, form: Int, other: Int, otherForm: Int }
        var unmet: [Pair] = []
        for option in counts.indices {
            for other in counts.indices where other > option {
                for form in 0..<counts[option] {
                    for otherForm in 0..<counts[other] { unmet.append(Pair(option: option, form: form, other: other, otherForm: otherForm)) }
                }
            }
        }
        var rows: [[Int]] = []
        while let first = unmet.first {
            var row = [Int?](repeating: nil, count: counts.count)
            row[first.option] = first.form
            row[first.other] = first.otherForm
            for option in counts.indices where row[option] == nil {
                func newPairs(_ form: Int) -> Int {
                    row.indices.filter { other in
                        guard let otherForm = row[other] else { return false }
                        let pair = other < option
                            ? Pair(option: other, form: otherForm, other: option, otherForm: form)
                            : Pair(option: option, form: form, other: other, otherForm: otherForm)
                        return unmet.contains(pair)
                    }.count
                }
                var best = 0
                for form in 1..<max(counts[option], 1) where newPairs(form) > newPairs(best) { best = form }
                row[option] = best
            }
            let filled = row.map { $0 ?? 0 }
            unmet.removeAll { filled[$0.option] == $0.form && filled[$0.other] == $0.otherForm }
            rows.append(filled)
        }
        return rows
    }

    // One case per read command, so the cases (a thousand parses by
    // ArgumentParser in a debug build) share the cores.
    @Test(arguments: commands)
    func everyReadTheFrontTakesTheCommandLineTakesAlike(command: String) throws {
        for (name, words) in Self.argumentLists(command: command) {
            let arguments = [name] + words
            guard let request = ReadRequest.parse(arguments) else { continue }
            let parsed: ParsableCommand
            do {
                parsed = try CogCredCommand.parseAsRoot(ReadRequest.commandWords(arguments))
            } catch {
                Issue.record("the front takes \(arguments), the command line refuses it: \(error)")
                continue
            }
            #expect(Self.meaning(of: parsed) == Self.meaning(of: request), "\(arguments)")
        }
    }

    /// The lists reach every kind of read, and many reads in all.
    @Test func theListsReachEveryRead() {
        let accepted = Self.argumentLists().compactMap { ReadRequest.parse([$0.0] + $0.1) }
        #expect(accepted.count > 300)
        for command in Self.commands {
            #expect(accepted.contains { Self.meaning(of: $0).command == command }, "\(command)")
        }
    }

    /// Every form of an option meets every form of every other option, in
    /// fewer rows than every combination, and each row is one form per option.
    @Test(arguments: [[6, 10, 2], [6, 10, 2, 8, 2], [3, 3, 3, 3], [1, 4]])
    func allPairsMeetEveryPairOfForms(counts: [Int]) {
        let rows = Self.allPairs(counts)
        for row in rows {
            #expect(row.count == counts.count && zip(row, counts).allSatisfy { (0..<$1).contains($0) }, "\(row)")
        }
        for option in counts.indices {
            for other in counts.indices where other > option {
                for form in 0..<counts[option] {
                    for otherForm in 0..<counts[other] {
                        #expect(rows.contains { $0[option] == form && $0[other] == otherForm }, "\(option)=\(form), \(other)=\(otherForm)")
                    }
                }
            }
        }
        #expect(rows.count <= counts.reduce(1, *))
        #expect(Set(rows).count == rows.count)
    }

    /// The bounds and names both parsers take from ReadRequest.
    @Test func theBoundsAreTheFrontsBounds() throws {
        for (command, range) in [("token", ReadRequest.tokenMinTTL), ("aws-credentials", ReadRequest.awsMinTTL)] {
            for seconds in [range.lowerBound, range.upperBound] {
                _ = try CogCredCommand.parseAsRoot([command, "--min-ttl", "\(seconds)"])
                #expect(ReadRequest.parse(["cog-cred", command, "--min-ttl", "\(seconds)"]) != nil)
            }
            for seconds in [range.lowerBound - 1, range.upperBound + 1] {
                #expect(throws: (any Error).self) { try CogCredCommand.parseAsRoot([command, "--min-ttl", "\(seconds)"]) }
                #expect(ReadRequest.parse(["cog-cred", command, "--min-ttl", "\(seconds)"]) == nil)
            }
        }
    }

    /// What a read asks for, in words both parsers' results can be put in.
    struct Meaning: Equatable {
        var command: String
        var profile: String?
        var minTTL: Int64?
        var idToken = false
        var format: String? = nil
        var arguments: [String] = []
        /// The session commands' flags, as typed once.
        var flags: [String] = []
    }

    static func meaning(of request: ReadRequest) -> Meaning {
        switch request {
        case .token(let token):
            let id = token.choice == .id
            switch token.shape {
            case .token(let format):
                return Meaning(command: "token", profile: token.profile, minTTL: token.minTTL, idToken: id, format: format.rawValue)
            case .header: return Meaning(command: "get-header", profile: token.profile, minTTL: token.minTTL, idToken: id)
            case .execCredential: return Meaning(command: "kubectl-credential", profile: token.profile, minTTL: token.minTTL, idToken: id)
            }
        case .exec(let profile, let minTTL, let choice, let command):
            return Meaning(command: "exec", profile: profile, minTTL: minTTL, idToken: choice == .id, arguments: command)
        case .awsCredentials(let profile, let minTTL):
            return Meaning(command: "aws-credentials", profile: profile, minTTL: minTTL)
        case .git(let action, let profile): return Meaning(command: "git-credential", profile: profile, arguments: [action.rawValue])
        case .whoami(let profile, let json): return Meaning(command: "whoami", profile: profile, flags: json ? ["--json"] : [])
        case .status(let profile, let json, let offline):
            return Meaning(command: "status", profile: profile, flags: (json ? ["--json"] : []) + (offline ? ["--offline"] : []))
        case .refresh(let profile): return Meaning(command: "refresh", profile: profile)
        case .signOut(let profile, let scope, let confirmed):
            let flags = (scope == .revoke ? [] : ["--\(scope == .global ? "global" : "local")"]) + (confirmed ? ["--yes"] : [])
            return Meaning(command: "sign-out", profile: profile, flags: flags)
        case .dockerGet: return Meaning(command: "docker-credential", arguments: ["get"])
        case .dockerList: return Meaning(command: "docker-credential", arguments: ["list"])
        }
    }

    static func meaning(of command: ParsableCommand) -> Meaning {
        switch command {
        case let token as Token:
            return Meaning(
                command: "token", profile: token.profileOptions.profile, minTTL: token.freshness.minTTL, idToken: token.idToken,
                format: token.output.json ? "json" : token.format?.rawValue ?? "bare")
        case let header as GetHeader:
            return Meaning(command: "get-header", profile: header.profileOptions.profile, minTTL: header.freshness.minTTL, idToken: header.idToken)
        case let kubectl as KubectlCredential:
            return Meaning(
                command: "kubectl-credential", profile: kubectl.profileOptions.profile, minTTL: kubectl.freshness.minTTL,
                idToken: kubectl.idToken)
        case let exec as Exec:
            return Meaning(
                command: "exec", profile: exec.profileOptions.profile, minTTL: exec.freshness.minTTL, idToken: exec.idToken, arguments: exec.command)
        case let aws as AWSCredentialsCommand:
            return Meaning(command: "aws-credentials", profile: aws.profileOptions.profile, minTTL: aws.freshness.minTTL)
        case let git as GitCredentialCommand:
            return Meaning(command: "git-credential", profile: git.profile, arguments: [git.action])
        case let docker as DockerCredentialCommand:
            return Meaning(command: "docker-credential", arguments: [docker.action])
        case let whoami as Whoami:
            return Meaning(command: "whoami", profile: whoami.profileOptions.profile, flags: whoami.output.json ? ["--json"] : [])
        case let status as Status:
            let flags = (status.output.json ? ["--json"] : []) + (status.offline ? ["--offline"] : []) + (status.verify ? ["--verify"] : [])
            return Meaning(command: "status", profile: status.profileOptions.profile, flags: flags)
        case let refresh as Refresh:
            return Meaning(command: "refresh", profile: refresh.profileOptions.profile)
        case let signOut as SignOut:
            let flags = (signOut.global ? ["--global"] : []) + (signOut.local ? ["--local"] : []) + (signOut.confirmation.yes ? ["--yes"] : [])
            return Meaning(command: "sign-out", profile: signOut.profileOptions.profile, flags: flags)
        default:
            return Meaning(command: "\(type(of: command))")
        }
    }
}
