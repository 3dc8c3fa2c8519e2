#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The shapes a token is printed in for scripts and other tools.
public enum TokenOutput {
    public enum Format: String, CaseIterable, Sendable {
        case bare, header, json, env
    }

    /// `token --format ...`. `variable` names the env variable (access or ID token).
    public static func render(_ token: IssuedToken, format: Format, variable: String) -> String {
        switch format {
        case .bare:
            return token.value
        case .header:
            return "Authorization: Bearer \(token.value)"
        case .json:
            return compactJSON(TokenJSON(token: token.value, tokenType: "Bearer", expiresAt: token.claims.exp.map(rfc3339)))
        case .env:
            var lines = ["export \(variable)=\(shellQuoted(token.value))"]
            if let exp = token.claims.exp { lines.append("export COG_CRED_TOKEN_EXPIRES_AT=\(shellQuoted(rfc3339(exp)))") }
            return lines.joined(separator: "\n")
        }
    }

    /// `get-header`.
    public static func header(_ token: IssuedToken) -> String {
        render(token, format: .header, variable: "")
    }

    /// What `exec` puts in the command's environment; nil values are
    /// removed, so an inherited variable never stands in for a token that
    /// this profile does not have.
    public static func execVariables(access: IssuedToken, id: IssuedToken?) -> [String: String?] {
        [
            "COG_CRED_ACCESS_TOKEN": access.value,
            "COG_CRED_AUTHORIZATION": "Bearer \(access.value)",
            "COG_CRED_ID_TOKEN": id?.value,
        ]
    }

    /// A kubectl ExecCredential (client.authentication.k8s.io/v1).
    public static func execCredential(_ token: IssuedToken) -> String {
        compactJSON(
            ExecCredential(
                status: ExecCredential.Status(token: token.value, expirationTimestamp: token.claims.exp.map(rfc3339))))
    }

    /// Single quotes, with any single quote inside closed and escaped.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }

    struct TokenJSON: Encodable {
        var token: String
        var tokenType: String
        var expiresAt: String?

        enum CodingKeys: String, CodingKey {
            case token
            case tokenType = "token_type"
            case expiresAt = "expires_at"
        }
    }

    struct ExecCredential: Encodable {
        var apiVersion = "client.authentication.k8s.io/v1"
        var kind = "ExecCredential"
        var status: Status

        struct Status: Encodable {
            var token: String
            var expirationTimestamp: String?
        }
    }
}
