import ArgumentParser
import CogCredWrite

#if canImport(Glibc)
import Glibc
#endif

struct SignIn: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        commandName: "sign-in",
        abstract: "Sign in and keep the tokens in the Secret Service.",
        discussion: """
            The username is --username's, else the profile's (configure --username), else \
            asked for on the terminal; without a terminal, sign-in exits 64 saying how to give one.

            By default the password is proved with SRP and never sent (configure --auth-flow \
            password sends it over TLS instead). It is read from standard input with \
            --password-stdin (one line), or asked for on the terminal with echo off; never \
            from the command line or the environment.

            Challenges: a new password (NEW_PASSWORD_REQUIRED) is asked for on the terminal \
            or read from the next line of standard input with --new-password-stdin; an MFA \
            code (authenticator app, SMS or email; where a code was sent, the masked address \
            is shown) is asked for or given with --mfa-code (--mfa-code - reads it from the \
            next line of standard input once the message is sent); a choice of MFA method \
            with --mfa-type (\(MFAKind.allCases.map(\.rawValue).spoken())); setting up an authenticator app shows an otpauth:// \
            URI (and a QR code when qrencode is installed) on the terminal, never on stderr (it \
            holds the authenticator's secret; without a terminal it is shown nowhere unless \
            --print-uri prints it on standard output), and then takes the first code. \
            Without a terminal and without the flag, sign-in exits 77 naming the flag.

            --auth-flow choice (or configure --auth-flow choice) is the pool's choice-based \
            sign-in (USER_AUTH): --method email-otp or sms-otp signs in with a one-time code \
            sent by email or SMS (the masked address is shown, then the code is asked for, \
            or read from the next line of standard input with --code -), password or srp with \
            the password; configure --method keeps a default. Without a method, Cognito lists \
            what the pool offers this user: chosen on the terminal, or without one sign-in \
            exits 77 naming --method and the choices. --method alone means --auth-flow choice.

            --method passkey signs in with a passkey on a FIDO2 security key (USB or NFC, \
            through libfido2; --authenticator or COG_CRED_AUTHENTICATOR names one) and reads \
            no password. The key signs only for the profile's relying party (configure \
            --passkey-rp-id, by default the host of --domain): a challenge for any other is \
            refused (exit 76) before the key is asked anything. "Touch your security key" \
            is said while it waits; its PIN, when it needs one, is asked for on the terminal \
            or read from the next line of standard input with --pin-stdin, and tried once \
            only, before the touch is asked for (a wrong one exits 77 with the tries left). \
            A user with no passkey (Cognito offers none) exits 77 saying to sign in another \
            way and add one with cog-cred passkey add. Passkeys synced to a phone or a \
            platform sign in through the managed login (--browser). cog-cred passkey adds, \
            lists and removes passkeys.

            --auth-flow custom (or configure --auth-flow custom) answers the pool's own \
            challenges (CUSTOM_AUTH, its Lambda triggers) with no password; custom-srp \
            proves the password with SRP first, as Amplify does. Each challenge's public \
            parameters are shown on stderr, one key: value a line; the answer is asked for \
            on the terminal, or read from standard input with --answer -, one line a round.

            --browser (or configure --auth-flow browser) signs in through the pool's managed \
            login instead, as a person would on the web (Google, Entra, Okta or SAML behind \
            the pool): the authorization code flow with PKCE. cog-cred listens on the \
            profile's redirect URI (http://localhost:8400/callback unless configure \
            --redirect-uri says otherwise; on 127.0.0.1 and ::1), opens $BROWSER or \
            xdg-open at a one-time address there that leads on to the pool's \
            /oauth2/authorize (the full address, printed on stderr, is on no command \
            line), and takes requests from your own processes only; the browser comes \
            back with a code, which is exchanged for the three tokens. --no-browser prints the \
            address only: open it on any machine and paste back the address the browser ended \
            on (or just its code). --timeout bounds the wait (300 s); Ctrl-C stores nothing.

            Pools that remember devices: after a sign-in that makes this machine a new device \
            of the user's, cog-cred confirms it (ConfirmDevice, named by --device-name, else \
            the host name) with a random device password kept in the Secret Service. A pool \
            set to always remember devices remembers it; where the user chooses, \
            --remember-device or --no-remember-device decides (on a terminal without either, \
            cog-cred asks; otherwise not remembered). Sign-ins from a remembered device prove \
            it by SRP (DEVICE_SRP_AUTH) and skip MFA; --remember-device on a later sign-in \
            remembers a device that was not. Sign-out keeps the device; cog-cred devices \
            lists and forgets devices.

            A machine profile (configure --grant client-credentials) has no user and no \
            password: sign-in gets its first access token from the domain's token endpoint \
            with the app client's id and secret, as every later call does when the token \
            is about to expire.
            """,
        aliases: ["login"])
    static let examples = [
        "cog-cred sign-in",
        "cog-cred sign-in --profile work --username alice",
        "cog-cred sign-in --method email-otp",
        "cog-cred sign-in --method passkey --authenticator /dev/hidraw3",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    @Option(help: ArgumentHelp("Username or alias (default: the profile's username).", valueName: "name"))
    var username: String?

    @Flag(help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    @Flag(help: "Read a required new password from the next line of standard input.")
    var newPasswordStdin = false

    @Option(help: ArgumentHelp("The MFA code (authenticator app, SMS or email); '-' reads it from standard input when Cognito asks.", valueName: "code"))
    var mfaCode: String?

    @Flag(help: "When Cognito requires an authenticator app: print its otpauth:// URI, which holds its secret, on standard output.")
    var printURI = false

    @Option(help: ArgumentHelp("The MFA method when Cognito offers a choice:", valueName: "type"))
    var mfaType: MFAKind?

    @Option(help: ArgumentHelp("How to sign in, this once (default: the profile's, else srp):", valueName: "flow"))
    var authFlow: AuthFlow?

    @Option(help: ArgumentHelp("With --auth-flow choice, the method (default: the profile's, else Cognito's list).", valueName: "method"))
    var method: SignInMethod?

    @OptionGroup(title: "Security key (--method passkey)") var securityKey: SecurityKeyOptions

    @Option(help: ArgumentHelp("The one-time code of --method email-otp or sms-otp; '-' reads it from standard input when it is sent.", valueName: "code"))
    var code: String?

    @Option(help: ArgumentHelp("'-': answers to custom challenges (--auth-flow custom), one a line of standard input.", valueName: "-"))
    var answer: String?

    @Flag(help: "Sign in through the pool's managed login in a browser, this once.")
    var browser = false

    @Flag(help: "Browser sign-in without starting a browser here: print the address, then paste back where the browser ended.")
    var noBrowser = false

    @Option(help: ArgumentHelp("Seconds to wait for the browser.", valueName: "seconds"))
    var timeout: Int = 300

    @Flag(inversion: .prefixedNo, help: "Where the pool lets the user choose: remember this device, so that sign-ins from it skip MFA (default: ask on a terminal, else no).")
    var rememberDevice: Bool?

    @Option(help: ArgumentHelp("The name this machine gets as a device of the user's (default: the host name).", valueName: "name"))
    var deviceName: String?

    func validate() throws {
        if let answer, answer != "-" {
            throw ValidationError("--answer takes '-' (the answers, one a line of standard input), never an answer itself")
        }
        if method != nil, let authFlow, authFlow != .choice {
            throw ValidationError("--method goes with --auth-flow choice, not \(authFlow.rawValue)")
        }
        if !(1...3600).contains(timeout) { throw ValidationError("--timeout takes 1 to 3600 seconds") }
        if browser && noBrowser { throw ValidationError("--browser and --no-browser cannot be used together") }
        if let deviceName, deviceName.isEmpty || deviceName.count > 1024 || deviceName.contains(where: \.isNewline) {
            throw ValidationError("--device-name takes one line of 1 to 1024 characters")
        }
    }

    func run() throws {
        let wiring = Wiring(profileOptions)
        // Configured here even with an agent: a sign-in talks to Cognito from this machine.
        let manager = try wiring.tokenManager(authenticator: securityKey.authenticator, configuredHere: true)
        let way = manager.signInWay(
            flow: authFlow, method: method,
            browser: browser || noBrowser)
        let profile = "(profile '\(manager.profileName)')"
        switch way {
        case .clientCredentials:
            let tokens = try manager.refresh()
            let scopes = tokens.access.claims.scope.map { ", scopes \($0)" } ?? ""
            Output.note("Got an access token for app client \(manager.profile.clientID)\(scopes) \(profile)\(Self.until(tokens)).")
        case .browser:
            let tokens = try signInWithBrowser(manager, wiring)
            let who = tokens.id?.claims.cognitoUsername ?? tokens.access.claims.subjectName ?? "the user"
            Output.note("Signed in as \(who) \(profile)\(Self.until(tokens)).")
        case .api(let flow, let preferred):
            let user = try username ?? manager.profile.username ?? Self.askUsername()
            guard !user.isEmpty else {
                throw ValidationError("no username: pass --username or set one with cog-cred configure --username")
            }
            let tokens = try signIn(manager, as: user, flow: flow, method: preferred)
            Output.note("Signed in as \(tokens.access.claims.subjectName ?? user) \(profile)\(Self.until(tokens)).")
            Self.note(tokens.device)
        }
    }

    /// Neither --username nor the profile's: asked on the terminal, and
    /// without one the empty name the caller refuses.
    static func askUsername() throws -> String {
        guard PasswordInput.hasTerminal else { return "" }
        return try PasswordInput.ask("Username: ")
    }

    static func until(_ tokens: RefreshedTokens) -> String {
        tokens.access.claims.exp.map { "; access token valid until \(rfc3339($0))" } ?? ""
    }

    /// Through Cognito's API, with this command line's answers to its challenges.
    func signIn(_ manager: TokenManager, as user: String, flow: AuthFlow, method preferred: SignInMethod?) throws
        -> RefreshedTokens
    {
        let readPassword = { () throws -> String in
            passwordStdin ? try PasswordInput.fromStandardInput() : try PasswordInput.prompt("Password for \(user): ")
        }
        let answers = ChallengePrompts(
            newPasswordFromStdin: newPasswordStdin, mfaCode: mfaCode,
            mfaType: mfaType, code: code, method: preferred, methodIsDefault: method == nil,
            answersFromStdin: answer == "-", printURI: printURI, securityKey: securityKey.prompts, profileName: manager.profileName)
        let device = DeviceOptions(name: deviceName ?? Self.hostName(), remember: rememberDevice)
        return try manager.signIn(
            username: user, password: readPassword, flow: flow, method: preferred, device: device, answers: answers)
    }

    /// What became of this machine as the user's device.
    static func note(_ device: DeviceOutcome?) {
        switch device {
        case nil: break
        case .signedInAsRemembered: Output.note("This machine is a remembered device: no MFA was asked.")
        case .remembered(let name): Output.note("This machine is now a remembered device ('\(name.printable)'): signing in here skips MFA.")
        case .notRemembered(let name):
            Output.note("This machine is a device of yours ('\(name.printable)'), not remembered: sign-in asks for MFA (sign-in --remember-device remembers it).")
        case .failed(let reason):
            Output.note("cog-cred: warning: this machine could not be made a remembered device (\(reason.printable)); sign-in asks for MFA as before")
        }
    }

    /// The device name by default: this machine's host name.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "cog-cred" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "cog-cred" : name
    }

    /// The managed login, in a browser here or (--no-browser) anywhere.
    func signInWithBrowser(_ manager: TokenManager, _ wiring: Wiring) throws -> RefreshedTokens {
        do {
            return try manager.signInWithBrowser(
                noBrowser ? .elsewhere : .here(timeout: timeout), issuers: { try wiring.issuers(manager.profile) },
                person: TerminalBrowser(environment: wiring.environment))
        } catch AuthorizationRequest.CallbackError.notACallback {
            throw ValidationError("that is neither the address the browser ended on nor a code")
        }
    }
}

