import CogCredWrite

/// Answers Cognito's sign-in challenges from flags, else from the terminal;
/// with neither, fails naming the flag (exit 77).
struct ChallengePrompts: ChallengeAnswers {
    var newPasswordFromStdin: Bool
    var mfaCode: String?
    var mfaType: MFAKind?
    /// `--code`: the one-time code of a choice-based sign-in ("-": stdin).
    var code: String? = nil
    /// `--method` (or the profile's): the first factor to choose.
    var method: SignInMethod? = nil
    /// `method` is the profile's default, not the flag: one this user
    /// lacks gives way to the pool's list.
    var methodIsDefault = false
    /// `--answer -`: custom challenges' answers, one a line of standard input.
    var answersFromStdin = false
    /// `--print-uri`: a new authenticator's otpauth:// URI on stdout too.
    var printURI = false
    /// A passkey's PIN and touch.
    var securityKey = SecurityKeyPrompts()
    /// The profile signing in, for the steps out of a failure.
    var profileName = "default"

    func securityKeyPIN(retriesLeft: Int?) throws -> String { try securityKey.securityKeyPIN(retriesLeft: retriesLeft) }

    func touchSecurityKey(choosing: Bool) { securityKey.touchSecurityKey(choosing: choosing) }

    func rememberDevice(name: String) -> Bool {
        // Without a terminal the pool's question goes unanswered: not
        // remembered (--remember-device says yes in scripts).
        guard PasswordInput.hasTerminal else { return false }
        do {
            return try PasswordInput.askYesNo("Remember this device ('\(name.printable)') so that signing in here skips MFA?")
        } catch {
            // Ctrl-D ends the command here, as at any prompt; the sign-in
            // itself is done.
            Output.error("\(error.message): signed in; this machine is not remembered")
            CogCredCommand.finish(ExitStatus.code(for: error.category))
        }
    }

    func mayAnswerAgain(_ refused: RefusedAnswer) -> Bool {
        // Only a person at the terminal is asked again. An answer given by
        // an option or on standard input was the script's one answer: it
        // gets the refusal at once, and no code is ever sent twice.
        let given: Bool =
            switch refused.input {
            case .mfaCode, .authenticatorFirstCode: mfaCode != nil
            case .signInCode: code != nil
            case .newPassword: newPasswordFromStdin
            case .customAnswer: answersFromStdin
            default: true
            }
        return Self.mayAskAgain(refused, given: given)
    }

    /// Whether a refused answer is asked for again: only of a person at the
    /// terminal, never when `given` (by an option or on standard input), and
    /// then said why, with the try to come.
    static func mayAskAgain(_ refused: RefusedAnswer, given: Bool) -> Bool {
        guard !given && PasswordInput.hasTerminal else { return false }
        let why =
            switch refused.problem {
            case .wrongCode: "Cognito says the code is incorrect; enter it again"
            case .passwordPolicy(let policy): "Cognito refuses the new password (\(policy.oneLine(limit: 200))); choose another"
            case .sessionEnded: "Cognito ended the sign-in after that answer; signing in again (the password is not asked again)"
            }
        Output.note("cog-cred: \(why) (\(refused.nextTry) of \(RefusedAnswer.tries)).")
        return true
    }

    func newPassword(for username: String) throws -> String {
        if newPasswordFromStdin { return try PasswordInput.fromStandardInput(what: "new password") }
        guard PasswordInput.hasTerminal else {
            throw AuthError.challengeNeedsInput(challenge: "a new password (NEW_PASSWORD_REQUIRED)", input: .newPassword)
        }
        Output.note("Cognito requires a new password for \(username).")
        return try PasswordInput.newPassword(fromStandardInput: false)
    }

    func mfaCode(_ kind: MFAKind, destination: String?) throws -> String {
        try sentCode(kind, destination: destination, given: mfaCode, answer: .mfaCode, input: "MFA code")
    }

    func signInCode(_ kind: MFAKind, destination: String?) throws -> String {
        try sentCode(kind, destination: destination, given: code, answer: .signInCode, input: "code")
    }

    /// A code from `given` (the flag's value; "-": the next line of
    /// standard input), else from the terminal.
    func sentCode(_ kind: MFAKind, destination: String?, given: String?, answer: ChallengeInput, input: String) throws -> String {
        let to = destination.map { " to \($0)" } ?? ""
        let what: String
        switch kind {
        case .totp: what = "the code from your authenticator app"
        case .sms: what = "the code sent by SMS\(to)"
        case .email: what = "the code sent by email\(to)"
        }
        if given == "-" {
            // A texted or emailed code exists only once Cognito has sent it:
            // a script answers on stdin after reading this line.
            Output.note("Cognito asks for \(what); reading it from standard input.")
            return try AccountValidation.normalizedCode(try PasswordInput.fromStandardInput(what: input))
        }
        if let given { return try AccountValidation.normalizedCode(given) }
        guard PasswordInput.hasTerminal else {
            throw AuthError.challengeNeedsInput(challenge: what, input: answer)
        }
        return try PasswordInput.askCode("Enter \(what): ")
    }

