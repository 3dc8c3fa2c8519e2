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
        // Works without the profile's config, so tokens can always be
        // removed; it needs no network, so it gets no Cognito client.
        let placeholder = Profile(userPoolID: "", clientID: "")
        let removed = try TokenManager(
            profileName: name, profile: placeholder, store: wiring.tokenStore, cognito: { throw CognitoError.deadlineExceeded }
        ).signOut()
        if removed == 0 {
            Output.note("Profile '\(name)' was not signed in; nothing to delete.")
        } else {
            Output.note("Signed out of profile '\(name)': deleted \(removed) item(s) from the Secret Service.")
        }
    }
}
