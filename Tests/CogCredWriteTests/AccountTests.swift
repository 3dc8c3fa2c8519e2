import Foundation
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

@Suite struct SecretHashTests {
    @Test func matchesAnIndependentHMACSHA256() {
        // python3: base64(hmac.new(b"client-secret-xyz", b"alice@example.comclient123", sha256).digest())
        #expect(
            SecretHash.compute(username: "alice@example.com", clientID: "client123", clientSecret: "client-secret-xyz")
                == "C1EA0ZW8IST4LG8RjNnil7C/2GX96kpCm/a8Z8cClLw=")
    }

    @Test func isSentOnlyWhenTheClientHasASecret() throws {
        let transport = FakeTransport(status: 200, body: #"{"AuthenticationResult":{"AccessToken":"a.b.c"}}"#)
        let plain = CognitoHTTPClient(
            endpoint: "http://x/", clientID: "client123", timeouts: Timeouts(connect: 1, request: 1, command: 1),
            deadline: Deadline(secondsFromNow: 5), transport: transport)
        _ = try plain.refresh(refreshToken: "r", username: "alice")
        let withSecret = CognitoHTTPClient(
            endpoint: "http://x/", clientID: "client123", clientSecret: "s", timeouts: Timeouts(connect: 1, request: 1, command: 1),
            deadline: Deadline(secondsFromNow: 5), transport: transport)
        _ = try withSecret.refresh(refreshToken: "r", username: "canonical-name")

        let bodies = transport.requests.withLock { $0 }.map { try! JSONSerialization.jsonObject(with: $0.body) as! [String: Any] }
        let first = bodies[0]["AuthParameters"] as! [String: String]
        let second = bodies[1]["AuthParameters"] as! [String: String]
        #expect(first["SECRET_HASH"] == nil)
        #expect(second["SECRET_HASH"] == SecretHash.compute(username: "canonical-name", clientID: "client123", clientSecret: "s"))
    }

    @Test func accountCallsCarryTheHashAtTheTopLevel() throws {
        let transport = FakeTransport(status: 200, body: "{}")
        let client = CognitoHTTPClient(
            endpoint: "http://x/", clientID: "client123", clientSecret: "s", timeouts: Timeouts(connect: 1, request: 1, command: 1),
            deadline: Deadline(secondsFromNow: 5), transport: transport)
        try client.confirmSignUp(username: "bob", code: "123456")
        let request = try #require(transport.last)
        let body = try JSONSerialization.jsonObject(with: request.body) as! [String: Any]
        #expect(request.headers[1].1 == "AWSCognitoIdentityProviderService.ConfirmSignUp")
        #expect(body["SecretHash"] as? String == SecretHash.compute(username: "bob", clientID: "client123", clientSecret: "s"))
        #expect(body["ConfirmationCode"] as? String == "123456")
        #expect(body["Username"] as? String == "bob")
        #expect(body["Password"] == nil)
    }

    @Test func refreshUsesTheNameCognitoKnowsTheUserBy() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        let now: Int64 = 1_800_000_000
        try store.write(.refresh, profile: "default", secret: "r", context: context)
        // Signed in with an email alias: the token's username is the canonical one.
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now - 7200, lifetime: 3600, username: "0b7e-canonical"), context: context)
        cognito.session.onRefresh(.success(AuthenticationResult(accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: nil, refreshToken: nil)))
        var withSecret = testProfile
        withSecret.clientSecretInKeyring = true
        _ = try makeManager(store: store, cognito: cognito, profile: withSecret, clock: FakeClock(now))
            .currentToken(.access)
        #expect(cognito.session.state.withLock { $0.usernames } == ["0b7e-canonical"])
        // Without a client secret no SECRET_HASH is sent, so no name is looked up.
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now - 7200, lifetime: 3600), context: context)
        cognito.session.onRefresh(.success(AuthenticationResult(accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: nil, refreshToken: nil)))
        _ = try makeManager(store: store, cognito: cognito, clock: FakeClock(now)).currentToken(.access)
        #expect(cognito.session.state.withLock { $0.usernames }.last == .some(nil))
    }
}

@Suite struct AccountValidationTests {
    @Test(arguments: ["alice@example.com", "a.b+c@sub.example.co.uk"])
    func acceptsEmailAddresses(_ address: String) {
        #expect(AccountValidation.emailProblem(address) == nil)
    }

    @Test(arguments: ["alice@", "@example.com", "alice@example", "a@b@c.com", "al ice@example.com", "alice@example..com", "alice@.com"])
    func rejectsWhatIsNotAnEmailAddress(_ address: String) {
        #expect(AccountValidation.emailProblem(address) != nil)
    }

    @Test func codesAreTrimmedAndMustBeSixDigits() throws {
        #expect(try AccountValidation.normalizedCode("  123456\n") == "123456")
        for bad in ["12345", "1234567", "12a456", "", "123 456", "١٢٣٤٥٦"] {
            #expect(throws: InputError.self) { try AccountValidation.normalizedCode(bad) }
        }
    }

