import ArgumentParser
import CogCredWrite

/// The options every command takes, in any position before `--`
/// (CommandLineWords moves `--profile` after the command's words;
/// DebugTrace takes `--debug` out before parsing): declared here so that
/// each command's help shows them and completion offers them.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: [.long, .customShort("p")],
        help: ArgumentHelp(
            "The profile, in any position, exec's command aside (without it: $COG_CRED_PROFILE, else 'default'; the git and docker helpers: the profile the request matches; profiles: all).",
            valueName: "name"),
        completion: Completions.profileNames)
    var profile: String?

    @Flag(help: "Trace each call to Cognito and each keyring step on stderr, never a secret (also COG_CRED_DEBUG=1).")
    var debug = false

    func validate() throws {
        if let profile, let problem = ProfileValidation.profileNameProblem(profile) {
            throw ValidationError("invalid --profile: \(problem)")
        }
    }

    /// For the commands that serve no one profile (`agent`, `unlock`,
    /// `version`): the option is taken, so that an alias or a script that
    /// always names a profile works with them too, and a note says it is
    /// not used rather than ignoring it in silence.
    func noteProfileUnused(by command: String, because reason: String) {
        if profile != nil { Output.note("cog-cred: note: \(command) does not use --profile: \(reason)") }
    }
}

/// The global options and `--no-prompt`, shared by every command that uses a profile.
struct ProfileOptions: ParsableArguments {
    @OptionGroup var globals: GlobalOptions

    @Flag(help: "With the keyring locked, fail at once (69) instead of asking the keyring to show its unlock prompt.")
    var noPrompt = false

    /// `--profile`, as given.
    var profile: String? { globals.profile }

}
