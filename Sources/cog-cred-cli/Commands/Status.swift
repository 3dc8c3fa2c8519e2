import ArgumentParser
import CogCredWrite

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct Status: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        abstract: "Show whether the profile is signed in, as whom, and when its tokens expire.",
        discussion: """
            Never prints a token. What is stored cannot tell whether the session still \
            stands (a sign-out everywhere from another machine leaves it as it was), so \
            status asks Cognito with one call: GetUser when the access token carries the \
            aws.cognito.signin.user.admin scope, the managed login's userInfo when it \
            carries openid, else a refresh (which stores the new tokens). A machine \
            profile has no session to ask about. Exits 0 when the session stands, 77 when \
            not signed in or Cognito refused the session (sign in again; the stored items \
            stay as they are), 75 when Cognito could not be asked. --offline shows what \
            is stored without asking (0 when signed in, 77 when not).

            --verify fetches the pool's signing keys (JWKS) from the endpoint in use and \
            checks each stored token's RS256 signature, issuer (the endpoint's own pool \
            URL), token_use, client and expiry; it exits 77 when any check fails or no \
            token could be checked.
            """)
    static let examples = [
        "cog-cred status",
        "cog-cred status --profile work --json",
        "cog-cred status --verify",
        "cog-cred status --offline",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    @OptionGroup var output: OutputOptions

    @Flag(help: "Verify the stored tokens against the pool's published keys.")
    var verify = false

    @Flag(help: "Show what is stored without asking Cognito whether the session still stands.")
    var offline = false

    func validate() throws {
        if offline && verify { throw ValidationError("--offline and --verify cannot be used together (--verify fetches the pool's keys)") }
    }

    func run() throws {
        let wiring = Wiring(profileOptions)
        let manager = try wiring.tokenManager()
        let report: StatusReport
        do {
            report = try manager.status(verifying: verify ? { try wiring.poolKeySource(manager.profile) } : nil)
        } catch let failure as SecretServiceError where failure == .locked || failure == .unlockDeclined {
            // The report still shows what can be known, and that the keyring
            // is locked, for people and scripts; then the keyring's 69.
            let path = NetworkPath(profile: manager.profile, environment: wiring.environment)
            let locked = StatusWords.lockedKeyring(profile: try wiring.profileName(), manager.profile)
            if output.json {
                Output.json(.object(locked.json.merging(Status.json(path, checks: nil), uniquingKeysWith: { $1 })))
            } else {
                for line in locked.lines + Status.text(path) { Output.data(line) }
            }
            throw failure
        }
        let check = report.session.signedIn && !offline ? try manager.checkSession().outcome { ErrorWording.line($0) } : nil
        // With an agent, the agent asks Cognito, with its own environment's
        // proxy and FIPS settings, not this shell's.
        let agent = wiring.agent?.connection.path
        let words = StatusWords(report.session, manager.profile, check: check, offline: offline, agent: agent)
        let path = agent == nil ? NetworkPath(profile: manager.profile, environment: wiring.environment) : nil
        if output.json {
            Output.json(.object(words.json.merging(Status.json(path, checks: report.checks), uniquingKeysWith: { $1 })))
        } else {
            for line in words.lines + Status.text(path) { Output.data(line) }
            for (kind, list) in report.checks ?? [] {
                for check in list {
                    Output.data("verify \(kind.rawValue):".padding(16) + "\(check.passed ? "ok  " : "FAIL") \(check.name): \(check.detail.oneLine())")
                }
            }
        }
        // What --verify found first: asked for, and more precise than a
        // refusal of the same forged or foreign token.
        if let failure = report.verificationFailure { throw failure }
        if let failure = words.failure { throw failure }
        if !words.session.signedIn { throw ExitCode(ExitStatus.notAuthenticated) }
    }
}

extension Status {
    /// The `endpoint:` and `network:` lines: where this machine's requests
    /// go and how (none through an agent: StatusWords names it).
    static func text(_ path: NetworkPath?) -> [String] {
        guard let path else { return [] }
        guard let endpoint = path.endpoint else {
            return ["endpoint:      not usable: \(path.problem.map { ErrorWording.line($0) } ?? "unknown")"]
        }
        let source = endpoint.variable.map { " (from \($0))" } ?? (endpoint.fips ? " (FIPS)" : "")
        var lines = ["endpoint:      \(LibcurlURL.shown(endpoint.url).oneLine(limit: 200))\(source)"]
        if let route = path.route {
            lines.append("network:       \(route.described)")
        } else if let problem = path.problem {
            lines.append("network:       not usable: \(ErrorWording.line(problem))")
        }
        lines.append("ca bundle:     \(path.caBundle.described.oneLine(limit: 300))")
        return lines
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self + " " : self + String(repeating: " ", count: width - count) }
}

extension Status {
    /// What `status --json` adds to StatusWords.json: where this machine's
    /// requests go (NetworkPath: the URL without credentials, the variable
    /// that set it, FIPS; the proxy, never its user name or password; why
    /// there is none; the CA bundle HTTPS trusts, null for the system's, and
    /// what chose it: "AWS_CA_BUNDLE", "profile" or "system"), and
    /// `--verify`'s checks.
    static func json(_ path: NetworkPath?, checks: [(kind: SecretKind, checks: [VerificationCheck])]?) -> [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        if let endpoint = path?.endpoint {
            members["endpoint"] = .string(LibcurlURL.shown(endpoint.url))
            members["endpoint_from"] = endpoint.variable.map { .string($0) }
            members["fips"] = .bool(endpoint.fips)
        }
        if let proxy = path?.route?.proxy {
            members["proxy"] = .string(proxy.shown)
            members["proxy_from"] = .string(proxy.variable)
        }
        members["network_problem"] = path?.problem.map { .string(ErrorWording.line($0)) }
        if let bundle = path?.caBundle {
            members["ca_bundle"] = bundle.path.map { .string($0) } ?? .null
            members["ca_bundle_from"] = .string(bundle.source.rawValue)
        }
        members["verification"] = checks.map { list in
            .object(list.reduce(into: [:]) { byKind, entry in
                byKind[entry.kind.rawValue] = .array(entry.checks.map { check in
                    .object(["check": .string(check.name), "passed": .bool(check.passed), "detail": .string(check.detail)])
                })
            })
        }
        return members
    }
}