    @Test func theNewPasswordMustDifferAndNotBeEmpty() {
        #expect(throws: InputError("the new password is the same as the current one")) {
            try AccountValidation.checkNewPassword("same", old: "same")
        }
        #expect(throws: InputError("the new password is empty")) { try AccountValidation.checkNewPassword("", old: "x") }
    }

    @Test func anEmailUsernameBecomesTheEmailAttributeUnlessOneIsGiven() throws {
        #expect(try AccountValidation.signUpAttributes(username: "a@example.com", given: []) == [UserAttribute(name: "email", value: "a@example.com")])
        let given = [UserAttribute(name: "email", value: "other@example.com")]
        #expect(try AccountValidation.signUpAttributes(username: "a@example.com", given: given) == given)
        #expect(try AccountValidation.signUpAttributes(username: "plainname", given: []) == [])
        #expect(throws: InputError.self) { try AccountValidation.signUpAttributes(username: "a@", given: []) }
        #expect(throws: InputError.self) {
            try AccountValidation.signUpAttributes(username: "x", given: [UserAttribute(name: "email", value: "nope")])
        }
    }

    @Test func attributesAreNameEqualsValue() throws {
        #expect(try AccountValidation.attribute("name=Alice Smith") == UserAttribute(name: "name", value: "Alice Smith"))
        #expect(try AccountValidation.attribute("custom:x=a=b") == UserAttribute(name: "custom:x", value: "a=b"))
        #expect(throws: AttributeError.notNameValue) { try AccountValidation.attribute("novalue") }
        #expect(throws: AttributeError.emptyName) { try AccountValidation.attribute("=v") }
    }

    @Test func nothingIsSentWhenValidationFails() {
        let cognito = FakeAccount()
        let service = AccountService(cognito: cognito)
        #expect(throws: InputError.self) { try service.confirmSignUp(username: "a", code: "12345") }
        #expect(throws: InputError.self) { _ = try service.signUp(username: "a@", password: "P4ssword!", attributes: []) }
        #expect(throws: InputError.self) { _ = try service.signUp(username: "a@example.com", password: "", attributes: []) }
        #expect(throws: InputError.self) { try service.changePassword(accessToken: "t", old: "p", new: "p", profile: "default") }
        #expect(cognito.calls.isEmpty)
    }

    @Test func codesAreSentTrimmed() throws {
        let cognito = FakeAccount()
        try AccountService(cognito: cognito).confirmSignUp(username: "a", code: " 654321 ")
        #expect(cognito.calls == ["ConfirmSignUp a 654321"])
    }
}

@Suite struct AccountErrorTests {
    func failure(_ code: String, _ message: String = "m", _ operation: AuthOperation) -> AuthError {
        .cognito(.service(code: code, message: message, httpStatus: 400), operation: operation)
    }

    @Test(arguments: [
        ("UsernameExistsException", AuthOperation.signUp, FailureCategory.dataError, "already exists"),
        ("InvalidPasswordException", .signUp, .dataError, "password policy"),
        // A code Cognito refuses is a rejected credential everywhere (#50).
        ("CodeMismatchException", .confirmSignUp, .notAuthenticated, "code is incorrect"),
        ("CodeMismatchException", .confirmForgotPassword, .notAuthenticated, "code is incorrect"),
        ("CodeMismatchException", .signIn, .notAuthenticated, "code is incorrect"),
        ("CodeMismatchException", .mfaSettings(profile: "default"), .notAuthenticated, "code is incorrect"),
        ("EnableSoftwareTokenMFAException", .mfaSettings(profile: "default"), .notAuthenticated, "code is incorrect"),
        ("ExpiredCodeException", .confirmSignUp, .notAuthenticated, "code has expired"),
        ("ExpiredCodeException", .confirmForgotPassword, .notAuthenticated, "code has expired"),
        ("ExpiredCodeException", .signIn, .notAuthenticated, "code has expired"),
        ("LimitExceededException", .resendCode, .temporary, "try again later"),
        ("TooManyRequestsException", .signUp, .temporary, "try again later"),
        ("InvalidParameterException", .signUp, .dataError, "rejected"),
        ("NotAuthorizedException", .confirmSignUp, .dataError, "confirmed already"),
        ("NotAuthorizedException", .changePassword(profile: "default"), .notAuthenticated, "current password is incorrect"),
    ])
    func accountErrorsHaveClearWordsAndCodes(code: String, operation: AuthOperation, category: FailureCategory, phrase: String) {
        let error = failure(code, "Cognito's words", operation)
        #expect(error.category == category)
        #expect(error.message.contains(phrase))
        #expect(error.message.contains("Cognito's words"))
    }

    @Test func aWrongClientSecretIsAConfigurationError() {
        let error = failure("NotAuthorizedException", "Unable to verify secret hash for client abc", .signIn)
        #expect(error.category == .configuration)
        #expect(error.explanation.nextStep == .storeClientSecretAgain)
        #expect(!error.message.contains("--"))
    }

    /// The way to a new code depends on what sent the old one.
    @Test func anExpiredCodeNamesHowToGetANewOne() {
        let step = { (operation: AuthOperation) in failure("ExpiredCodeException", "expired", operation).explanation.nextStep }
        #expect(step(.confirmForgotPassword) == .requestNewCode(forPasswordReset: true))
        #expect(step(.confirmSignUp) == .requestNewCode(forPasswordReset: false))
    }
}
