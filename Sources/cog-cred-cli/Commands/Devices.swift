import ArgumentParser
import CogCredWrite

/// `cog-cred devices`: the signed-in user's devices (ListDevices), and
/// forgetting one (ForgetDevice), with their access token.
struct Devices: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List your devices, or forget one (pools that remember devices).",
        discussion: """
            On a pool that tracks devices, each sign-in from a new machine makes it one of \
            your devices; a remembered device skips MFA at sign-in. cog-cred devices prints \
            one line a device: this machine's marked with *, then its name, key, when it \
            last signed in (RFC 3339, UTC) and whether it is remembered; --json prints an \
            array of {"key", "name", "last_seen", "remembered": bool, "current": bool}. \
            cog-cred devices forget [KEY] forgets a device (this machine's without a key; \
            then its keyring item goes too, its session can no longer be refreshed, and the \
            next sign-in asks for MFA again). \
            The access token is refreshed first when it is too old.
            """,
        subcommands: [List.self, Forget.self],
        defaultSubcommand: List.self)
    static let examples = [
        "cog-cred devices",
        "cog-cred devices list --json",
        "cog-cred devices forget",
    ]

    /// Shown in the group's help; given here or after a subcommand, they
    /// reach it (CogCredCommand.arguments moves them there).
    @OptionGroup var globals: GlobalOptions

    struct List: ParsableCommand, HelpExamples {
        static let configuration = CommandConfiguration(abstract: "Print your devices; * marks this machine.")
        static let examples = [
            "cog-cred devices list",
            "cog-cred devices list --profile work --json",
        ]

        @OptionGroup var profileOptions: ProfileOptions

        @OptionGroup var output: OutputOptions

        func run() throws {
            let (devices, current) = try Wiring(profileOptions).tokenManager().devices()
            if output.json { return Output.json(.array(devices.map { Self.json($0, current: current) })) }
            if devices.isEmpty { return Output.note("No devices: this pool does not track them, or you have none yet.") }
            for device in devices { Output.data(Self.line(device, current: current)) }
        }

        /// One device, one line: its name and key are Cognito's words, so
        /// neither can bring a control character to the terminal.
        static func line(_ device: UserDevice, current: String?) -> String {
            let seen = device.lastSeen.map(rfc3339) ?? "-"
            let mark = device.key == current ? "*" : " "
            let name = (device.name ?? "-").printable
            return "\(mark) \(name)  \(device.key.printable)  \(seen)  \(device.remembered ? "remembered" : "not remembered")"
        }

        /// One device of `devices list --json`: every key always there, null when Cognito did not say.
        static func json(_ device: UserDevice, current: String?) -> JSONValue {
            .object([
                "key": .string(device.key), "name": device.name.map { .string($0) } ?? .null,
                "last_seen": device.lastSeen.map { .string(rfc3339($0)) } ?? .null, "remembered": .bool(device.remembered),
                "current": .bool(device.key == current),
            ])
        }
    }

    struct Forget: ParsableCommand, HelpExamples {
        static let configuration = CommandConfiguration(
            abstract: "Forget a device (this machine's without a key); its next sign-in asks for MFA.",
            discussion: "On a terminal it says which device and asks first (default no); --yes answers yes, and without a terminal nothing is asked.")
        static let examples = [
            "cog-cred devices forget",
            "cog-cred devices forget us-east-1_0a1b2c3d-1234-5678-9abc-def012345678",
            "cog-cred devices forget --yes",
        ]

        @OptionGroup var profileOptions: ProfileOptions

        @Argument(help: ArgumentHelp("The device's key, as cog-cred devices shows it (default: this machine's).", valueName: "key"))
        var key: String?

        @OptionGroup var confirmation: ConfirmOptions

        func validate() throws {
            // Cognito's pattern for a device key: [\w-]+_[0-9a-f-]+, at most 55 characters.
            if let key, key.isEmpty || key.utf8.count > 55 || !key.contains("_") {
                throw ValidationError("'\(key.printable)' is not a device key (cog-cred devices lists them)")
            }
        }

        func run() throws {
            let manager = try Wiring(profileOptions).tokenManager()
            let current = try manager.rememberedDevice()?.key
            // Nothing to ask about when this machine is not remembered: forgetDevice says so.
            if let asked = key ?? current {
                try confirmation.confirm(
                    asked == current
                        ? "Forget this machine (\(asked))? Its session here can no longer be refreshed, and the next sign-in asks for MFA."
                        : "Forget device \(asked)? Its next sign-in asks for MFA.")
            }
            let forgotten = try manager.forgetDevice(key)
            Output.note(
                forgotten == current
                    ? "Forgot this machine (\(forgotten)): its session cannot be refreshed any more, and the next sign-in asks for MFA."
                    : "Forgot device \(forgotten).")
        }
    }
}
