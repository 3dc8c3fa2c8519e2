import ArgumentParser
import CogCredCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show whether the profile is signed in, as whom, and when its tokens expire.",
        discussion: "Never prints a token. Exits 0 when signed in, 77 when not.")

    @OptionGroup var profileOptions: ProfileOptions

    @Flag(help: "Print a JSON object instead of text.")
    var json = false

    func run() throws {
        let manager = try Wiring().tokenManager(profileOptions)
        let status = try manager.status()
        if json {
            Output.data(StatusJSON(status, manager.profile).encoded())
        } else {
            for line in text(status, manager.profile) { Output.data(line) }
        }
        if !status.signedIn { throw ExitCode(ExitStatus.notAuthenticated) }
    }

    func text(_ s: SessionStatus, _ profile: Profile) -> [String] {
        func expiry(_ exp: Int64?) -> String {
            guard let exp else { return "none stored" }
            return exp > s.now ? "expires \(rfc3339(exp)) (\(humanDuration(exp - s.now)))" : "expired \(rfc3339(exp))"
        }
        var lines = [
            "profile:       \(s.profile)",
            "signed in:     \(s.signedIn ? "yes" : "no")",
        ]
        if let username = s.username { lines.append("username:      \(username)") }
        if let email = s.email { lines.append("email:         \(email)") }
        lines.append("user pool:     \(profile.userPoolID) (app client \(profile.clientID))")
        if s.signedIn || s.accessTokenExpiresAt != nil {
            lines.append("access token:  \(expiry(s.accessTokenExpiresAt))")
            lines.append("id token:      \(expiry(s.idTokenExpiresAt))")
        }
        if !s.signedIn {
            lines.append("to sign in:    cog-cred sign-in\(s.profile == "default" ? "" : " --profile \(s.profile)")")
        }
        return lines
    }
}

/// The `status --json` object. Field names are part of the interface.
struct StatusJSON: Encodable {
    var profile: String
    var signedIn: Bool
    var username: String?
    var email: String?
    var userPoolID: String
    var clientID: String
    var accessTokenExpiresAt: String?
    var idTokenExpiresAt: String?
    var accessTokenExpired: Bool?

    enum CodingKeys: String, CodingKey {
        case profile, username, email
        case signedIn = "signed_in"
        case userPoolID = "user_pool_id"
        case clientID = "client_id"
        case accessTokenExpiresAt = "access_token_expires_at"
        case idTokenExpiresAt = "id_token_expires_at"
        case accessTokenExpired = "access_token_expired"
    }

    init(_ s: SessionStatus, _ profile: Profile) {
        self.profile = s.profile
        signedIn = s.signedIn
        username = s.username
        email = s.email
        userPoolID = profile.userPoolID
        clientID = profile.clientID
        accessTokenExpiresAt = s.accessTokenExpiresAt.map(rfc3339)
        idTokenExpiresAt = s.idTokenExpiresAt.map(rfc3339)
        accessTokenExpired = s.accessTokenExpiresAt.map { $0 <= s.now }
    }

    func encoded() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
