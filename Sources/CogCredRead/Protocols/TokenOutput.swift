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
            var members: [String: JSONValue] = ["token": .string(token.value), "token_type": .string("Bearer")]
            members["expires_at"] = token.claims.exp.map { .string(rfc3339($0)) }
            return JSONValue.object(members).compactText
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
        var status: [String: JSONValue] = ["token": .string(token.value)]
        status["expirationTimestamp"] = token.claims.exp.map { .string(rfc3339($0)) }
        return JSONValue.object([
            "apiVersion": .string("client.authentication.k8s.io/v1"), "kind": .string("ExecCredential"),
            "status": .object(status),
        ]).compactText
    }

    /// Single quotes, with any single quote inside closed and escaped.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }
}
