import Foundation
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

@Suite struct SignInTests {
    let now: Int64 = 1_800_000_000
    let profile = Profile(userPoolID: "us-east-1_Pool", clientID: "client123")

    func tokens() -> AuthOutcome {
        .authenticated(AuthenticationResult(
            accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: TestJWT.id(iat: now, lifetime: 3600), refreshToken: "r1"))
    }

    func manager(_ store: InMemoryTokenStore, _ cognito: FakeCognito) -> TokenManager {
        makeManager(store: store, cognito: cognito, profile: profile, clock: FakeClock(now))
    }

    func srpChallenge() -> AuthOutcome {
        let v = srpVectors[0]
        return .challenge(
            .passwordVerifier(SRPServerStep(salt: v.salt, serverB: v.srp_b, secretBlock: v.secret_block, userID: "canonical-id")), session: "s1",
            userID: "canonical-id")
    }

    @Test func srpAnswersThePasswordVerifierAsTheCanonicalUser() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(srpChallenge()))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(tokens())] }

        try manager(store, cognito).signIn(username: "alice@example.com", password: "pw", flow: .srp, answers: ScriptedAnswers())

        let (name, responses) = try #require(cognito.signIn.responses.withLock { $0.first })
        #expect(name == "PASSWORD_VERIFIER")
        #expect(responses["USERNAME"] == "canonical-id")
        #expect(responses["PASSWORD_CLAIM_SECRET_BLOCK"] == srpVectors[0].secret_block)
        #expect(responses["TIMESTAMP"] == SRPClient.timestamp(now))
        #expect(Data(base64Encoded: responses["PASSWORD_CLAIM_SIGNATURE"] ?? "")?.count == 32)
        #expect(responses["PASSWORD"] == nil)  // the password itself is never sent
        #expect(store.writes == ["default/refresh", "default/id", "default/access"])
    }

    @Test func newPasswordThenAuthenticatorCode() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(.newPassword(requiredAttributes: []), session: "s1", userID: "alice")))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(.challenge(.mfaCode(.totp, destination: nil), session: "s2")), .success(tokens())] }
        try manager(store, cognito).signIn(
            username: "alice", password: "old", flow: .password, answers: ScriptedAnswers(newPassword: "New-Password-1", code: "654321"))
        let sent = cognito.signIn.responses.withLock { $0 }
        #expect(sent.map(\.0) == ["NEW_PASSWORD_REQUIRED", "SOFTWARE_TOKEN_MFA"])
        #expect(sent[0].1 == ["USERNAME": "alice", "NEW_PASSWORD": "New-Password-1"])
        #expect(sent[1].1 == ["USERNAME": "alice", "SOFTWARE_TOKEN_MFA_CODE": "654321"])
    }

    /// Cognito's session takes another code after a wrong one: asked
    /// again, the same session answered, up to three codes in all.
    @Test func aWrongCodeIsAskedAgainInTheSameSession() throws {
        let cognito = FakeCognito()
        let mismatch = CognitoError.service(code: "CodeMismatchException", message: "Invalid code received for user", httpStatus: 400)
        cognito.signIn.onSignIn(.success(.challenge(.mfaCode(.totp, destination: nil), session: "s1")))
        cognito.signIn.challengeAnswers.withLock { $0 = [.failure(mismatch), .failure(mismatch), .success(tokens())] }
        let answers = ScriptedAnswers(code: "111111", again: ["222222", "333333"])
        try manager(InMemoryTokenStore(), cognito).signIn(username: "alice", password: "pw", flow: .password, answers: answers)
        let sent = cognito.signIn.responses.withLock { $0 }
        #expect(sent.map { $0.1["SOFTWARE_TOKEN_MFA_CODE"] } == ["111111", "222222", "333333"])
        #expect(answers.seen.refusals.map(\.nextTry) == [2, 3] && answers.seen.refusals.allSatisfy { $0.problem == .wrongCode })
        // A fourth is not asked: the third refusal ends the sign-in.
        let again = FakeCognito()
        again.signIn.onSignIn(.success(.challenge(.mfaCode(.totp, destination: nil), session: "s1")))
        again.signIn.challengeAnswers.withLock { $0 = [.failure(mismatch), .failure(mismatch), .failure(mismatch), .success(tokens())] }
        #expect(throws: AuthError.cognito(mismatch, operation: .signIn)) {
            try manager(InMemoryTokenStore(), again).signIn(
                username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers(code: "1", again: ["2", "3", "4"]))
        }
        #expect(again.signIn.responses.withLock { $0.count } == 3)
        // With no one to ask (a code given as an option's value), the first refusal ends it.
        let once = FakeCognito()
        once.signIn.onSignIn(.success(.challenge(.mfaCode(.totp, destination: nil), session: "s1")))
        once.signIn.challengeAnswers.withLock { $0 = [.failure(mismatch), .success(tokens())] }
        #expect(throws: AuthError.self) {
            try manager(InMemoryTokenStore(), once).signIn(username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers(code: "1"))
        }
        #expect(once.signIn.responses.withLock { $0.count } == 1)
    }

    /// A new password the policy refuses is asked again, with Cognito's words.
    @Test func aNewPasswordThePolicyRefusesIsAskedAgain() throws {
        let cognito = FakeCognito()
        let policy = CognitoError.service(code: "InvalidPasswordException", message: "Password must have numeric characters", httpStatus: 400)
        cognito.signIn.onSignIn(.success(.challenge(.newPassword(requiredAttributes: []), session: "s1", userID: "alice")))
        cognito.signIn.challengeAnswers.withLock { $0 = [.failure(policy), .success(tokens())] }
        let answers = ScriptedAnswers(newPassword: "No-Digits", again: ["With-Digit-1"])
        try manager(InMemoryTokenStore(), cognito).signIn(username: "alice", password: "old", flow: .password, answers: answers)
        #expect(cognito.signIn.responses.withLock { $0.map { $0.1["NEW_PASSWORD"] } } == ["No-Digits", "With-Digit-1"])
        #expect(answers.seen.refusals.first?.problem == .passwordPolicy("Password must have numeric characters"))
    }

    /// A custom challenge that fails the sign-in ends its session: the
    /// sign-in starts over, the password not asked again.
    @Test func anAnswerThatEndsTheSessionStartsTheSignInOver() throws {
        let cognito = FakeCognito()
        let failed = CognitoError.service(code: "NotAuthorizedException", message: "Incorrect username or password.", httpStatus: 400)
        cognito.signIn.onSignIn(.success(.challenge(.custom(["question": "pin"]), session: "s1")))
        cognito.signIn.onSignIn(.success(.challenge(.custom(["question": "pin"]), session: "s2")))
        cognito.signIn.challengeAnswers.withLock { $0 = [.failure(failed), .success(tokens())] }
        var reads = 0
        let answers = ScriptedAnswers(customAnswers: ["wrong", "right"], again: [])
        try manager(InMemoryTokenStore(), cognito).signIn(
            username: "alice", password: { reads += 1; return "pw" }, flow: .custom, answers: answers)
        #expect(cognito.signIn.customAuthCalls.withLock { $0.count } == 2)
        #expect(cognito.signIn.responses.withLock { $0.map { $0.1["ANSWER"] } } == ["wrong", "right"])
        #expect(answers.seen.refusals.map(\.problem) == [.sessionEnded] && reads <= 1)
    }

    @Test func selectMFATypeThenSMS() throws {
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(.chooseMFA([.sms, .totp]), session: "s1")))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(.challenge(.mfaCode(.sms, destination: "+*******1234"), session: "s2")), .success(tokens())] }
        try manager(InMemoryTokenStore(), cognito).signIn(
            username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers(code: "111222", choice: .sms))
        let sent = cognito.signIn.responses.withLock { $0 }
        #expect(sent[0].1["ANSWER"] == "SMS_MFA")
        #expect(sent[1].1["SMS_MFA_CODE"] == "111222")
    }

    /// Email MFA: the code goes back under the challenge's own name, and
    /// the person is told where it was sent.
    @Test(arguments: ["EMAIL_OTP", "EMAIL_MFA"])
    func anEmailCodeIsAnsweredUnderItsChallengesName(_ challenge: String) throws {
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(name: challenge, session: "s1", parameters: [
            "CODE_DELIVERY_DELIVERY_MEDIUM": "EMAIL", "CODE_DELIVERY_DESTINATION": "a***@e***",
        ])))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(tokens())] }
        let answers = ScriptedAnswers(code: "246810")
        try manager(InMemoryTokenStore(), cognito).signIn(username: "alice", password: "pw", flow: .password, answers: answers)
        #expect(answers.seen.codes.map(\.0) == [.email])
        #expect(answers.seen.codes.map(\.1) == ["a***@e***"])
        let (name, responses) = try #require(cognito.signIn.responses.withLock { $0.first })
        #expect(name == challenge)
        #expect(responses == ["USERNAME": "alice", challenge + "_CODE": "246810"])
    }

    /// A choice that offers email is answered with the name Cognito offered.
    @Test(arguments: ["EMAIL_OTP", "EMAIL_MFA"])
    func selectMFATypeThenEmail(_ offered: String) throws {
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(name: "SELECT_MFA_TYPE", session: "s1", parameters: [
            "MFAS_CAN_CHOOSE": #"["SMS_MFA","SOFTWARE_TOKEN_MFA","\#(offered)"]"#,
        ])))
        cognito.signIn.challengeAnswers.withLock {
            $0 = [.success(.challenge(name: offered, session: "s2", parameters: ["CODE_DELIVERY_DESTINATION": "a***@e***"])), .success(tokens())]
        }
        let answers = ScriptedAnswers(code: "135790", choice: .email)
        try manager(InMemoryTokenStore(), cognito).signIn(username: "alice", password: "pw", flow: .password, answers: answers)
        let sent = cognito.signIn.responses.withLock { $0 }
        #expect(sent.map(\.0) == ["SELECT_MFA_TYPE", offered])
        #expect(sent[0].1["ANSWER"] == offered)
        #expect(sent[1].1[offered + "_CODE"] == "135790")
    }

    /// Choice-based sign-in with a one-time code: no password is read, the
    /// code is asked for as the sign-in's (not MFA's), answered by its name.
    @Test(arguments: [(SignInMethod.emailOTP, MFAKind.email), (.smsOTP, .sms)])
    func aOneTimeCodeSignsInWithoutAPassword(_ method: SignInMethod, _ kind: MFAKind) throws {
        let cognito = FakeCognito()
        let challenge = CognitoWire.challengeName(method)
        cognito.signIn.onSignIn(.success(.challenge(.oneTimeCode(kind, destination: "a***@e***"), session: "s1")))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(tokens())] }
        let answers = ScriptedAnswers(method: method, signInCode: "112233")
        try manager(InMemoryTokenStore(), cognito).signIn(
            username: "alice", password: { throw AuthError.challengeNeedsInput(challenge: "a password", input: .password) },
            flow: .choice, method: method, answers: answers)
        #expect(cognito.signIn.userAuthCalls.withLock { $0 } == [["PREFERRED_CHALLENGE": challenge]])
        #expect(answers.seen.signInCodes.map(\.0) == [kind] && answers.seen.signInCodes.map(\.1) == ["a***@e***"])
        #expect(answers.seen.codes.isEmpty)  // not an MFA code
        let (name, responses) = try #require(cognito.signIn.responses.withLock { $0.first })
        #expect(name == challenge && responses == ["USERNAME": "alice", challenge + "_CODE": "112233"])
    }

    /// The password as the first factor goes in InitiateAuth; an EMAIL_OTP
    /// after it is email MFA.
    @Test func aPasswordFirstAndThenEmailMFA() throws {
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(.oneTimeCode(.email, destination: "a***@e***"), session: "s1")))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(tokens())] }
        let answers = ScriptedAnswers(code: "445566")
        try manager(InMemoryTokenStore(), cognito).signIn(username: "alice", password: { "pw" }, flow: .choice, method: .password, answers: answers)
        #expect(cognito.signIn.userAuthCalls.withLock { $0 } == [["PREFERRED_CHALLENGE": "PASSWORD", "PASSWORD": "pw"]])
        #expect(answers.seen.codes.map(\.0) == [.email] && answers.seen.signInCodes.isEmpty)
        #expect(cognito.signIn.responses.withLock { $0.first?.1["EMAIL_OTP_CODE"] } == "445566")
    }

    /// Without a preference: the pool's list, what this tool cannot do kept
    /// apart, and the choice answered with what it needs.
    @Test func selectChallengeOffersWhatThePoolHas() throws {
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(.chooseSignInMethod([.password, .srp, .emailOTP, .passkey]), session: "s0")))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(tokens())] }
        var readPasswords = 0
        let answers = ScriptedAnswers(method: .password)
        try manager(InMemoryTokenStore(), cognito).signIn(
            username: "alice", password: { readPasswords += 1; return "pw" }, flow: .choice, answers: answers)
        #expect(cognito.signIn.userAuthCalls.withLock { $0 } == [[:]])
        #expect(answers.seen.methods == [[.password, .srp, .emailOTP, .passkey]])
        let (name, responses) = try #require(cognito.signIn.responses.withLock { $0.first })
        #expect(name == "SELECT_CHALLENGE" && responses == ["USERNAME": "alice", "ANSWER": "PASSWORD", "PASSWORD": "pw"])
        #expect(readPasswords == 1)
    }

    /// An endpoint offering a choice to a profile that did not ask for one
    /// (here "password" to an SRP profile) gets no answer, and no password.
    @Test(arguments: [AuthFlow.srp, .password, .custom])
    func selectChallengeOutsideTheChoiceFlowIsRefused(flow: AuthFlow) throws {
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(.chooseSignInMethod([.password, .emailOTP]), session: "s0")))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(tokens())] }
        let answers = ScriptedAnswers(method: .password)
        #expect(throws: AuthError.unsupportedChallenge("SELECT_CHALLENGE")) {
            try manager(InMemoryTokenStore(), cognito).signIn(username: "alice", password: { "pw" }, flow: flow, answers: answers)
        }
        #expect(cognito.signIn.responses.withLock { $0 }.isEmpty && answers.seen.methods.isEmpty)
    }

    /// CUSTOM_AUTH: no password; every round answered, as the user the
    /// challenge names.
    @Test func customChallengesAreAnsweredRoundByRound() throws {
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(.custom(["question": "2+3?"]), session: "s1", userID: "alice-id")))
        cognito.signIn.challengeAnswers.withLock {
            $0 = [.success(.challenge(.custom(["question": "badge?"]), session: "s2", userID: "alice-id")), .success(tokens())]
        }
        let answers = ScriptedAnswers(customAnswers: ["5", "424242"])
        try manager(InMemoryTokenStore(), cognito).signIn(
            username: "alice", password: { throw AuthError.challengeNeedsInput(challenge: "a password", input: .password) },
            flow: .custom, answers: answers)
        #expect(cognito.signIn.customAuthCalls.withLock { $0 } == [[:]])
        #expect(answers.seen.custom.map { $0["question"] } == ["2+3?", "badge?"])
        let sent = cognito.signIn.responses.withLock { $0 }
        #expect(sent.map(\.0) == ["CUSTOM_CHALLENGE", "CUSTOM_CHALLENGE"])
        #expect(sent.map(\.1) == [["USERNAME": "alice-id", "ANSWER": "5"], ["USERNAME": "alice-id", "ANSWER": "424242"]])
    }

    /// custom-srp: the password's SRP first (CHALLENGE_NAME=SRP_A), as Amplify does.
    @Test func customWithSRPStartsWithSRP() throws {
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.failure(.deadlineExceeded))
        #expect(throws: (any Error).self) {
            try manager(InMemoryTokenStore(), cognito).signIn(username: "alice", password: { "pw" }, flow: .customSRP, answers: ScriptedAnswers())
        }
        let sent = try #require(cognito.signIn.customAuthCalls.withLock { $0.first })
        #expect(sent["CHALLENGE_NAME"] == "SRP_A" && sent["SRP_A"]?.isEmpty == false && sent.count == 2)
    }

    @Test func mfaKindsHaveOneNameOnTheCommandLine() {
        #expect(MFAKind.allCases.map(\.rawValue) == ["totp", "sms", "email"])
        #expect(MFAKind(rawValue: "EMAIL_OTP") == nil)
        #expect(CognitoWire.mfaKind(named: "EMAIL_MFA") == .email && CognitoWire.mfaKind(named: "SMS_MFA") == .sms)
        #expect(CognitoWire.mfaKind(named: "WEB_AUTHN") == nil)
    }

    @Test func mfaSetupShowsAnOtpauthURIAndVerifiesTheFirstCode() throws {
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(.setUpMFA([.totp]), session: "s1")))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(tokens())] }
        let answers = ScriptedAnswers(code: "123456")
        try manager(InMemoryTokenStore(), cognito).signIn(username: "alice", password: "pw", flow: .password, answers: answers)
        #expect(answers.seen.uris == ["otpauth://totp/Cognito%20us-east-1_Pool:alice?secret=JBSWY3DPEHPK3PXP&issuer=Cognito%20us-east-1_Pool"])
        let (name, _) = try #require(cognito.signIn.responses.withLock { $0.first })
        #expect(name == "MFA_SETUP")
    }

    @Test func aChallengeWithoutInputNamesTheFlagAndStoresNothing() {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(.mfaCode(.totp, destination: nil), session: "s1")))
        #expect(throws: AuthError.challengeNeedsInput(challenge: "totp", input: .mfaCode)) {
            try manager(store, cognito).signIn(username: "a", password: "b", flow: .password, answers: ScriptedAnswers())
        }
        #expect(store.writes.isEmpty)
        #expect(AuthError.challengeNeedsInput(challenge: "x", input: .mfaCode).category == .notAuthenticated)
    }
}

