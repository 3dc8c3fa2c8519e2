import ArgumentParser
import CogCredWrite

struct SignOut: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "sign-out",
        abstract: "Revoke the session at Cognito and delete the profile's tokens from the Secret Service.",
        discussion: """
            By default the refresh token is revoked (RevokeToken), which also ends the access \
            and ID tokens issued from it. --global signs the user out everywhere \
            (GlobalSignOut); --local only deletes the local items. If Cognito cannot be \
            reached the local items are deleted anyway and sign-out exits 75.

            A profile that signs in through the browser (configure --auth-flow browser) is \
            revoked at the managed login's /oauth2/revoke; with --global, and a logout URI \
            configured (configure --logout-uri), sign-out also prints (and, with a browser, \
            opens) the managed login's /logout address, which ends its browser session.
            """,
        aliases: ["logout"])
    static let examples = [
        "cog-cred sign-out",
        "cog-cred sign-out --profile work --global",
        "cog-cred sign-out --local",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    @Flag(help: "Sign out of every device (GlobalSignOut).")
    var global = false

    @Flag(help: "Only delete the local items; call nothing.")
    var local = false

    func validate() throws {
        if global && local { throw ValidationError("--global and --local cannot be used together") }
    }

    func run() throws {
        let wiring = Wiring()
        let name = try profileOptions.name(wiring.environment)
        let manager: TokenManager
        let scope: SignOutScope = local ? .local : global ? .global : .revoke
        do {
            manager = try wiring.tokenManager(profileOptions)
        } catch ConfigError.profileNotFound {
            // Without the profile there is no endpoint to revoke at, but the
            // local items can and should still go.
            Output.note("Profile '\(name)' is not configured: deleting its local items only.")
            return report(removed: try wiring.profiles.forgetUnconfigured(name), remote: "", name, wiring)
        }
        let result: SignOutResult
        do {
            result = try manager.signOut(scope)
        } catch {
            if scope == .global { endManagedLoginSession(manager, wiring) }
            throw error
        }
        if scope == .global { endManagedLoginSession(manager, wiring) }
        // What Cognito was asked and said, as it happened: "revoked" only
        // when a revocation was sent and accepted.
        let remote = switch result.atCognito {
        case .revoked: "session revoked at Cognito; "
        case .signedOutEverywhere: "signed out everywhere; "
        case .alreadyEnded: "Cognito had already ended the session; "
        case .notAsked where scope != .local && manager.profile.effectiveGrant == .clientCredentials:
            "a machine has no refresh token to revoke, so nothing was sent to Cognito (its access token works until it expires); "
        case .notAsked: ""
        }
        report(removed: result.removed, remote: remote, name, wiring)
    }

    func report(removed: Int, remote: String, _ name: String, _ wiring: Wiring) {
        if removed == 0 {
            Output.note("Profile '\(name)' was not signed in; nothing to delete.")
        } else {
            Output.note("Signed out of profile '\(name)': \(remote)deleted \(removed) item(s) from \(wiring.storeName).")
        }
    }

    /// The managed login keeps its own session in the browser (a cookie):
    /// revoking the tokens does not end it, `<domain>/logout` does.
    func endManagedLoginSession(_ manager: TokenManager, _ wiring: Wiring) {
        // Without the domain's credentials, if it has any: the browser's
        // command line is every local user's to read, and the managed login
        // does not use them.
        guard manager.profile.effectiveAuthFlow == .browser, let url = manager.logoutURL().map({ LibcurlURL.shown($0) }) else { return }
        let seen = ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER"].contains { !(wiring.environment[$0] ?? "").isEmpty }
        let opened = seen && Browser.open(url, environment: wiring.environment)
        Output.note("\(opened ? "Opened" : "To end the managed login's session in the browser too, open"): \(url)")
    }
}
