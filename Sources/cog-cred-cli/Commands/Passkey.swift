import ArgumentParser
import CogCredWrite

/// `cog-cred passkey`: the signed-in user's passkeys: added with a security
/// key (StartWebAuthnRegistration, the key, CompleteWebAuthnRegistration),
/// listed (ListWebAuthnCredentials) and removed (DeleteWebAuthnCredential),
/// with their access token.
struct PasskeyCommand: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "passkey",
        abstract: "Add a passkey on a security key, list your passkeys, or remove one.",
        discussion: """
            A passkey lets you sign in with a FIDO2 security key and no password \
            (cog-cred sign-in --method passkey), on a pool that offers passkeys \
            (docs/passkeys.md). cog-cred passkey add makes one on the key (USB or NFC, \
            through libfido2; --authenticator or COG_CRED_AUTHENTICATOR names it) for the \
            profile's relying party (configure --passkey-rp-id, by default the host of \
            --domain) and registers it with Cognito, which names it. The key asks for a \
            touch, and for its PIN when it has one (on the terminal, or --pin-stdin). \
            cog-cred passkey list prints one line a passkey: its name, id, when it was \
            added (RFC 3339, UTC) and how it is attached; --json prints an array of \
            {"id", "name", "relying_party", "attachment", "transports", "created"}. \
            cog-cred passkey remove ID removes one (exit 65 for an id Cognito does not know). \
            All three need the aws.cognito.signin.user.admin scope, which a sign-in through \
            the pool's API has, and a browser sign-in has only when --scopes asks for it; \
            the access token is refreshed first when it is too old.
            """,
        subcommands: [Add.self, List.self, Remove.self],
        defaultSubcommand: List.self)
    static let examples = [
        "cog-cred passkey add",
        "cog-cred passkey list --json",
        "cog-cred passkey remove AbCdEf0123456789AbCdEf",
    ]

    /// Shown in the group's help; given here or after a subcommand, they
    /// reach it (CogCredCommand.arguments moves them there).
    @OptionGroup var globals: GlobalOptions

    struct Add: ParsableCommand, HelpExamples {
        static let configuration = CommandConfiguration(abstract: "Make a passkey on a security key and register it with Cognito.")
        static let examples = [
            "cog-cred passkey add",
            "cog-cred passkey add --profile work --authenticator /dev/hidraw3",
        ]

        @OptionGroup var profileOptions: ProfileOptions
        @OptionGroup(title: "Security key") var securityKey: SecurityKeyOptions

        func run() throws {
            let manager = try Wiring(profileOptions).tokenManager(authenticator: securityKey.authenticator)
            let added = try manager.addPasskey(prompts: securityKey.prompts)
            let name = added?.name.map { " '\($0.printable)'" } ?? ""
            Output.note("Added passkey\(name)\(added.map { " (\($0.id.printable))" } ?? ""): sign in with cog-cred sign-in --method passkey.")
        }
    }

    struct List: ParsableCommand, HelpExamples {
        static let configuration = CommandConfiguration(abstract: "Print your passkeys.")
        static let examples = [
            "cog-cred passkey list",
            "cog-cred passkey list --profile work --json",
        ]

        @OptionGroup var profileOptions: ProfileOptions

        @OptionGroup var output: OutputOptions

        func run() throws {
            let passkeys = try Wiring(profileOptions).tokenManager().passkeys()
            if output.json { return Output.json(.array(passkeys.map(Self.json))) }
            if passkeys.isEmpty { return Output.note("No passkeys: cog-cred passkey add makes one on a security key.") }
            for passkey in passkeys { Output.data(Self.line(passkey)) }
        }

        /// One passkey, one line; its name and id are Cognito's words, so
        /// neither can bring a control character to the terminal.
        static func line(_ passkey: Passkey) -> String {
            let created = passkey.created.map(rfc3339) ?? "-"
            return "\((passkey.name ?? "-").printable)  \(passkey.id.printable)  \(created)  \((passkey.attachment ?? "-").printable)"
        }

        /// One passkey of `passkey list --json`: every key always there, null when Cognito did not say.
        static func json(_ passkey: Passkey) -> JSONValue {
            let text = { (value: String?) in value.map { JSONValue.string($0) } ?? .null }
            return .object([
                "id": .string(passkey.id), "name": text(passkey.name), "relying_party": text(passkey.relyingParty),
                "attachment": text(passkey.attachment), "transports": .array(passkey.transports.map { .string($0) }),
                "created": text(passkey.created.map(rfc3339)),
            ])
        }
    }

    struct Remove: ParsableCommand, HelpExamples {
        static let configuration = CommandConfiguration(
            abstract: "Remove a passkey by its id (cog-cred passkey list shows them).",
            usage: "cog-cred passkey remove [--profile <name>] [--debug] [--no-prompt] [--yes] <id>",
            discussion: "On a terminal it asks first (default no); --yes answers yes, and without a terminal nothing is asked.")
        static let examples = [
            "cog-cred passkey remove AbCdEf0123456789AbCdEf",
            "cog-cred passkey remove --profile work -bCdEf0123456789AbCdEf",
            "cog-cred passkey remove --yes AbCdEf0123456789AbCdEf",
        ]

        @OptionGroup var profileOptions: ProfileOptions

        // A credential id is base64url, so one in 64 begins with "-": the parser
        // would take it for an option. Every word it does not know is kept, and
        // validate() finds the one id among them (a "--" before it is allowed too).
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The passkey's id, as cog-cred passkey list shows it.", valueName: "id"))
        var words: [String] = []

        @OptionGroup var confirmation: ConfirmOptions

        var id: String { words.first { $0 != "--" } ?? "" }

        func validate() throws {
            let given = words.filter { $0 != "--" }
            guard let id = given.first else { throw ValidationError("missing expected argument '<id>'") }
            if given.count > 1 { throw ValidationError("unexpected argument '\(given[1].printable)'") }
            // WebAuthn: a credential id is base64url of 16 to 1023 bytes.
            let alphabet = id.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 45 || $0 == 95 }
            if id.utf8.count < 22 || id.utf8.count > 1400 || !alphabet {
                if id.hasPrefix("-") { throw ValidationError("unknown option '\(id.printable)'") }
                throw ValidationError("'\(id.printable)' is not a passkey id (cog-cred passkey list shows them)")
            }
        }

        func run() throws {
            let manager = try Wiring(profileOptions).tokenManager()
            try confirmation.confirm("Remove passkey \(id)? It will no longer sign in.")
            try manager.removePasskey(id)
            Output.note("Removed passkey \(id): it no longer signs in.")
        }
    }
}
