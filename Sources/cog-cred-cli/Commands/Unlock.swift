import ArgumentParser
import CogCredWrite

/// `cog-cred unlock`: the running gnome-keyring's default collection
/// unlocked with its password, where its own dialog cannot be shown.
struct Unlock: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        abstract: "Unlock the running gnome-keyring with its password, without a display (SSH, a container).",
        discussion: """
            Unlocks the default keyring (collection) of the gnome-keyring that answers on this \
            session's D-Bus bus, through gnome-keyring's own unlock-by-password call: no dialog, \
            so it works over SSH. The password is read from standard input (--password-stdin, one \
            line, its newline dropped) or asked for on the terminal without echo; never from \
            the command line or the environment. It travels to the keyring over the Secret \
            Service's encrypted session, and cog-cred keeps no copy. From a script: \
            printf '%s\\n' "$KEYRING_PASSWORD" | cog-cred unlock --password-stdin

            (`gnome-keyring-daemon --unlock` does not do this: with a daemon already running it \
            starts a second one and leaves the first one's keyring locked.)

            Only gnome-keyring has such a call: KeePassXC and KWallet are unlocked their own \
            ways (docs/headless.md). With COG_CRED_AGENT set, cog-cred keeps its sessions in the \
            agent, not in this machine's keyring, and this command refuses (64).

            EXIT STATUS: 0 unlocked, or already unlocked (nothing read is used); 64 no terminal \
            and no --password-stdin, or COG_CRED_AGENT is set; 65 an empty password; 69 no \
            session bus, no Secret Service, no default keyring, or a Secret Service that is \
            not gnome-keyring; 77 the password is wrong (the keyring stays locked).
            """)
    static let examples = [
        "cog-cred unlock",
        "cog-cred unlock --password-stdin",
    ]

    @OptionGroup var globals: GlobalOptions

    @Flag(help: "Read the keyring's password from standard input (one line).")
    var passwordStdin = false

    func run() throws {
        globals.noteProfileUnused(by: "unlock", because: "it unlocks the keyring every profile keeps its items in")
        let wiring = Wiring()
        if let agent = wiring.agent {
            throw InputError(
                "COG_CRED_AGENT is set: cog-cred keeps its sessions in the agent at \(agent.connection.path.printable), never in this machine's keyring, so there is nothing for it to unlock here (the agent's own keyring is unlocked where the agent runs); to unlock this machine's gnome-keyring all the same: env -u COG_CRED_AGENT cog-cred unlock",
                category: .usage)
        }
        // Read at once, whatever the keyring's state: a script's pipe is
        // drained (no SIGPIPE for the writer) and an empty line is 65 every time.
        var piped = passwordStdin ? try PasswordInput.bytesFromStandardInput(what: "keyring's password") : nil
        defer { if piped != nil { PasswordInput.wipe(&piped!) } }
        let environment = wiring.environment
        let unlock = UnlockKeyring(
            keyring: Wiring.writer, provider: { SecretServiceProvider.current(environment: { environment[$0] }) })
        let outcome = try unlock.run { () throws -> [UInt8] in
            if let piped { return piped }
            return try PasswordInput.promptBytes("Keyring password: ")
        }
        switch outcome {
        case .alreadyUnlocked: Output.note("The keyring is already unlocked.")
        case .unlocked: Output.note("Keyring unlocked.")
        }
    }
}
