import ArgumentParser
import CogCredWrite

#if canImport(Glibc)
import Glibc
#endif

@main
struct CogCredCommand: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "cog-cred",
        abstract: "Keep Amazon Cognito tokens in the Secret Service and hand out fresh ones.",
        usage: "cog-cred [--profile <name>] <subcommand> [<options>]",
        discussion: """
            Sign in once; cog-cred keeps the access, ID and refresh tokens in the \
            desktop keyring (the Secret Service), refreshes them before they expire, \
            and prints a valid token for any tool: curl -H "$(cog-cred get-header)" URL

            stdout carries data only (tokens, headers, status); messages go to stderr.

            EXIT STATUS
              0   success
              1   a question before destroying answered no, or a prompt ended
                  with Ctrl-D (nothing changed); anything else;
                  docker-credential: every failure, with the message on
                  stdout as docker's helper protocol wants
              64  usage error: bad arguments (setup-git without a host or
                  https:// URL, setup-docker without a registry, an agent
                  log that is a link or another user's file), or a password
                  is needed but there is no terminal and no password on
                  standard input (--password-stdin)
              65  malformed input data: an empty password, a code that is not
                  6 digits (before it is sent), three answers that are not
                  one of a menu's choices, a bad email address, a password
                  the pool rejects
              69  the Secret Service is unavailable or locked (status still
                  prints its report, with keyring: locked), or the agent
                  COG_CRED_AGENT names cannot be reached or is another
                  user's (its socket too), or the path is a link or in a
                  directory others can write; agent: one already answers there; setup-git,
                  setup-kubectl: git or kubectl is not installed; a
                  passkey: no security key found (or no libfido2); unlock:
                  no gnome-keyring to unlock
              74  the output could not be written (stdout closed or full)
              75  temporary failure: network (the endpoint or the proxy),
                  timeout, throttling, Cognito 5xx or an unreadable answer
              76  a passkey challenge for another relying party than the
                  profile's (refused before the security key is asked); an
                  agent of another version
              77  not signed in, credentials rejected (a code Cognito refuses
                  as wrong or expired, too), session expired, or the tokens
                  belong to another pool or app client; unlock: a wrong
                  keyring password
              78  the profile is missing or its configuration is invalid
                  (setup-docker: docker's config.json is malformed),
                  or the endpoint is not Cognito (a 4xx without its JSON error);
                  a proxy refused the credentials (407); a proxy, endpoint
                  or domain URL libcurl cannot read (never shown); FIPS asked
                  for in a region without FIPS endpoints; an agent's machine
                  that does not configure the profile written to it
              126 exec: the command was found but could not be run
              127 exec: the command was not found

            GLOBAL OPTIONS
              --profile NAME (or -p NAME) picks the profile, and --debug (or
              COG_CRED_DEBUG=1) traces each call to Cognito and each keyring
              step on stderr, never a secret: on every command, in any
              position, exec's command aside (cog-cred -p work passkey list,
              cog-cred passkey list -p work). Alike on every command that
              takes them: --json prints JSON (token, whoami, configure,
              profiles, status, mfa show, devices list, passkey list,
              version); --id-token hands out the ID token (token, get-header,
              kubectl-credential, exec, setup-kubectl); --yes answers yes to
              the question a command asks on a terminal before it destroys
              something (configure, sign-out, devices forget, passkey
              remove).

            ENVIRONMENT
              COG_CRED_PROFILE   profile when --profile is not given
              XDG_CONFIG_HOME    config base directory (default ~/.config);
                                 profiles live in cog-cred/config.json
              AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER, AWS_ENDPOINT_URL
                                 override the profile's Cognito endpoint
                                 (plain http:// only to this machine, unless
                                 configure --allow-insecure-http)
              HTTPS_PROXY, https_proxy, http_proxy, ALL_PROXY, NO_PROXY
                                 the proxy for each request, by curl's rules
                                 (USER:PASSWORD@ in the URL, never shown)
              AWS_USE_FIPS_ENDPOINT   true: AWS's FIPS endpoints (as
                                 use_fips_endpoint in ~/.aws/config, and
                                 configure --fips); GovCloud is always FIPS
              DBUS_SESSION_BUS_ADDRESS   the session bus of the Secret Service
              COG_CRED_AGENT     the socket of a cog-cred agent: every command
                                 keeps its sessions there instead of the
                                 Secret Service (never falling back to it)
              DISPLAY, WAYLAND_DISPLAY   a locked keyring asks for its password
                                 in the keyring's own dialog (not with
                                 --no-prompt); without them: 69 at once
              COG_CRED_UNLOCK_WAIT   seconds to wait for that dialog (120)
              COG_CRED_DEBUG     1: the trace --debug turns on
              COG_CRED_AUTHENTICATOR   the security key for passkeys, when
                                 --authenticator is not given (/dev/hidrawN
                                 or unix:/path/to/socket)
            """,
        version: cogCredVersion,
        // Grouped by what a reader comes for; the help prints them in this
        // order, each group under its name.
        groupedSubcommands: [
            CommandGroup(name: "Sign in and out", subcommands: [SignIn.self, SignOut.self, Status.self, Whoami.self]),
            CommandGroup(name: "Tokens for tools", subcommands: [
                Token.self, GetHeader.self, Refresh.self, Exec.self, GitCredentialCommand.self, DockerCredentialCommand.self,
                KubectlCredential.self, AWSCredentialsCommand.self, Proxy.self,
            ]),
            CommandGroup(name: "Account", subcommands: [
                SignUp.self, ConfirmSignUp.self, ResendCode.self, ForgotPassword.self, ConfirmForgotPassword.self,
                ChangePassword.self, MFA.self, Devices.self, PasskeyCommand.self,
            ]),
            CommandGroup(name: "Settings", subcommands: [
                Configure.self, Profiles.self, SetupGit.self, SetupKubectl.self, SetupDocker.self, Agent.self, Unlock.self, VersionCommand.self,
            ]),
        ]
    )

    /// Declared at the root too, so `cog-cred --profile <TAB>` completes a
    /// profile; `arguments()` moves them after the command's words.
    @OptionGroup var globals: GlobalOptions

    static let examples = [
        "cog-cred configure --profile work --user-pool-id us-east-1_Abc123 --client-id 1example23456789",
        "cog-cred sign-in --profile work",
        "cog-cred token --profile work",
        "cog-cred help token",
    ]

    /// The arguments, as if the subcommand had been named when the binary
    /// runs under a helper name (git runs `git-credential-cog-cred
    /// [--profile P] get`, docker `docker-credential-cog-cred get`): the
    /// front's rule (ReadRequest.commandWords), the profile options moved
    /// after a nested command's words too (`-p work passkey list`). `help
    /// NAME`'s words are names only: profile options there are dropped.
    static func arguments() -> [String] {
        rephrased(ReadRequest.commandWords(CommandLine.arguments) { path, word in HelpText.command(named: path + [word]) != nil })
    }

    /// The command lines that mean another, said as it: nothing at all is
    /// `--help`; `--help CMD` is `CMD --help`; `--version [--json]` is
    /// `version [--json]`.
    static func rephrased(_ words: [String]) -> [String] {
        guard let first = words.first else { return ["--help"] }
        if first == "help" { return CommandLineWords.profileOptions(words[...]).rest }
        if first == "--help" || first == "-h" {
            let named = words.dropFirst().prefix { !$0.hasPrefix("-") }
            if !named.isEmpty, HelpText.command(named: Array(named)) != nil { return Array(words.dropFirst()) + [first] }
        }
        if first == "--version" { return ["version"] + words.dropFirst() }
        return words
    }

    /// Runs the command and turns every failure into one line on stderr and a
    /// documented exit status.
    static func main() {
        Hardening.forbidCoreDumps()
        // libcurl loads on a thread while the command parses, reads its
        // config and prompts: ready, or nearly, by its first request.
        CurlTransport.preload()
        let arguments = DebugTrace.start(arguments(), variable: getenv(DebugSwitch.variable).map { String(cString: $0) })
        // docker, skopeo, podman and docker-py read a helper's failure from
        // stdout, and expect exit status 1, whatever the failure.
        let dockerHelper = arguments.first == "docker-credential"
        // `help NAME` of a command there is not: a usage error, as the
        // command itself would be (the parser would show the root's help, 0).
        if arguments.first == "help", let name = arguments.dropFirst().first, !name.hasPrefix("-"), !UsageError.commandNames.contains(name) {
            Output.error(UsageError.line("", arguments: Array(arguments.dropFirst())))
            finish(ExitStatus.usage)
        }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            finish(0)
        } catch let failure as DockerFailure {
            Output.data(failure.message.printable)
            finish(1)
        } catch let failure as any CogCredFailure {
            if dockerHelper {
                Output.data("cog-cred: \(ErrorWording.line(failure).printable)")
                finish(1)
            }
            let line = Wiring.describe(failure)
            Output.error(failure.category == .temporary ? NetworkReport.shared.waited(adding: line) : line)
            finish(ExitStatus.code(for: failure.category))
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure || (dockerHelper && code != .success) {
                // swift-argument-parser's own report spans several lines with
                // the whole usage; one line with a pointer to --help is kinder
                // in scripts and logs.
                let text = message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments"
                // In lower case, as every message of cog-cred's own.
                let cleaned = UsageError.lowercasingFirst(text.hasPrefix("Error: ") ? String(text.dropFirst(7)) : text)
                if dockerHelper {
                    Output.data("cog-cred: \(cleaned) (see: docker-credential-cog-cred --help)")
                    finish(1)
                }
                Output.error(UsageError.line(cleaned, arguments: arguments))
                finish(ExitStatus.usage)
            }
            // What exit(withError:) prints (help, the version, a completion
            // script on stdout; other errors on stderr), ended by finish.
            var text = fullMessage(for: error)
            if code == .success, text.hasPrefix("OVERVIEW:") || text.hasPrefix("USAGE:"), let command = HelpText.command(for: arguments) {
                text = HelpText.render(text, for: command, isRoot: command == CogCredCommand.self)
            }
            if code == .success && !text.isEmpty {
                Output.data(text)
            } else if !text.isEmpty {
                Output.note(text)
            }
            finish(code.rawValue)
        }
    }

    /// Ends the process without running exit handlers, on every path: libcurl's,
    /// OpenSSL's and GLib's only free memory the kernel takes back anyway,
    /// and cost about 3 ms per command; and run while libcurl or libsecret
    /// is still being loaded on another thread (CCurl.h, CSecret.h), they
    /// could free what that thread is setting up. Everything cog-cred writes
    /// goes out with write(2) as it is produced; stdio is flushed for
    /// anything else.
    static func finish(_ code: Int32) -> Never {
        SecretServiceStore.disconnect()
        fflush(nil)
        _exit(code)
    }
}
