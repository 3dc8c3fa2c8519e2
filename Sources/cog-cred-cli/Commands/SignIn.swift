import ArgumentParser
import CogCredCore

struct SignIn: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-in",
        abstract: "Sign in and keep the tokens in the Secret Service.",
        discussion: """
            By default the password is proved with SRP and never sent (configure --auth-flow \
            password sends it over TLS instead). It is read from standard input with \
            --password-stdin (one line), or asked for on the terminal with echo off; never \
            from the command line or the environment.

            Challenges: a new password (NEW_PASSWORD_REQUIRED) is asked for on the terminal \
            or read from the next line of standard input with --new-password-stdin; an MFA \
            code (authenticator app or SMS) is asked for or given with --mfa-code (--mfa-code - \
            reads it from the next line of standard input once the SMS is sent); a choice of \
            MFA method with --mfa-type; setting up an authenticator app shows an otpauth:// \
            URI (and a QR code when qrencode is installed) and then takes the first code. \
            Without a terminal and without the flag, sign-in exits 77 naming the flag.

            A machine profile (configure --grant client-credentials) has no user and no \
            password: sign-in gets its first access token from the domain's token endpoint \
            with the app client's id and secret, as every later call does when the token \
            is about to expire.
            """)

    @OptionGroup var profileOptions: ProfileOptions

    @Option(help: ArgumentHelp("Username or alias (default: the profile's username).", valueName: "name"))
    var username: String?

    @Flag(help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    @Flag(help: "Read a required new password from the next line of standard input.")
    var newPasswordStdin = false

    @Option(help: ArgumentHelp("The MFA code (authenticator app or SMS); '-' reads it from standard input when Cognito asks.", valueName: "code"))
    var mfaCode: String?

    @Option(
        help: ArgumentHelp("The MFA method when Cognito offers a choice: totp or sms.", valueName: "type"),
        completion: Completions.mfaTypes)
    var mfaType: String?

    @Option(help: ArgumentHelp("srp or password (default: the profile's, else srp).", valueName: "flow"), completion: Completions.authFlows)
    var authFlow: String?

    func validate() throws {
        if let mfaType, !["totp", "sms"].contains(mfaType) { throw ValidationError("--mfa-type must be totp or sms") }
        if let authFlow, AuthFlow(rawValue: authFlow) == nil { throw ValidationError("--auth-flow must be srp or password") }
    }

    func run() throws {
        let wiring = Wiring()
        let manager = try wiring.tokenManager(profileOptions)
        if manager.profile.effectiveGrant == .clientCredentials {
            let tokens = try manager.refresh()
            let scopes = tokens.access.claims.scope.map { ", scopes \($0)" } ?? ""
            let until = tokens.access.claims.exp.map { "; access token valid until \(rfc3339($0))" } ?? ""
            return Output.note("Got an access token for app client \(manager.profile.clientID)\(scopes) (profile '\(manager.profileName)')\(until).")
        }
        guard let user = username ?? manager.profile.username, !user.isEmpty else {
            throw ValidationError("no username: pass --username or set one with cog-cred configure --username")
        }
        let password =
            passwordStdin
            ? try PasswordInput.fromStandardInput()
            : try PasswordInput.prompt("Password for \(user): ")
        let answers = ChallengePrompts(
            newPasswordFromStdin: newPasswordStdin, mfaCode: mfaCode,
            mfaType: mfaType.map { $0 == "sms" ? MFAKind.sms : MFAKind.totp })
        let flow = authFlow.flatMap(AuthFlow.init(rawValue:)) ?? manager.profile.effectiveAuthFlow
        let tokens = try manager.signIn(username: user, password: password, flow: flow, answers: answers)
        let who = tokens.access.claims.subjectName ?? user
        let until = tokens.access.claims.exp.map { "; access token valid until \(rfc3339($0))" } ?? ""
        Output.note("Signed in as \(who) (profile '\(manager.profileName)')\(until).")
    }
}
