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

    @Flag(help: "Print a JSON object instead of text.")
    var json = false

    @Flag(help: "Verify the stored tokens against the pool's published keys.")
    var verify = false

    @Flag(help: "Show what is stored without asking Cognito whether the session still stands.")
    var offline = false

    func validate() throws {
        if offline && verify { throw ValidationError("--offline and --verify cannot be used together (--verify fetches the pool's keys)") }
    }

    func run() throws {
        let wiring = Wiring()
        let manager = try wiring.tokenManager(profileOptions)
        var report = try manager.status(verifying: verify ? { try wiring.poolKeySource(manager.profile) } : nil)
        let check = report.session.signedIn && !offline ? try manager.checkSession() : nil
        if case .refused = check { report.session.signedIn = false }
        // With an agent, the agent asks Cognito, with its own environment's
        // proxy and FIPS settings, not this shell's.
        let agent = wiring.agent?.connection.path
        let path = agent == nil ? NetworkPath(profile: manager.profile, environment: wiring.environment) : nil
        if json {
            Output.data(StatusJSON(report, manager.profile, check: check, path: path, agent: agent).encoded())
        } else {
            for line in text(report.session, manager.profile, check: check) + Status.text(path, agent: agent) { Output.data(line) }
            for (kind, list) in report.checks ?? [] {
                for check in list {
                    Output.data("verify \(kind.rawValue):".padding(16) + "\(check.passed ? "ok  " : "FAIL") \(check.name): \(check.detail.oneLine())")
                }
            }
        }
        // What --verify found first: asked for, and more precise than a
        // refusal of the same forged or foreign token.
        if let failure = report.verificationFailure { throw failure }
        switch check {
        case .refused(let failure): throw failure
        case .couldNotCheck(let failure):
            Output.error("could not check the session with Cognito: \(ErrorWording.line(failure)) (cog-cred status --offline shows what is stored)")
            throw ExitCode(ExitStatus.temporaryFailure)
        default: break
        }
        if !report.session.signedIn { throw ExitCode(ExitStatus.notAuthenticated) }
    }

    /// The `session:` line: what Cognito said, or why it was not asked.
    static func sessionLine(_ check: SessionCheck?, offline: Bool) -> String? {
        switch check {
        case .stands(.getUser): return "stands (Cognito answered GetUser)"
        case .stands(.userInfo): return "stands (the managed login's userInfo answered)"
        case .stands(.refresh): return "stands (Cognito refreshed the tokens)"
        case .refused: return "refused by Cognito: sign in again"
        case .couldNotCheck: return "not checked: Cognito could not be asked"
        case .noSession: return nil
        case nil: return offline ? "not checked (--offline)" : nil
        }
    }

    func text(_ s: SessionStatus, _ profile: Profile, check: SessionCheck?) -> [String] {
        func expiry(_ exp: Int64?) -> String {
            guard let exp else { return "none stored" }
            return exp > s.now ? "expires \(rfc3339(exp)) (\(humanDuration(exp - s.now)))" : "expired \(rfc3339(exp))"
        }
        var lines = [
            "profile:       \(s.profile)",
            "signed in:     \(s.signedIn ? "yes" : "no")",
        ]
        if let session = Status.sessionLine(check, offline: offline) { lines.append("session:       \(session)") }
        // Claims are text from the network: one printable line each, so a
        // claim can neither drive the terminal nor forge a line of its own.
        if let username = s.username { lines.append("username:      \(username.oneLine(limit: 200))") }
        if let name = s.cognitoUsername, name != s.username { lines.append("cognito:username: \(name.oneLine(limit: 200))") }
        if let email = s.email {
            let verified = s.emailVerified.map { $0 ? " (verified)" : " (not verified)" } ?? ""
            lines.append("email:         \(email.oneLine(limit: 200))\(verified)")
        }
        if let sub = s.sub { lines.append("sub:           \(sub.oneLine(limit: 200))") }
        lines.append("user pool:     \(profile.userPoolID) (app client \(profile.clientID))")
        let machine = profile.effectiveGrant == .clientCredentials
        if machine {
            lines.append("grant:         client credentials (the app client itself, no user)")
            let scopes = s.scope ?? profile.scopes?.joined(separator: " ") ?? "the app client's default"
            lines.append("scopes:        \(scopes.oneLine(limit: 200))")
        }
        if let authTime = s.authTime { lines.append("signed in at:  \(rfc3339(authTime))") }
        if s.signedIn || s.accessTokenExpiresAt != nil {
            lines.append("access token:  \(expiry(s.accessTokenExpiresAt))")
            if !machine { lines.append("id token:      \(expiry(s.idTokenExpiresAt))") }
        }
        if let pool = profile.identityPoolID {
            lines.append("identity pool: \(pool)")
            lines.append("identity id:   \(s.identityID?.oneLine(limit: 100) ?? "not asked for yet")")
            lines.append("AWS creds:     \(s.awsCredentialsExpireAt == nil ? "none stored" : expiry(s.awsCredentialsExpireAt))")
        }
        if s.boundElsewhere {
            lines.append("stored tokens: issued by another user pool or app client than this profile names")
        }
        if !s.signedIn {
            lines.append("to sign in:    cog-cred sign-in\(s.profile == "default" ? "" : " --profile \(s.profile)")")
        }
        return lines
    }
}

