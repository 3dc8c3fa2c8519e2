import ArgumentParser
import Testing
@testable import CogCredRead
@testable import cog_cred_cli

/// The front (ReadRequest) and cog-cred-cli (ArgumentParser) parse the read
/// commands by one grammar: every argument list the front takes, the CLI
/// takes too, with the same meaning. The lists are made by combining every
/// form of every option each command has, well formed or not.
@Suite struct ReadGrammarTests {
    /// Every way to give (or not give) a profile, after the subcommand.
    static let profiles: [[String]] = [[], ["--profile", "work"], ["-p", "work"], ["-pwork"], ["--profile=work"], ["--profile", "bad name"]]
    static let minTTLs: [[String]] = [
        [], ["--min-ttl", "0"], ["--min-ttl=300"], ["--min-ttl", "43200"], ["--min-ttl", "43201"], ["--min-ttl", "86400"],
        ["--min-ttl", "86401"], ["--min-ttl", "-5"], ["--min-ttl", "soon"], ["--min-ttl"],
    ]
    static let prompts: [[String]] = [[], ["--no-prompt"]]

    /// (program name, words after it) for every combination.
    static func argumentLists() -> [(String, [String])] {
        profiles.flatMap(argumentLists(profile:))
    }

    /// (program name, words after it) for every combination with one way
    /// of giving the profile.
    static func argumentLists(profile: [String]) -> [(String, [String])] {
        var lists: [(String, [String])] = []
        do {
            for minTTL in minTTLs {
                for prompt in prompts {
                    let common = profile + minTTL + prompt
                    for format in [[], ["--format", "json"], ["--format=env"], ["--format", "header"], ["--format", "xml"], ["--json"],
                                   ["--json", "--format", "json"], ["--json", "--format", "env"]] {
                        for id in [[], ["--id-token"]] {
                            lists.append(("cog-cred", ["token"] + common + format + id))
                        }
                    }
                    lists.append(("cog-cred", ["get-header"] + common))
                    lists.append(("cog-cred", ["get-header", "--id-token"] + common))
                    lists.append(("cog-cred", ["kubectl-credential"] + common))
                    lists.append(("cog-cred", ["kubectl-credential", "--id-token"] + common))
                    lists.append(("cog-cred", ["exec"] + common + ["--", "printenv", "--min-ttl"]))
                    lists.append(("cog-cred", ["exec", "--id-token"] + common + ["--", "printenv"]))
                    // The command's own words, flags of ours among them, are passed on as typed.
                    lists.append(("cog-cred", ["exec"] + common + ["--", "printenv", "--id-token", "--no-prompt", "-p", "x"]))
                    lists.append(("cog-cred", ["exec"] + common + ["--"]))
                    lists.append(("cog-cred", ["aws-credentials"] + common))
                    // The profile before the subcommand, as users type it too.
                    lists.append(("cog-cred", profile + ["token"] + minTTL + prompt))
                    lists.append(("cog-cred", ["token"] + minTTL + ["--debug"] + profile + prompt))
                }
            }
            for action in ["get", "store", "list"] {
                lists.append(("cog-cred", ["git-credential"] + profile + [action]))
                lists.append(("git-credential-cog-cred", profile + [action]))
                lists.append(("/usr/bin/docker-credential-cog-cred", profile + [action]))
                lists.append(("cog-cred", ["docker-credential", action] + profile))
            }
        }
        return lists
    }

    // One case per way of giving the profile, so the cases (thousands of
    // parses by ArgumentParser in a debug build) share the cores.
    @Test(arguments: profiles)
    func everyReadTheFrontTakesTheCommandLineTakesAlike(profile: [String]) throws {
        for (name, words) in Self.argumentLists(profile: profile) {
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

    /// The combinations reach every kind of read, and many reads in all.
    @Test func theCombinationsReachEveryRead() {
        let accepted = Self.argumentLists().compactMap { ReadRequest.parse([$0.0] + $0.1) }
        #expect(accepted.count > 300)
        for command in ["token", "get-header", "kubectl-credential", "exec", "aws-credentials", "git-credential", "docker-credential"] {
            #expect(accepted.contains { Self.meaning(of: $0).command == command }, "\(command)")
        }
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
        case .gitGet(let profile): return Meaning(command: "git-credential", profile: profile, arguments: ["get"])
        case .dockerGet: return Meaning(command: "docker-credential", arguments: ["get"])
        case .dockerList: return Meaning(command: "docker-credential", arguments: ["list"])
        }
    }

    static func meaning(of command: ParsableCommand) -> Meaning {
        switch command {
        case let token as Token:
            return Meaning(
                command: "token", profile: token.profileOptions.profile, minTTL: token.freshness.minTTL, idToken: token.idToken,
                format: token.json ? "json" : token.format ?? "bare")
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
        default:
            return Meaning(command: "\(type(of: command))")
        }
    }
}
