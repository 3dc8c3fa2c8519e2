import ArgumentParser
import CogCredWrite

/// `cog-cred mfa`: the signed-in user's own MFA methods, shown and changed
/// with their access token (GetUser, SetUserMFAPreference).
struct MFA: ParsableCommand, HelpExamples {
    /// "totp|sms|email", from MFAKind's cases.
    static let kinds = MFAKind.allCases.map(\.rawValue).joined(separator: "|")

    static let configuration = CommandConfiguration(
        commandName: "mfa",
        abstract: "Show or change your MFA methods: an authenticator app (totp), SMS or email.",
        discussion: """
            cog-cred mfa prints each method, whether it is enabled and which one is preferred \
            (sign-in asks for the preferred one without offering a choice); --json prints \
            {"totp": {"enabled": bool, "preferred": bool}, "sms": {...}, "email": {...}}. \
            mfa enable totp sets up an authenticator app (the otpauth:// URI, and a QR code \
            when qrencode is installed, then its first code from the terminal or --code -) \
            and enables it; the URI holds the authenticator's secret, so it is shown on the \
            terminal only, never on stderr, and without a terminal nowhere unless --print-uri \
            prints it on standard output (without a terminal, and without both --print-uri and \
            --code, it exits 77 naming what is missing); mfa enable sms|email, mfa disable \(kinds) and mfa prefer \(kinds) \
            change one method (disabling one that is not enabled changes nothing and says so). \
            A first code Cognito refuses, wrong or expired, exits 77, as every refused code does. Cognito's refusals (email MFA outside the \
            pool's feature plan, SMS without a verified phone number) come with Cognito's own \
            code and message. The access token is refreshed first when it is too old.
            """,
        subcommands: [Show.self, Enable.self, Disable.self, Prefer.self],
        defaultSubcommand: Show.self)
    static let examples = [
        "cog-cred mfa",
        "cog-cred mfa enable totp",
        "cog-cred mfa prefer sms",
    ]

    /// Shown in the group's help; given here or after a subcommand, they
    /// reach it (CogCredCommand.arguments moves them there).
    @OptionGroup var globals: GlobalOptions

    /// The method named on the command line.
    struct Method: ParsableArguments {
        @Argument(help: ArgumentHelp("The method:", valueName: "method"))
        var kind: MFAKind
    }

    struct Show: ParsableCommand, HelpExamples {
        static let configuration = CommandConfiguration(abstract: "Print each method: enabled, and preferred.")
        static let examples = [
            "cog-cred mfa show",
            "cog-cred mfa show --json",
        ]

        @OptionGroup var profileOptions: ProfileOptions

        @OptionGroup var output: OutputOptions

        func run() throws {
            let settings = try Wiring(profileOptions).tokenManager().mfaSettings()
            if output.json { return Output.json(Self.json(settings)) }
            for kind in MFAKind.allCases {
                let state = settings.enabled.contains(kind) ? (settings.preferred == kind ? "enabled, preferred" : "enabled") : "not enabled"
                Output.data(kind.rawValue + String(repeating: " ", count: 7 - kind.rawValue.count) + state)
            }
        }

        /// `mfa show --json`: every method, enabled and preferred.
        static func json(_ settings: MFASettings) -> JSONValue {
            .object(MFAKind.allCases.reduce(into: [:]) { methods, kind in
                methods[kind.rawValue] = .object(["enabled": .bool(settings.enabled.contains(kind)), "preferred": .bool(settings.preferred == kind)])
            })
        }
    }

    struct Enable: ParsableCommand, HelpExamples {
        static let configuration = CommandConfiguration(
            abstract: "Enable a method; totp first sets up an authenticator app.")
        static let examples = [
            "cog-cred mfa enable totp",
            "cog-cred mfa enable totp --print-uri --code -",
            "cog-cred mfa enable email",
        ]

        @OptionGroup var profileOptions: ProfileOptions
        @OptionGroup var method: Method

        @Option(help: ArgumentHelp("With totp: the first code the app shows; '-' reads it from standard input.", valueName: "code"))
        var code: String?

        @Flag(help: "With totp: print the otpauth:// URI, which holds the authenticator's secret, on standard output (without a terminal it is shown nowhere else).")
        var printURI = false

        func run() throws {
            let manager = try Wiring(profileOptions).tokenManager()
            let settings: MFASettings
            if method.kind == .totp {
                settings = try manager.addAuthenticator(
                    firstCode: { uri in
                        try ChallengePrompts.authenticatorFirstCode(
                            uri: uri, intro: "Add this account to your authenticator app (scan the code or paste the URI):",
                            given: code, option: .code, printURI: printURI)
                    },
                    codeAgain: { refused in
                        guard ChallengePrompts.mayAskAgain(refused, given: code != nil) else { return nil }
                        return try PasswordInput.askCode("Enter the code the app shows: ")
                    })
            } else {
                settings = try manager.changeMFA(method.kind, .enable)
            }
            Output.note("Enabled \(method.kind.rawValue) MFA\(settings.preferred == method.kind ? " (preferred)" : "").")
        }
    }

    struct Disable: ParsableCommand, HelpExamples {
        static let configuration = CommandConfiguration(
            abstract: "Disable a method (one that is not enabled is left as it is, and said so).")
        static let examples = [
            "cog-cred mfa disable sms",
            "cog-cred mfa disable totp --profile work",
        ]

        @OptionGroup var profileOptions: ProfileOptions
        @OptionGroup var method: Method

        func run() throws {
            let wasEnabled = try Wiring(profileOptions).tokenManager().disableMFA(method.kind)
            Output.note(wasEnabled ? "Disabled \(method.kind.rawValue) MFA." : "\(method.kind.rawValue) MFA was not enabled; nothing changed.")
        }
    }

    struct Prefer: MFAChangeCommand, HelpExamples {
        static let configuration = CommandConfiguration(abstract: "Make a method the one sign-in asks for (enabling it).")
        static let examples = [
            "cog-cred mfa prefer totp",
            "cog-cred mfa prefer email --profile work",
        ]
        static let change = MFAChange.prefer

        @OptionGroup var profileOptions: ProfileOptions
        @OptionGroup var method: Method

        func done(_ method: String) -> String { "Sign-in now asks for \(method) MFA." }
    }
}

/// `mfa prefer`: one change to one method.
protocol MFAChangeCommand: ParsableCommand {
    static var change: MFAChange { get }
    var profileOptions: ProfileOptions { get }
    var method: MFA.Method { get }
    /// What was done, for the person.
    func done(_ method: String) -> String
}

extension MFAChangeCommand {
    func run() throws {
        try Wiring(profileOptions).tokenManager().changeMFA(method.kind, Self.change)
        Output.note(done(method.kind.rawValue))
    }
}