@Suite struct RotationTests {
    let now: Int64 = 1_800_000_000

    func signedIn() throws -> InMemoryTokenStore {
        let store = InMemoryTokenStore()
        try store.write(.refresh, profile: "default", secret: "r1", context: context)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now - 7200, lifetime: 3600), context: context)
        return store
    }

    func fresh(refresh: String?) -> AuthenticationResult {
        AuthenticationResult(accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: nil, refreshToken: refresh)
    }

    @Test func getTokensFromRefreshTokenRotatesAndTheNewTokenIsStoredFirst() throws {
        let store = try signedIn()
        let cognito = FakeCognito()
        cognito.session.modernRefreshResults.withLock { $0 = [.success(fresh(refresh: "r2"))] }
        let before = store.writes.count
        try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).refresh()
        #expect(Array(store.writes.dropFirst(before)) == ["default/refresh", "default/access"])
        #expect(try store.read(.refresh, profile: "default") == "r2")
        #expect(cognito.session.refreshCount == 0)
    }

    @Test func withoutGetTokensFromRefreshTokenFallsBackOnceAndRemembers() throws {
        let store = try signedIn()
        let cognito = FakeCognito()
        let memory = InMemoryRefreshMemory()
        cognito.session.onRefresh(.success(fresh(refresh: nil)))
        cognito.session.onRefresh(.success(fresh(refresh: nil)))
        let manager = makeManager(store: store, cognito: cognito, clock: FakeClock(now), refreshMemory: memory)
        try manager.refresh()
        #expect(cognito.session.modernRefreshCalls.withLock { $0 } == 1)
        #expect(cognito.session.refreshCount == 1)
        #expect(memory.prefersInitiateAuth(profile: "default"))
        try manager.refresh()
        #expect(cognito.session.modernRefreshCalls.withLock { $0 } == 1)  // not asked again
        #expect(cognito.session.refreshCount == 2)
    }

    @Test func aRejectionIsNeverTakenForAMissingAction() throws {
        let store = try signedIn()
        let cognito = FakeCognito()
        let revoked = CognitoError.service(code: "NotAuthorizedException", message: "Refresh Token has been revoked", httpStatus: 400)
        cognito.session.modernRefreshResults.withLock { $0 = [.failure(revoked)] }
        #expect(throws: AuthError.cognito(revoked, operation: .refresh(profile: "default"))) {
            try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).refresh()
        }
        #expect(cognito.session.refreshCount == 0)
    }

    @Test func reuseMeansAnotherProcessRotatedFirstAndItsTokensAreUsed() throws {
        let store = try signedIn()
        let cognito = FakeCognito()
        let winner = TestJWT.access(iat: now, lifetime: 3600)
        // While our call with "r1" is in flight, another process rotates and
        // stores its tokens; Cognito then tells us r1 was already used.
        cognito.session.duringModernRefresh.withLock {
            $0 = {
                try? store.write(.refresh, profile: "default", secret: "r2-by-other-process", context: context)
                try? store.write(.access, profile: "default", secret: winner, context: context)
            }
        }
        cognito.session.modernRefreshResults.withLock {
            $0 = [.failure(.service(code: "RefreshTokenReuseException", message: "already used", httpStatus: 400))]
        }
        let token = try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).currentToken(.access)
        #expect(token.value == winner)
        #expect(try store.read(.refresh, profile: "default") == "r2-by-other-process")
        #expect(cognito.session.refreshCount == 0)
    }

    @Test func reuseWithNothingNewStoredIsAnError() throws {
        let store = try signedIn()
        let cognito = FakeCognito()
        let reuse = CognitoError.service(code: "RefreshTokenReuseException", message: "already used", httpStatus: 400)
        cognito.session.modernRefreshResults.withLock { $0 = [.failure(reuse)] }
        #expect(throws: AuthError.cognito(reuse, operation: .refresh(profile: "default"))) {
            try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).refresh()
        }
    }
}

