import Testing
import CogCredTestSupport
@testable import CogCredWrite

/// `cog-cred mfa`: what each change sends, with the user's access token.
@Suite struct MFASettingsTests {
    let now: Int64 = 1_800_000_000

    func manager(_ cognito: FakeCognito) throws -> TokenManager {
        let store = InMemoryTokenStore()
        try store.write(.refresh, profile: "default", secret: "r", context: context)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now, lifetime: 3600), context: context)
        return makeManager(store: store, cognito: cognito, clock: FakeClock(now))
    }

    @Test func enablingKeepsThePreferenceAsItIs() throws {
        let cognito = FakeCognito()
        cognito.mfa.state.withLock { $0.settings = MFASettings(enabled: [.totp], preferred: .totp) }
        let after = try manager(cognito).changeMFA(.email, .enable)
        try manager(cognito).changeMFA(.totp, .enable)
        #expect(cognito.mfa.state.withLock { $0.changes } == [
            [.email: MFAPreference(enabled: true, preferred: false)], [.totp: MFAPreference(enabled: true, preferred: true)],
        ])
        #expect(after == MFASettings(enabled: [.totp, .email], preferred: .totp))
    }

    @Test func preferringAndDisabling() throws {
        let cognito = FakeCognito()
        cognito.mfa.state.withLock { $0.settings = MFASettings(enabled: [.totp, .email], preferred: .totp) }
        #expect(try manager(cognito).changeMFA(.email, .prefer) == MFASettings(enabled: [.totp, .email], preferred: .email))
        #expect(try manager(cognito).changeMFA(.email, .disable) == MFASettings(enabled: [.totp], preferred: nil))
        #expect(cognito.mfa.state.withLock { $0.changes } == [
            [.email: MFAPreference(enabled: true, preferred: true)], [.email: MFAPreference(enabled: false, preferred: false)],
        ])
    }

    /// The URI names the user and the pool; the first code verifies it,
    /// and only then is it enabled.
    @Test func anAuthenticatorIsVerifiedThenEnabled() throws {
        let cognito = FakeCognito()
        var shown: [String] = []
        let after = try manager(cognito).addAuthenticator { uri in
            shown.append(uri)
            return "123456"
        }
        #expect(shown == ["otpauth://totp/Cognito%20us-east-1_Test:alice?secret=JBSWY3DPEHPK3PXP&issuer=Cognito%20us-east-1_Test"])
        #expect(cognito.mfa.state.withLock { $0.softwareTokens } == ["associate", "verify 123456"])
        #expect(after == MFASettings(enabled: [.totp], preferred: nil))
    }

    @Test func aWrongFirstCodeIsAskedAgainWhileTheCallerGivesAnother() throws {
        let cognito = FakeCognito()
        cognito.mfa.state.withLock { $0.rightCode = "222222" }
        var refusals: [Int] = []
        let after = try manager(cognito).addAuthenticator(
            firstCode: { _ in "111111" },
            codeAgain: { refused in
                #expect(refused.problem == .wrongCode)
                refusals.append(refused.nextTry)
                return "222222"
            })
        #expect(refusals == [2])
        #expect(cognito.mfa.state.withLock { $0.softwareTokens } == ["associate", "verify 111111", "verify 222222"])
        #expect(after == MFASettings(enabled: [.totp], preferred: nil))
        // No one to ask (a code given by an option): the refusal at once, nothing enabled.
        let scripted = FakeCognito()
        scripted.mfa.state.withLock { $0.rightCode = "222222" }
        #expect(throws: AuthError.self) { try manager(scripted).addAuthenticator(firstCode: { _ in "111111" }) }
        #expect(scripted.mfa.state.withLock { ($0.softwareTokens, $0.changes.isEmpty) } == (["associate", "verify 111111"], true))
        // Three tries in all.
        let stubborn = FakeCognito()
        stubborn.mfa.state.withLock { $0.rightCode = "999999" }
        #expect(throws: AuthError.self) { try manager(stubborn).addAuthenticator(firstCode: { _ in "111111" }, codeAgain: { _ in "111111" }) }
        #expect(stubborn.mfa.state.withLock { $0.softwareTokens.count } == 4)
    }

    @Test func cognitosRefusalsKeepTheirCodeAndMessage() throws {
        let cognito = FakeCognito()
        let refusal = CognitoError.service(code: "InvalidParameterException", message: "Email MFA is not enabled for this user pool", httpStatus: 400)
        cognito.mfa.state.withLock { $0.error = refusal }
        #expect(throws: AuthError.cognito(refusal, operation: .mfaSettings(profile: "default"))) { try manager(cognito).changeMFA(.email, .prefer) }
        #expect(cognito.mfa.state.withLock { $0.changes }.isEmpty)
        let message = AuthError.cognito(refusal, operation: .mfaSettings(profile: "default")).message
        #expect(message.contains("InvalidParameterException") && message.contains("Email MFA is not enabled for this user pool"))
    }

    /// A missing scope and a dead session say different things, for `mfa` and `devices` alike.
    @Test(arguments: [AuthOperation.mfaSettings(profile: "default"), .devices(profile: "default")])
    func aMissingScopeIsToldApartFromARevokedSession(_ operation: AuthOperation) {
        let scope = CognitoError.service(code: "NotAuthorizedException", message: "Access Token does not have required scopes", httpStatus: 400)
        let revoked = CognitoError.service(code: "NotAuthorizedException", message: "Access Token has been revoked", httpStatus: 400)
        #expect(AuthError.cognito(scope, operation: operation).message.contains("lacks the aws.cognito.signin.user.admin scope"))
        #expect(AuthError.cognito(scope, operation: operation).explanation.nextStep == .getAdminScope)
        let dead = AuthError.cognito(revoked, operation: operation).explanation
        #expect(dead.problem == "the session is no longer valid" && dead.nextStep == .signInAgain(profile: "default"))
    }
}
