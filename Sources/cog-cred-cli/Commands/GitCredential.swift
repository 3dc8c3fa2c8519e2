import ArgumentParser
import CogCredWrite

/// git's credential helper: `cog-cred git-credential [--profile P] get|store|erase|capability`,
/// also run as `git-credential-cog-cred` (the name git looks for).
struct GitCredentialCommand: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "git credential helper for the hosts you name.",
        discussion: """
            get prints a fresh access token for the URL git asks about: as a Bearer credential \
            when git announces capability[]=authtype (git 2.46+), else as the password. store \
            does nothing; erase of the token we issued makes the next get refresh it. Malformed \
            input exits 65.

            The profile is --profile when given, else the profile whose --git-url pattern \
            matches the URL. With neither, nothing is printed and git asks its next helper: \
            COG_CRED_PROFILE and the "default" profile are never used here, so a helper set \
            for every host never hands a Cognito token to one it was not told about (github.com, \
            say). Even with a profile, a token goes only to a host git names, over https (plain \
            http only to this machine), within the profile's --git-url patterns when it has any, \
            and never for a request with a carriage return, line feed or NUL in a value: \
            otherwise one line on stderr says why, nothing is printed, and git asks its next \
            helper. Set it up in one of two ways:

              1. a helper for one host, with its profile:
                 git config --global \\
                   credential.https://git.example.com.helper "cog-cred --profile work"
              2. URL patterns on the profiles, and one helper for every host:
                 cog-cred configure --profile work --git-url https://git.example.com/
                 git config --global credential.helper cog-cred
            """)
    static let examples = [
        "cog-cred configure --profile work --git-url https://git.example.com/",
        "cog-cred git-credential --profile work capability",
    ]

    /// `--profile` here has no default: COG_CRED_PROFILE and "default" are never used.
    @OptionGroup var globals: GlobalOptions
    var profile: String? { globals.profile }

    @Argument(
        help: ArgumentHelp("\(GitCredential.Action.allCases.map(\.rawValue).spoken()) (others are ignored)."), completion: Completions.gitActions)
    var action: String

    func run() throws {
        Output.raw(try GitCredential.handle(action, Store(named: profile)))
    }

    /// The profiles and their tokens, as git's protocol asks for them.
    struct Store: GitCredentialStore {
        typealias Failure = any Error
        /// --profile: no default, the URL patterns decide.
        let named: String?
        let wiring = Wiring()

        func input() throws -> [UInt8] { try StandardInput.readRequest() }
        func malformed(_ error: GitCredential.ParseError) -> any Error { error }

        func profile(for request: GitCredential.Request) throws -> String? {
            if let named { return named }
            return try wiring.profiles.profileName(for: request)
        }

        func token(for request: GitCredential.Request) throws -> GitCredential.Lookup {
            try GitCredential.lookup(request, named: named, in: try wiring.profiles.load()) { (profile: String) throws -> IssuedToken in
                try wiring.tokenManager(named: profile).currentToken(.access)
            }
        }

        func decline(_ refusal: GitCredential.Refusal) { Output.note(refusal.message) }

        func forgetAccessToken(profile: String, onlyIf isIt: @escaping (String) -> Bool) throws {
            try wiring.tokenManager(named: profile).forgetAccessToken(onlyIf: isIt)
        }
    }
}