@Suite struct SignOutTests {
    let now: Int64 = 1_800_000_000

    func signedIn() throws -> InMemoryTokenStore {
        let store = InMemoryTokenStore()
        try store.write(.refresh, profile: "default", secret: "r1", context: context)
        try store.write(.id, profile: "default", secret: TestJWT.id(iat: now, lifetime: 3600), context: context)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now, lifetime: 3600), context: context)
        return store
    }

    @Test func revokesTheRefreshTokenThenDeletes() throws {
        let store = try signedIn()
        let cognito = FakeCognito()
        #expect(try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).signOut(.revoke) == .init(removed: 3, atCognito: .revoked))
        #expect(cognito.session.revocations.withLock { $0 } == ["revoke r1"])
        #expect(try store.read(.refresh, profile: "default") == nil)
    }

    /// GlobalSignOut at Cognito, and the three items here deleted too.
    @Test func globalSignsOutEverywhere() throws {
        let store = try signedIn()
        let cognito = FakeCognito()
        #expect(try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).signOut(.global) == .init(removed: 3, atCognito: .signedOutEverywhere))
        #expect(cognito.session.revocations.withLock { $0 } == ["global"])
        for kind in [SecretKind.refresh, .id, .access] { #expect(try store.read(kind, profile: "default") == nil) }
    }

    @Test func offlineStillDeletesLocallyAndSaysSo() throws {
        let store = try signedIn()
        let cognito = FakeCognito()
        let offline = CognitoError.transport(TransportError(.connectionFailed, "refused"))
        cognito.session.state.withLock { $0.signOutError = offline }
        // Said, not thrown: the items are gone, as asked, whatever Cognito said.
        #expect(try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).signOut(.revoke)
            == .init(removed: 3, atCognito: .failed, failure: offline.summary))
        #expect(try store.read(.refresh, profile: "default") == nil)
        let failed = AuthError.remoteSignOutFailed(removed: 3, store: "the agent at /run/a", cause: offline.summary)
        #expect(failed.category == .temporary)
        #expect(failed.explanation.problem.hasPrefix("deleted 3 item(s) from the agent at /run/a, but revoking the session at Cognito failed (cannot reach Cognito"))
    }

    @Test func anAlreadyDeadSessionIsNotAFailure() throws {
        let store = try signedIn()
        let cognito = FakeCognito()
        cognito.session.state.withLock { $0.signOutError = .service(code: "NotAuthorizedException", message: "revoked", httpStatus: 400) }
        // Not called revoked: Cognito said it was over already.
        #expect(try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).signOut(.revoke) == .init(removed: 3, atCognito: .alreadyEnded))
    }

    @Test func localCallsNothing() throws {
        let cognito = FakeCognito()
        let store = try signedIn()
        #expect(try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).signOut(.local) == .init(removed: 3, atCognito: .notAsked))
        #expect(try store.read(.refresh, profile: "default") == nil)
        // No call of any kind reached Cognito.
        #expect(cognito.session.revocations.withLock { $0 }.isEmpty)
        #expect(cognito.account.calls.isEmpty)
        #expect(cognito.signIn.state.withLock { $0.calls.isEmpty } && cognito.session.state.withLock { $0.calls.isEmpty })
        #expect(cognito.session.modernRefreshCalls.withLock { $0 } == 0)
        #expect(cognito.signIn.responses.withLock { $0 }.isEmpty)
    }
}

