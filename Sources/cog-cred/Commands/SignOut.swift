import ArgumentParser
import CogCredCore

struct SignOut: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-out",
        abstract: "Delete the profile's tokens from the Secret Service.")

    @OptionGroup var profileOptions: ProfileOptions

    func run() throws {
        let wiring = Wiring()
        let name = try profileOptions.name(wiring.environment)
        // Works without the profile's config, so tokens can always be removed.
        let placeholder = Profile(userPoolID: "", clientID: "")
        let removed = try TokenManager(
            profileName: name, profile: placeholder, store: wiring.tokenStore, cognito: NoCognito()
        ).signOut()
        if removed == 0 {
            Output.note("Profile '\(name)' was not signed in; nothing to delete.")
        } else {
            Output.note("Signed out of profile '\(name)': deleted \(removed) item(s) from the Secret Service.")
        }
    }
}

/// Sign-out needs no network; this keeps TokenManager's wiring honest about that.
private struct NoCognito: CognitoClient {
    func signInWithPassword(username: String, password: String) throws(CognitoError) -> AuthOutcome {
        throw .deadlineExceeded
    }

    func refresh(refreshToken: String) throws(CognitoError) -> AuthenticationResult {
        throw .deadlineExceeded
    }
}