extension Status {
    /// The `endpoint:` and `network:` lines: where requests go and how, or
    /// who sends them.
    static func text(_ path: NetworkPath?, agent: String?) -> [String] {
        guard let path else {
            return ["network:       the agent at \(agent?.oneLine(limit: 200) ?? "") sends this profile's requests, with its own proxy and FIPS settings"]
        }
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
        return lines
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self + " " : self + String(repeating: " ", count: width - count) }
}

/// The `status --json` object. Field names are part of the interface.
struct StatusJSON: Encodable {
    var profile: String
    var signedIn: Bool
    var username: String?
    var cognitoUsername: String?
    var email: String?
    var emailVerified: Bool?
    var sub: String?
    var authTime: String?
    var userPoolID: String
    var clientID: String
    var accessTokenExpiresAt: String?
    var idTokenExpiresAt: String?
    var accessTokenExpired: Bool?
    var grant: String
    var scopes: String?
    var identityPoolID: String?
    var identityID: String?
    var awsCredentialsExpireAt: String?
    var verification: [String: [Check]]?
    /// "stands", "refused", "not-checked" (Cognito could not be asked),
    /// "offline"; absent when not signed in and for a machine profile.
    var session: String?
    /// How it was checked: "GetUser", "userInfo" or "refresh".
    var sessionCheckedBy: String?
    /// Where requests go (NetworkPath): the URL without credentials, the
    /// variable that set it, whether it is AWS's FIPS endpoint.
    var endpoint: String?
    var endpointFrom: String?
    var fips: Bool?
    /// "http://proxy.example:3128" (never its user name or password), the
    /// variable it came from; absent when requests go direct.
    var proxy: String?
    var proxyFrom: String?
    /// Why there is no endpoint or route to name.
    var networkProblem: String?
    /// The agent's socket, when an agent sends the profile's requests (with
    /// its own settings: the fields above are then absent).
    var requestsByAgent: String?

    struct Check: Encodable {
        var check: String
        var passed: Bool
        var detail: String
    }

    enum CodingKeys: String, CodingKey {
        case profile, username, email, sub, verification, grant, scopes, session, endpoint, fips, proxy
        case endpointFrom = "endpoint_from"
        case proxyFrom = "proxy_from"
        case networkProblem = "network_problem"
        case requestsByAgent = "requests_by_agent"
        case sessionCheckedBy = "session_checked_by"
        case identityPoolID = "identity_pool_id"
        case identityID = "identity_id"
        case awsCredentialsExpireAt = "aws_credentials_expire_at"
        case signedIn = "signed_in"
        case cognitoUsername = "cognito_username"
        case emailVerified = "email_verified"
        case authTime = "auth_time"
        case userPoolID = "user_pool_id"
        case clientID = "client_id"
        case accessTokenExpiresAt = "access_token_expires_at"
        case idTokenExpiresAt = "id_token_expires_at"
        case accessTokenExpired = "access_token_expired"
    }

    init(_ report: StatusReport, _ profile: Profile, check: SessionCheck?, path: NetworkPath?, agent: String?) {
        let s = report.session
        endpoint = path?.endpoint.map { LibcurlURL.shown($0.url) }
        endpointFrom = path?.endpoint?.variable
        fips = path?.endpoint?.fips
        proxy = path?.route?.proxy?.shown
        proxyFrom = path?.route?.proxy?.variable
        networkProblem = path?.problem.map { ErrorWording.line($0) }
        requestsByAgent = agent
        switch check {
        case .stands(let way):
            session = "stands"
            sessionCheckedBy = switch way { case .getUser: "GetUser"; case .userInfo: "userInfo"; case .refresh: "refresh" }
        case .refused: session = "refused"
        case .couldNotCheck: session = "not-checked"
        case .noSession: session = nil
        case nil: session = s.signedIn ? "offline" : nil
        }
        self.profile = s.profile
        signedIn = s.signedIn
        username = s.username
        cognitoUsername = s.cognitoUsername
        email = s.email
        emailVerified = s.emailVerified
        sub = s.sub
        authTime = s.authTime.map(rfc3339)
        userPoolID = profile.userPoolID
        clientID = profile.clientID
        accessTokenExpiresAt = s.accessTokenExpiresAt.map(rfc3339)
        idTokenExpiresAt = s.idTokenExpiresAt.map(rfc3339)
        accessTokenExpired = s.accessTokenExpiresAt.map { $0 <= s.now }
        grant = profile.effectiveGrant.rawValue
        scopes = s.scope ?? profile.scopes?.joined(separator: " ")
        identityPoolID = profile.identityPoolID
        identityID = s.identityID
        awsCredentialsExpireAt = s.awsCredentialsExpireAt.map(rfc3339)
        verification = report.checks.map { list in
            Dictionary(uniqueKeysWithValues: list.map { kind, results in
                (kind.rawValue, results.map { Check(check: $0.name, passed: $0.passed, detail: $0.detail) })
            })
        }
    }

    func encoded() -> String { compactJSON(self) }
}
