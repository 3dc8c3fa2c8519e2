// A signed-in user's own MFA settings (`cog-cred mfa`): read and changed
// with the access token, refreshed first when it is too old; and the
// authenticator a sign-in sets up when the pool requires MFA.

/// What `mfa enable|disable|prefer` does to a method.
public enum MFAChange: Sendable {
    /// Sign-in may ask for it (it stays preferred if it was).
    case enable
    /// Sign-in no longer asks for it.
    case disable
    /// Enabled, and asked for without offering a choice.
    case prefer
}

extension TokenManager {
    /// The user's MFA methods, as Cognito has them now.
    public func mfaSettings() throws -> MFASettings {
        let access = try currentToken(.access).value
        let cognito: any CognitoMFA = try makeCognito()
        return try cognitoCall(.mfaSettings(profile: profileName)) { () throws(CognitoError) in try cognito.mfaSettings(accessToken: access) }
    }

    /// Enables, disables or prefers one method; the settings after it.
    /// Cognito's refusals (email MFA outside the pool's plan, SMS without a
    /// phone number, an authenticator not set up) come back as they are.
    @discardableResult
    public func changeMFA(_ kind: MFAKind, _ change: MFAChange) throws -> MFASettings {
        let access = try currentToken(.access).value
        let cognito: any CognitoMFA = try makeCognito()
        let preference: MFAPreference
        switch change {
        case .prefer: preference = MFAPreference(enabled: true, preferred: true)
        case .disable: preference = MFAPreference(enabled: false, preferred: false)
        case .enable:
            // Sent with its preference as it is: false would take it away.
            let now = try cognitoCall(.mfaSettings(profile: profileName)) { () throws(CognitoError) in try cognito.mfaSettings(accessToken: access) }
            preference = MFAPreference(enabled: true, preferred: now.preferred == kind)
        }
        try cognitoCall(.mfaSettings(profile: profileName)) { () throws(CognitoError) in try cognito.setMFAPreference(accessToken: access, [kind: preference]) }
        return try cognitoCall(.mfaSettings(profile: profileName)) { () throws(CognitoError) in try cognito.mfaSettings(accessToken: access) }
    }

    /// Disables one method, unless it is not enabled (GetUser's
    /// UserMFASettingList): then nothing is sent. Whether it was enabled.
    @discardableResult
    public func disableMFA(_ kind: MFAKind) throws -> Bool {
        let access = try currentToken(.access).value
        let cognito: any CognitoMFA = try makeCognito()
        let now = try cognitoCall(.mfaSettings(profile: profileName)) { () throws(CognitoError) in try cognito.mfaSettings(accessToken: access) }
        guard now.enabled.contains(kind) else { return false }
        let off = MFAPreference(enabled: false, preferred: false)
        try cognitoCall(.mfaSettings(profile: profileName)) { () throws(CognitoError) in try cognito.setMFAPreference(accessToken: access, [kind: off]) }
        return true
    }

    /// Sets up an authenticator app and enables it: `firstCode` is shown
    /// the otpauth:// URI and returns the first code the app shows.
    @discardableResult
    public func addAuthenticator(firstCode: (String) throws -> String, codeAgain: (RefusedAnswer) throws -> String? = { _ in nil })
        throws -> MFASettings
    {
        let token = try currentToken(.access)
        let cognito: any CognitoMFA = try makeCognito()
        let secret = try cognitoCall(.mfaSettings(profile: profileName)) { () throws(CognitoError) in try cognito.associateSoftwareToken(accessToken: token.value) }
        let account = token.claims.username ?? profile.username ?? profileName
        var code = try firstCode(authenticatorURI(secret: secret, account: account))
        // A wrong first code: Cognito keeps the association for another, as
        // at a sign-in's set-up; `codeAgain` gives it, or nil to stop.
        var nextTry = 2
        while true {
            do {
                try cognitoCall(.mfaSettings(profile: profileName)) { () throws(CognitoError) in try cognito.verifySoftwareToken(accessToken: token.value, code: code) }
                break
            } catch {
                let input = ChallengeInput.authenticatorFirstCode(needsURI: false, needsCode: true, codeOption: .code)
                guard let refused = RefusedAnswer(error, input: input, nextTry: nextTry), let next = try codeAgain(refused) else { throw error }
                code = next
                nextTry += 1
            }
        }
        return try changeMFA(.totp, .enable)
    }

    /// Setting up an authenticator before signing in: associate it, verify
    /// its first code, and return the sign-in's session for the answer.
    func setUpAuthenticator(_ cognito: any CognitoSignIn, session: String?, userID: String, answers: any ChallengeAnswers) throws
        -> String?
    {
        let (secret, associated) = try signInCall { () throws(CognitoError) in try cognito.associateSoftwareToken(session: session) }
        var code = try answers.setUpAuthenticator(uri: authenticatorURI(secret: secret, account: userID))
        // A wrong first code: the association's session takes another, as a
        // code challenge's does (the app is set up: only the code is asked).
        var nextTry = 2
        while true {
            do {
                return try signInCall { () throws(CognitoError) in try cognito.verifySoftwareToken(session: associated, code: code) }
            } catch {
                let input = ChallengeInput.authenticatorFirstCode(needsURI: false, needsCode: true, codeOption: .mfaCode)
                guard let again = RefusedAnswer(error, input: input, nextTry: nextTry), answers.mayAnswerAgain(again) else { throw error }
                code = try answers.mfaCode(.totp, destination: nil)
                nextTry += 1
            }
        }
    }

    /// What an authenticator app scans: the pool names the issuer.
    func authenticatorURI(secret: String, account: String) -> String {
        TOTPURI.make(secret: secret, account: account, issuer: "Cognito \(profile.userPoolID)")
    }
}
