import CogCredWrite

/// Answers Cognito's sign-in challenges from flags, else from the terminal;
/// with neither, fails naming the flag (exit 77).
struct ChallengePrompts: ChallengeAnswers {
    var newPasswordFromStdin: Bool
    var mfaCode: String?
    var mfaType: MFAKind?

    func newPassword(for username: String) throws -> String {
        if newPasswordFromStdin { return try PasswordInput.fromStandardInput(what: "new password") }
        guard PasswordInput.hasTerminal else {
            throw AuthError.challengeNeedsInput(challenge: "a new password (NEW_PASSWORD_REQUIRED)", flag: "--new-password-stdin")
        }
        Output.note("Cognito requires a new password for \(username).")
        return try PasswordInput.newPassword(fromStandardInput: false)
    }

    func mfaCode(_ kind: MFAKind, destination: String?) throws -> String {
        let to = destination.map { " to \($0)" } ?? ""
        let what: String
        switch kind {
        case .totp: what = "the code from your authenticator app"
        case .sms: what = "the code sent by SMS\(to)"
        case .email: what = "the code sent by email\(to)"
        }
        if mfaCode == "-" {
            // A texted or emailed code exists only once Cognito has sent it:
            // a script answers on stdin after reading this line.
            Output.note("Cognito asks for \(what); reading it from standard input.")
            return try AccountValidation.normalizedCode(try PasswordInput.fromStandardInput(what: "MFA code"))
        }
        if let mfaCode { return try AccountValidation.normalizedCode(mfaCode) }
        guard PasswordInput.hasTerminal else {
            throw AuthError.challengeNeedsInput(challenge: what, flag: "--mfa-code")
        }
        return try AccountValidation.normalizedCode(try PasswordInput.ask("Enter \(what): "))
    }

    func chooseMFA(from options: [MFAKind]) throws -> MFAKind {
        if let mfaType {
            guard options.contains(mfaType) else {
                throw InputError("Cognito offers \(options.map(\.optionName).joined(separator: " or ")), not \(mfaType.optionName)", category: .usage)
            }
            return mfaType
        }
        guard PasswordInput.hasTerminal else {
            throw AuthError.challengeNeedsInput(challenge: "a choice of MFA method", flag: "--mfa-type \(options.map(\.optionName).joined(separator: "|"))")
        }
        let menu = options.enumerated().map { "\($0.offset + 1)) \($0.element.optionName)" }.joined(separator: "  ")
        let answer = try PasswordInput.ask("Second factor: \(menu)? ")
        if let number = Int(answer), number >= 1, number <= options.count { return options[number - 1] }
        if let named = options.first(where: { $0.optionName == answer.lowercased() }) { return named }
        throw InputError("'\(answer)' is not one of the choices")
    }

    func setUpAuthenticator(uri: String) throws -> String {
        Output.note("Cognito requires an authenticator app. Add this account to it (scan the code or paste the URI):")
        if PasswordInput.hasTerminal { QRCode.render(uri) }
        Output.note(uri)
        if mfaCode == "-" {
            Output.note("Reading the first code from standard input.")
            return try AccountValidation.normalizedCode(try PasswordInput.fromStandardInput(what: "MFA code"))
        }
        if let mfaCode { return try AccountValidation.normalizedCode(mfaCode) }
        guard PasswordInput.hasTerminal else {
            throw AuthError.challengeNeedsInput(challenge: "the first code of the new authenticator", flag: "--mfa-code")
        }
        return try AccountValidation.normalizedCode(try PasswordInput.ask("Enter the code the app shows: "))
    }

}