/// A browser sign-in's person at this terminal: the browser started here,
/// the addresses on stderr, a pasted answer asked for on the terminal.
struct TerminalBrowser: BrowserSignInPerson {
    let environment: [String: String]

    func openBrowser(_ address: String) -> Bool { Browser.open(address, environment: environment) }

    func show(authorizeURL: String, opened: Bool) {
        // The whole address goes to the terminal only: a command line is
        // every local user's to read. Never a URL's credentials, though.
        let url = LibcurlURL.shown(authorizeURL)
        Output.note(
            opened
                ? "Opening the browser to sign in; if it does not come up, open this address:\n\n  \(url)\n"
                : "Open this address in a browser to sign in:\n\n  \(url)\n")
    }

    func pastedCallback(authorizeURL url: String) throws -> String {
        guard PasswordInput.hasTerminal else {
            throw ValidationError("--no-browser asks for the address the browser ended on, and there is no terminal to ask on")
        }
        Output.note("Open this address in a browser, on any machine, and sign in:\n\n  \(LibcurlURL.shown(url))\n")
        return try PasswordInput.ask("Then paste the address the browser ended on (or just the code): ")
    }

    func pasteInstead(authorizeURL url: String, waiting timeout: Int) throws -> String? {
        let why = "no browser could be started here (no display, no $BROWSER)"
        guard PasswordInput.hasTerminal else {
            Output.note("cog-cred: \(why): open the address below on this machine within \(timeout) s, or sign in with --no-browser on a terminal.")
            return nil
        }
        Output.note("cog-cred: \(why): sign in on any machine instead, as --no-browser does.")
        return try pastedCallback(authorizeURL: url)
    }

    func note(_ line: String) { Output.note(line) }
}
