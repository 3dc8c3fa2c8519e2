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

            On a terminal, --global first asks (default no): it ends the user's sessions on \
            other machines too. --yes answers yes; without a terminal nothing is asked.
            """,
        aliases: ["logout"])
    static let examples = [
        "cog-cred sign-out",
        "cog-cred sign-out --profile work --global",
        "cog-cred sign-out --global --yes",
        "cog-cred sign-out --local",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    @Flag(help: "Sign out of every device (GlobalSignOut).")
    var global = false

    @Flag(help: "Only delete the local items; call nothing.")
    var local = false

    /// For --global; taken with any scope, as every destroying command takes it.
    @OptionGroup var confirmation: ConfirmOptions

    func validate() throws {
        if global && local { throw ValidationError("--global and --local cannot be used together") }
    }

    func run() throws {
        let wiring = Wiring(profileOptions)
        let name = try wiring.profileName()
        let manager: TokenManager
        let scope: SignOutScope = local ? .local : global ? .global : .revoke
        do {
            manager = try wiring.tokenManager()
        } catch ConfigError.profileNotFound {
            // Without the profile there is no endpoint to revoke at, but the
            // local items can and should still go.
            Output.note("Profile '\(name)' is not configured: deleting its local items only.")
            let removed = try wiring.profiles.forgetUnconfigured(name)
            return Output.note(SessionWords.signedOut(profile: name, SignOutResult(removed: removed, atCognito: .notAsked), from: wiring.storeName)!)
        }
        if scope == .global {
            try confirmation.confirm(
                "Sign out everywhere: every session of profile '\(name)'s user ends, on other machines and apps too, not only here?")
        }
        let result = try manager.signOut(scope)
        if let url = result.logout {
            // Without the domain's credentials, if it has any: the browser's
            // command line is every local user's to read, and the managed login
            // does not use them (LibcurlURL.shown).
            Output.note(SessionWords.logout(url, opened: Browser.open(url, environment: wiring.environment)))
        }
        guard let said = SessionWords.signedOut(profile: name, result, from: wiring.storeName) else {
            throw AuthError.remoteSignOutFailed(removed: result.removed, store: wiring.storeName, cause: result.failure ?? "no reason given")
        }
        Output.note(said)
    }
}
