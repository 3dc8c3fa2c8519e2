/// The shapes a token is printed in for scripts and other tools.
public enum TokenOutput {
    public enum Format: String, CaseIterable, Sendable {
        case bare, header, json, env
    }

    /// The tokens `token --format FORMAT` prints: the chosen one, or both
    /// for `env`, which sets what `exec` sets.
    public static func kinds(_ format: Format, choice: TokenChoice) -> [SecretKind] {
        format == .env ? [.access, .id] : [choice.kind]
    }

    /// `token --format ...`, from the tokens `kinds` named.
    public static func render(_ format: Format, choice: TokenChoice, tokens: [SecretKind: IssuedToken]) -> String {
        if format == .env, let access = tokens[.access] { return exports(access: access, id: tokens[.id], authorizing: choice) }
        guard let token = tokens[choice.kind] else { return "" }
        switch format {
        case .bare, .env:
            return token.value
        case .header:
            return header(token)
        case .json:
            var members: [String: JSONValue] = ["token": .string(token.value), "token_type": .string("Bearer")]
            members["expires_at"] = token.claims.exp.map { .string(rfc3339($0)) }
            return JSONValue.object(members).compactText
        }
    }

    /// `token --format env`: the variables `exec` sets, as lines for a
    /// shell's eval (`unset` for a token the profile does not have, so an
    /// inherited one never stands in for it), then when the first of them
    /// expires.
    public static func exports(access: IssuedToken, id: IssuedToken?, authorizing choice: TokenChoice = .access) -> String {
        let variables = execVariables(access: access, id: id, authorizing: choice)
        var lines = execVariableNames.map { name in
            (variables[name] ?? nil).map { "export \(name)=\(shellQuoted($0))" } ?? "unset \(name)"
        }
        if let exp = [access.claims.exp, id?.claims.exp].compactMap({ $0 }).min() {
            lines.append("export COG_CRED_TOKEN_EXPIRES_AT=\(shellQuoted(rfc3339(exp)))")
        }
        return lines.joined(separator: "\n")
    }

    /// The names `execVariables` sets, in the order they are printed.
    static let execVariableNames = ["COG_CRED_ACCESS_TOKEN", "COG_CRED_ID_TOKEN", "COG_CRED_AUTHORIZATION"]

    /// `get-header`.
    public static func header(_ token: IssuedToken) -> String {
        "Authorization: Bearer \(token.value)"
    }

    /// What `exec` puts in the command's environment; nil values are
    /// removed, so an inherited variable never stands in for a token that
    /// this profile does not have. COG_CRED_AUTHORIZATION carries the
    /// token `choice` names (`--id-token`: the ID token; never the access
    /// token in its place, which the callers' checks keep from happening).
    public static func execVariables(access: IssuedToken, id: IssuedToken?, authorizing choice: TokenChoice = .access) -> [String: String?] {
        let authorizing = choice == .id ? id : access
        return [
            "COG_CRED_ACCESS_TOKEN": access.value,
            "COG_CRED_AUTHORIZATION": authorizing.map { "Bearer \($0.value)" },
            "COG_CRED_ID_TOKEN": id?.value,
        ]
    }

    /// A kubectl ExecCredential, in the apiVersion kubectl asked for.
    public static func execCredential(_ token: IssuedToken, apiVersion: KubernetesExecInfo.APIVersion) -> String {
        var status: [String: JSONValue] = ["token": .string(token.value)]
        status["expirationTimestamp"] = token.claims.exp.map { .string(rfc3339($0)) }
        return JSONValue.object([
            "apiVersion": .string(apiVersion.rawValue), "kind": .string("ExecCredential"),
            "status": .object(status),
        ]).compactText
    }

    /// Single quotes, with any single quote inside closed and escaped.
    static func shellQuoted(_ text: String) -> String {
        // A loop, not `replacing`: that generic algorithm cost `token
        // --format env` more than the rest of the read.
        var quoted = "'"
        for scalar in text.unicodeScalars {
            if scalar == "'" { quoted += "'\\''" } else { quoted.unicodeScalars.append(scalar) }
        }
        return quoted + "'"
    }
}
