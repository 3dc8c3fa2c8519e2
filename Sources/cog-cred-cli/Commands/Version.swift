import ArgumentParser
import CogCredWrite

/// `cog-cred version`: what `cog-cred --version` prints, as a command (gh, kubectl and docker have one).
struct VersionCommand: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print cog-cred's version, as --version does.",
        discussion: """
            The version alone on stdout, exactly as cog-cred --version prints it; with --json, \
            {"version": "..."}. It takes no argument (64 otherwise). --profile is taken, as every command takes it, so that an \
            alias or a script that always names a profile can ask the version too; a note says \
            it is not used.
            """)

    static let examples = [
        "cog-cred version",
        "cog-cred version --json",
    ]

    @OptionGroup var globals: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() {
        globals.noteProfileUnused(by: "version", because: "the version is the same for every profile")
        if output.json { return Output.json(.object(["version": .string(cogCredVersion)])) }
        Output.data(cogCredVersion)
    }
}
