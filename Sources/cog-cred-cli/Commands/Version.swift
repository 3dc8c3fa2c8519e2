import ArgumentParser
import CogCredWrite

/// `cog-cred version`: what `cog-cred --version` prints, as a command (gh, kubectl and docker have one).
struct VersionCommand: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print cog-cred's version, as --version does.",
        discussion: """
            The version alone on stdout, exactly as cog-cred --version prints it. It takes no \
            argument (64 otherwise). --profile is taken and changes nothing, as every command \
            takes it, so an alias or script that always names a profile can ask the version too.
            """)

    static let examples = [
        "cog-cred version",
        "cog-cred version --profile work",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    func run() {
        Output.data(cogCredVersion)
    }
}
