// What `whoami`, `refresh` and `sign-out` say, in one place: cog-cred-cli
// says it, and so does the front, which answers these commands through an
// agent on a machine that has only the `cog-cred` binary (Front).

public enum SessionWords {
    /// `refresh`'s note.
    public static func refreshed(profile: String, accessExpiresAt: Int64?) -> String {
        let until = accessExpiresAt.map { "; access token valid until \(rfc3339($0))" } ?? ""
        return "Refreshed (profile '\(profile)')\(until)."
    }

    /// `whoami --json`.
    public static func whoamiJSON(profile: String, name: String, grant: String) -> String {
        JSONValue.object(["profile": .string(profile), "name": .string(name), "grant": .string(grant)]).compactText
    }

    /// `sign-out`'s note: what was deleted from `store` ("the Secret
    /// Service", "the agent at PATH"), and what Cognito was asked and said,
    /// as it happened ("revoked" only when a revocation was sent and
    /// accepted). nil for a failed revocation: `revocationFailed` says that.
    public static func signedOut(profile: String, _ result: SignOutResult, from store: String) -> String? {
        if result.atCognito == .failed { return nil }
        if result.removed == 0 { return "Profile '\(profile)' was not signed in; nothing to delete." }
        let remote =
            switch result.atCognito {
            case .revoked: "session revoked at Cognito; "
            case .signedOutEverywhere: "signed out everywhere; "
            case .alreadyEnded: "Cognito had already ended the session; "
            case .nothingToRevoke:
                "a machine has no refresh token to revoke, so nothing was sent to Cognito (its access token works until it expires); "
            case .failed, .notAsked: ""
            }
        return "Signed out of profile '\(profile)': \(remote)deleted \(result.removed) item(s) from \(store)."
    }

    /// A revocation that failed once the items were deleted (exit 75).
    public static func revocationFailed(removed: Int, from store: String, cause: String) -> String {
        "deleted \(removed) item(s) from \(store), but revoking the session at Cognito failed (\(cause)); its tokens stay valid until they expire"
    }

    /// After a managed login's `--global`: the address that ends its
    /// session in the browser, opened or to open.
    public static func logout(_ url: String, opened: Bool) -> String {
        "\(opened ? "Opened" : "To end the managed login's session in the browser too, open"): \(url)"
    }
}
