import ArgumentParser
import CogCredWrite

/// The person's part while a security key works: its PIN (from the
/// terminal with echo off, or one line of standard input with
/// `--pin-stdin`; never an argument or a variable) and the touch it waits
/// for, said on stderr before it blocks.
struct SecurityKeyPrompts: PasskeyPrompts {
    /// `--pin-stdin`.
    var pinFromStdin = false

    func securityKeyPIN(retriesLeft: Int?) throws -> String {
        if pinFromStdin { return try PasswordInput.fromStandardInput(what: "security key PIN") }
        guard PasswordInput.hasTerminal else {
            // As a password: input only a terminal or the flag can give (64).
            throw InputError("the security key needs its PIN and there is no terminal to ask on: give it with --pin-stdin", category: .usage)
        }
        let left = retriesLeft.map { " (\($0) \($0 == 1 ? "try" : "tries") left)" } ?? ""
        return try PasswordInput.prompt("PIN for the security key\(left): ")
    }

    func touchSecurityKey(choosing: Bool) {
        Output.note(choosing ? "Several security keys: touch the one to use..." : "Touch your security key...")
    }
}

/// `--authenticator` and `--pin-stdin`, for the commands that use a security key.
struct SecurityKeyOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The security key: a libfido2 device path (/dev/hidrawN) or unix:/path/to/socket (a virtual key); default: COG_CRED_AUTHENTICATOR, else the first key found.",
            valueName: "path"),
        completion: .file())
    var authenticator: String?

    @Flag(help: "Read the security key's PIN, when it needs one, from the next line of standard input.")
    var pinStdin = false

    var prompts: SecurityKeyPrompts { SecurityKeyPrompts(pinFromStdin: pinStdin) }

    func validate() throws {
        if let authenticator, authenticator.isEmpty || authenticator.contains(where: { $0.isNewline }) {
            throw ValidationError("--authenticator takes a device path such as /dev/hidraw0 or unix:/path/to/socket")
        }
    }
}