@Suite struct VerifierTests {
    @Test func keysLiveUnderTheEndpointAndVouchOnlyForItsOwnIssuer() {
        let profile = Profile(userPoolID: "eu-west-1_Abc", clientID: "c")
        let aws = TokenVerifier.poolKeys(endpoint: "https://cognito-idp.eu-west-1.amazonaws.com/", profile: profile)
        #expect(aws.jwksURL == "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Abc/.well-known/jwks.json")
        #expect(aws.issuers == ["https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Abc"])
        let local = TokenVerifier.poolKeys(endpoint: "http://127.0.0.1:5000", profile: profile)
        #expect(local.jwksURL == "http://127.0.0.1:5000/eu-west-1_Abc/.well-known/jwks.json")
        // Keys an emulator or proxy serves cannot vouch for AWS's tokens.
        #expect(local.issuers == ["http://127.0.0.1:5000/eu-west-1_Abc"])
    }

    @Test func anUnsignedOrForeignTokenFails() {
        let verifier = TokenVerifier(transport: FakeTransport(status: 200, body: "{}"), timeouts: Timeouts(connect: 1, request: 1, command: 1), deadline: Deadline(secondsFromNow: 1))
        let token = TestJWT.access(iat: 1_800_000_000, lifetime: 3600)
        let checks = verifier.verify(token, kind: .access, keys: [], issuers: ["x"], clientID: "c", now: 1_800_000_000)
        #expect(checks.first { $0.name == "signature" }?.passed == false)
        #expect(checks.first { $0.name == "issuer" }?.passed == false)
        #expect(checks.first { $0.name == "token_use" }?.passed == true)
        #expect(verifier.verify("garbage", kind: .access, keys: [], issuers: [], clientID: "c", now: 0).map(\.passed) == [false])
    }
}