    func customAnswer(_ parameters: [String: String]) throws -> String {
        // What the pool's trigger chose to show, one `key: value` a line
        // (the names the user is addressed by are left out: CognitoWire).
        Output.note("Cognito asks a custom challenge\(parameters.isEmpty ? "." : ":")")
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) { Output.note("  \(key.printable): \(value.printable)") }
        if answersFromStdin { return try PasswordInput.fromStandardInput(what: "answer") }
        guard PasswordInput.hasTerminal else {
            throw AuthError.challengeNeedsInput(challenge: "an answer to the pool's custom challenge", input: .customAnswer)
        }
        // Echo off: a pool's answers are often secrets (a PIN, a badge's code).
        return try PasswordInput.prompt("Answer: ", flagHint: "--answer -")
    }

    func chooseSignInMethod(from methods: [SignInMethod]) throws -> SignInMethod {
        let names = methods.map(\.rawValue)
        if let method, !(methodIsDefault && !methods.contains(method)) {
            if method == .passkey && !methods.contains(.passkey) {
                throw AuthError.noPasskey(profile: profileName, offered: methods)
            }
            guard methods.contains(method) else {
                throw InputError("Cognito offers \(names.joined(separator: ", ")) to this user, not \(method.rawValue)", category: .usage)
            }
            return method
        }
        guard !methods.isEmpty else {
            throw AuthError.unsupportedChallenge("a choice of sign-in with nothing but factors it does not know")
        }
        guard PasswordInput.hasTerminal else {
            throw AuthError.challengeNeedsInput(
                challenge: "a choice of sign-in method (it offers \(names.joined(separator: ", ")))", input: .signInMethod(methods))
        }
        return try PasswordInput.askChoice("Sign in with", from: methods, named: \.rawValue)
    }

    func chooseMFA(from options: [MFAKind]) throws -> MFAKind {
        if let mfaType {
            guard options.contains(mfaType) else {
                throw InputError("Cognito offers \(options.map(\.rawValue).joined(separator: " or ")), not \(mfaType.rawValue)", category: .usage)
            }
            return mfaType
        }
        guard PasswordInput.hasTerminal else {
            throw AuthError.challengeNeedsInput(challenge: "a choice of MFA method", input: .mfaKind(options))
        }
        return try PasswordInput.askChoice("Second factor", from: options, named: \.rawValue)
    }

    func setUpAuthenticator(uri: String) throws -> String {
        try Self.authenticatorFirstCode(
            uri: uri, intro: "Cognito requires an authenticator app. Add this account to it (scan the code or paste the URI):",
            given: mfaCode, option: .mfaCode, printURI: printURI)
    }

    /// Shows `uri` and its QR code on the terminal (`printURI`: also on
    /// stdout), then takes the first code from `given` ("-": the next line
    /// of standard input) or the terminal. The URI holds the authenticator's
    /// secret: never on stderr, which may be a file or a CI log.
    static func authenticatorFirstCode(
        uri: String, intro: String, given: String?, option: ChallengeInput.FirstCodeOption, printURI: Bool
    ) throws -> String {
        // The code is made from the secret the URI holds: without a
        // terminal, --print-uri is the only way to it, and a code given
        // without it cannot have been made from this secret.
        guard PasswordInput.hasTerminal || (given != nil && printURI) else {
            throw AuthError.challengeNeedsInput(
                challenge: "the first code of the new authenticator",
                input: .authenticatorFirstCode(needsURI: !printURI, needsCode: given == nil, codeOption: option))
        }
        if printURI { Output.data(uri) }
        let shown = PasswordInput.onTerminal { terminal in
            writeAll(terminal, intro + "\n")
            QRCode.render(uri, toFileDescriptor: terminal)
            writeAll(terminal, uri + "\n")
        }
        if !shown && !printURI {
            Output.note("No terminal: the authenticator's secret is not shown (--print-uri prints its otpauth:// URI on standard output).")
        }
        if given == "-" {
            Output.note("Reading the first code from standard input.")
            return try AccountValidation.normalizedCode(try PasswordInput.fromStandardInput(what: "MFA code"))
        }
        if let given { return try AccountValidation.normalizedCode(given) }
        return try PasswordInput.askCode("Enter the code the app shows: ")
    }
}
