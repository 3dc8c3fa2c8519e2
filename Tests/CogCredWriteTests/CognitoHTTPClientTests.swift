import Foundation
import Testing
import CogCredTestSupport
import CCurl
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead

@Suite struct CognitoHTTPClientTests {
    func client(_ transport: FakeTransport, deadline: Double = 30) -> CognitoHTTPClient {
        CognitoHTTPClient(
            endpoint: "http://127.0.0.1:1/", clientID: "client123",
            timeouts: Timeouts(connect: 5, request: 15, command: 30), deadline: Deadline(secondsFromNow: deadline),
            transport: transport, retryPolicy: RetryPolicy(sleeper: { _ in }))
    }

    @Test func sendsExactlyCognitosHeadersAndAnUnsignedJSONBody() throws {
        let transport = FakeTransport(status: 200, body: #"{"AuthenticationResult":{"AccessToken":"a.b.c","IdToken":"d.e.f","RefreshToken":"r","ExpiresIn":3600}}"#)
        let outcome = try client(transport).startSignIn(.password("s3cret"), username: "alice", deviceKey: nil)

        #expect(outcome == .authenticated(AuthenticationResult(accessToken: "a.b.c", idToken: "d.e.f", refreshToken: "r", expiresIn: 3600)))
        let request = try #require(transport.last)
        #expect(request.headers.map(\.0) == ["Content-Type", "X-Amz-Target"])
        #expect(request.headers[0].1 == "application/x-amz-json-1.1")
        #expect(request.headers[1].1 == "AWSCognitoIdentityProviderService.InitiateAuth")
        let body = try JSONSerialization.jsonObject(with: request.body) as! [String: Any]
        #expect(body["AuthFlow"] as? String == "USER_PASSWORD_AUTH")
        #expect(body["ClientId"] as? String == "client123")
        #expect((body["AuthParameters"] as? [String: String]) == ["USERNAME": "alice", "PASSWORD": "s3cret"])
        #expect(request.connectTimeout == 5)
        #expect(request.totalTimeout == 15)
    }

    @Test func refreshSendsTheRefreshToken() throws {
        let transport = FakeTransport(status: 200, body: #"{"AuthenticationResult":{"AccessToken":"a.b.c","IdToken":"d.e.f"}}"#)
        let result = try client(transport).refresh(refreshToken: "rt-1", username: nil)
        #expect(result.refreshToken == nil)
        let body = try JSONSerialization.jsonObject(with: try #require(transport.last).body) as! [String: Any]
        #expect(body["AuthFlow"] as? String == "REFRESH_TOKEN_AUTH")
        #expect((body["AuthParameters"] as? [String: String]) == ["REFRESH_TOKEN": "rt-1"])
    }

    @Test func aChallengeComesBackAsAChallenge() throws {
        let transport = FakeTransport(status: 200, body: #"{"ChallengeName":"NEW_PASSWORD_REQUIRED","Session":"s1","ChallengeParameters":{"USER_ID_FOR_SRP":"alice"}}"#)
        let outcome = try client(transport).startSignIn(.password("x"), username: "alice", deviceKey: nil)
        guard case .challenge(let pending) = outcome else { Issue.record("expected a challenge, got \(outcome)"); return }
        #expect(pending.challenge == .newPassword(requiredAttributes: []))
        #expect(pending.session == "s1")
        #expect(pending.userID == "alice")
    }

    /// USER_AUTH: the preference in AuthParameters; a SELECT_CHALLENGE's
    /// AvailableChallenges (top-level in the answer) are its choices.
    @Test func choiceBasedSignInSendsThePreferenceAndBringsBackTheChoices() throws {
        let transport = FakeTransport(status: 200, body: #"{"ChallengeName":"SELECT_CHALLENGE","Session":"s1","ChallengeParameters":{},"AvailableChallenges":["PASSWORD","PASSWORD_SRP","EMAIL_OTP","WEB_AUTHN"]}"#)
        let outcome = try client(transport).startSignIn(.choice(.smsOTP), username: "alice", deviceKey: nil)
        guard case .challenge(let pending) = outcome else { Issue.record("expected a challenge, got \(outcome)"); return }
        #expect(pending.challenge == .chooseSignInMethod([.password, .srp, .emailOTP, .passkey]))
        #expect(pending.session == "s1")
        let body = try JSONSerialization.jsonObject(with: try #require(transport.last).body) as! [String: Any]
        #expect(body["AuthFlow"] as? String == "USER_AUTH")
        #expect((body["AuthParameters"] as? [String: String]) == ["USERNAME": "alice", "PREFERRED_CHALLENGE": "SMS_OTP"])
    }

    /// An InitiateAuth that sends a code is not sent again after a lost
    /// answer; one that sends nothing is. The transport is told the same
    /// (`repeatable`: CurlTransport keeps libcurl from sending it twice).
    @Test func anInitiateAuthThatSendsACodeIsNotRepeated() throws {
        for (start, attempts) in [(SignInStart.choice(.emailOTP), 1), (.custom(srpA: nil), 1), (.choice(.password("p")), 4)] {
            let transport = FakeTransport(status: 503, body: "{}")
            #expect(throws: CognitoError.self) { try client(transport).startSignIn(start, username: "alice", deviceKey: nil) }
            #expect(transport.requests.withLock { $0.count } == attempts, "\(start)")
            #expect(transport.last?.repeatable == (attempts > 1), "\(start)")
        }
    }
    @Test func keepsCognitosErrorCodeWithoutItsPrefixAndItsMessage() {
        let transport = FakeTransport(status: 400, body: #"{"__type":"com.amazonaws.cognito#NotAuthorizedException","message":"Incorrect username or password."}"#)
        #expect(throws: CognitoError.service(code: "NotAuthorizedException", message: "Incorrect username or password.", httpStatus: 400)) {
            try client(transport).startSignIn(.password("b"), username: "a", deviceKey: nil)
        }
    }

    @Test(arguments: [
        (500, "<html><body>Internal Server Error</body></html>"),
        (502, ""),
        (400, "{\"__type\": \"Trunc"),
        (200, "{\"AuthenticationResult\": {\"AccessTo"),
        (200, "not json at all"),
        (200, "{}"),
    ])
    func anythingNotCognitoShapedIsABadResponse(status: Int, body: String) {
        do {
            _ = try client(FakeTransport(status: status, body: body)).startSignIn(.password("b"), username: "a", deviceKey: nil)
            Issue.record("expected an error")
        } catch {
            guard case .badResponse(let got, _) = error else {
                Issue.record("expected badResponse, got \(error)")
                return
            }
            #expect(got == status)
            // A 4xx that is not Cognito's JSON: the endpoint is not Cognito,
            // a configuration problem. Anything else may pass.
            #expect(error.isTemporary == !(400..<500).contains(status))
            #expect(error.isNotCognito == (400..<500).contains(status))
        }
    }

    @Test func transportFailuresAreTemporaryAndNameTheURLAndTheWholeWait() {
        let transport = FakeTransport(.failure(TransportError(.connectionFailed, "Failed to connect")))
        do {
            _ = try client(transport).refresh(refreshToken: "r", username: nil)
            Issue.record("no failure")
        } catch {
            guard case .transport(let lost) = error, let gaveUp = lost.gaveUp else { Issue.record("\(error)"); return }
            #expect(lost.kind == .connectionFailed && lost.detail == "Failed to connect")
            #expect(gaveUp.url == "http://127.0.0.1:1/" && gaveUp.attempts == 4 && gaveUp.seconds >= 0)
            #expect(error.isTemporary)
            #expect(error.summary.hasPrefix("cannot reach Cognito at http://127.0.0.1:1/ (Failed to connect; 4 attempts over "))
        }
        #expect(CognitoError.transport(TransportError(.timedOut, "")).isTemporary)
    }

    @Test func nothingIsSentOnceTheCommandDeadlineHasPassed() {
        let transport = FakeTransport(status: 200, body: "{}")
        #expect(throws: CognitoError.deadlineExceeded) { try client(transport, deadline: 0).refresh(refreshToken: "r", username: nil) }
        #expect(transport.last == nil)
    }

    @Test func requestTimeoutsNeverOutlastTheCommandDeadline() throws {
        let transport = FakeTransport(status: 200, body: #"{"AuthenticationResult":{"AccessToken":"a.b.c"}}"#)
        _ = try client(transport, deadline: 2).refresh(refreshToken: "r", username: nil)
        let request = try #require(transport.last)
        #expect(request.totalTimeout <= 2)
        #expect(request.connectTimeout <= 2)
    }

    @Test func curlErrorCodesMapToKinds() {
        #expect(CurlTransport.kind(of: CURLE_COULDNT_CONNECT) == .connectionFailed)
        #expect(CurlTransport.kind(of: CURLE_OPERATION_TIMEDOUT) == .timedOut)
        #expect(CurlTransport.kind(of: CURLE_PEER_FAILED_VERIFICATION) == .tls)
    }

    /// libcurl itself refuses plain HTTP unless the request was allowed it:
    /// without the permission nothing is even attempted; with it, the
    /// request goes out (and finds nothing listening on port 1).
    @Test func curlSpeaksHTTPSOnlyUnlessClearTextWasAllowed() {
        func send(allowsCleartext: Bool) -> TransportError? {
            let request = HTTPRequest(
                url: "http://127.0.0.1:1/", headers: [], body: Data("{}".utf8), connectTimeout: 2, totalTimeout: 2,
                allowsCleartext: allowsCleartext)
            do {
                _ = try CurlTransport().send(request)
                return nil
            } catch {
                return error
            }
        }
        let refused = send(allowsCleartext: false)
        #expect(refused?.nothingSent == true)
        #expect(refused?.detail.contains("http") == true)
        #expect(refused?.kind == .other)
        #expect(send(allowsCleartext: true)?.kind == .connectionFailed)
    }
}

@Suite struct AuthErrorTests {
    func service(_ code: String, _ message: String = "m") -> CognitoError {
        .service(code: code, message: message, httpStatus: 400)
    }

    /// `mfa` with a browser sign-in's token: the scope it lacks, not "sign in again".
    @Test func anAccessTokenWithoutTheAdminScopeIsNamedAsSuch() {
        let refused = service("NotAuthorizedException", "Access Token does not have required scopes")
        let message = AuthError.cognito(refused, operation: .mfaSettings(profile: "default")).message
        #expect(message.contains("aws.cognito.signin.user.admin") && message.contains("does not have required scopes"))
    }

    /// A spent or expired challenge Session is not a wrong password.
    @Test func aSpentSignInSessionIsNotAWrongPassword() {
        for said in ["Invalid session for the user, session is expired.", "Invalid session for the user, session can only be used once."] {
            let message = AuthError.cognito(service("NotAuthorizedException", said), operation: .signIn).message
            #expect(message.hasPrefix("the sign-in session is over"), "\(said)")
            #expect(message.contains(said))
        }
        let wrong = AuthError.cognito(service("NotAuthorizedException", "Incorrect username or password."), operation: .signIn)
        #expect(wrong.message.hasPrefix("incorrect username or password"))
    }

    @Test func aRejectedRefreshSaysTheSessionEndedAndHowToSignIn() {
        let error = AuthError.cognito(service("NotAuthorizedException", "Refresh Token has been revoked"), operation: .refresh(profile: "work"))
        #expect(error.category == .notAuthenticated)
        #expect(error.message.contains("expired or was revoked"))
        #expect(error.explanation.nextStep == .signInAgain(profile: "work"))
        #expect(error.message.contains("Refresh Token has been revoked"))
    }

    @Test(arguments: [
        ("NotAuthorizedException", FailureCategory.notAuthenticated, "incorrect username or password"),
        ("UserNotFoundException", .notAuthenticated, "does not exist"),
        ("UserNotConfirmedException", .notAuthenticated, "not confirmed"),
        ("TooManyRequestsException", .temporary, "try again later"),
        ("LimitExceededException", .temporary, "try again later"),
        ("ResourceNotFoundException", .configuration, "does not exist"),
        ("InvalidParameterException", .dataError, "InvalidParameterException"),
        ("SomethingNewException", .other, "SomethingNewException"),
    ])
    func signInErrorsMapToCategoriesAndKeepCognitosWords(code: String, category: FailureCategory, phrase: String) {
        let error = AuthError.cognito(service(code, "said by Cognito"), operation: .signIn)
        #expect(error.category == category)
        #expect(error.message.contains(phrase))
        #expect(error.message.contains("said by Cognito"))
        #expect(!error.message.contains("\n"))
    }

    @Test func serverErrorsAndUnreadableAnswersAreTemporary() {
        #expect(AuthError.cognito(.service(code: "InternalErrorException", message: "", httpStatus: 500), operation: .signIn).category == .temporary)
        #expect(AuthError.cognito(.badResponse(httpStatus: 500, detail: "not a JSON error"), operation: .signIn).category == .temporary)
        #expect(AuthError.notSignedIn(profile: "default").category == .notAuthenticated)
    }
}

@Suite struct RetryTests {
    /// Answers from a script, one per request.
    final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
        var answers: [Result<HTTPResponse, TransportError>]
        var actions: [String] = []
        init(_ answers: [Result<HTTPResponse, TransportError>]) { self.answers = answers }
        func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
            actions.append(request.headers[1].1)
            return try (answers.isEmpty ? .success(HTTPResponse(status: 500, body: Data())) : answers.removeFirst()).get()
        }
    }

    static let ok = Result<HTTPResponse, TransportError>.success(HTTPResponse(status: 200, body: Data(#"{"AuthenticationResult":{"AccessToken":"a.b.c"}}"#.utf8)))
    static let throttled = Result<HTTPResponse, TransportError>.success(HTTPResponse(status: 400, body: Data(#"{"__type":"TooManyRequestsException","message":"Rate exceeded"}"#.utf8)))
    static let html500 = Result<HTTPResponse, TransportError>.success(HTTPResponse(status: 500, body: Data("<html/>".utf8)))
    static let refused = Result<HTTPResponse, TransportError>.failure(TransportError(.connectionFailed, "refused", nothingSent: true))
    static let timedOut = Result<HTTPResponse, TransportError>.failure(TransportError(.timedOut, "timeout"))
    static let rejected = Result<HTTPResponse, TransportError>.success(HTTPResponse(status: 400, body: Data(#"{"__type":"NotAuthorizedException","message":"no"}"#.utf8)))

    func client(_ transport: ScriptedTransport) -> (CognitoHTTPClient, () -> [Double]) {
        let recorded = Recorder()
        let client = CognitoHTTPClient(
            endpoint: "http://x/", clientID: "c", timeouts: Timeouts(connect: 1, request: 1, command: 30),
            deadline: Deadline(secondsFromNow: 30), transport: transport,
            retryPolicy: RetryPolicy(sleeper: { recorded.add($0) }))
        return (client, { recorded.values })
    }

    final class Recorder: @unchecked Sendable {
        var values: [Double] = []
        func add(_ v: Double) { values.append(v) }
    }

    @Test func throttlingAndServerErrorsAreRetriedWithGrowingPauses() throws {
        let transport = ScriptedTransport([Self.throttled, Self.html500, Self.timedOut, Self.ok])
        let (client, pauses) = client(transport)
        _ = try client.refresh(refreshToken: "r", username: nil)
        #expect(transport.actions.count == 4)
        let p = pauses()
        #expect(p.count == 3)
        #expect(p[0] >= 0.1 && p[0] <= 0.2)
        #expect(p[1] >= 0.2 && p[1] <= 0.4)
        #expect(p[2] >= 0.4 && p[2] <= 0.8)
    }

    @Test func attemptsAreBounded() {
        let transport = ScriptedTransport([Self.html500, Self.html500, Self.html500, Self.html500, Self.ok])
        #expect(throws: CognitoError.self) { try client(transport).0.refresh(refreshToken: "r", username: nil) }
        #expect(transport.actions.count == 4)
    }

    @Test func rejectionsAreNeverRetried() {
        let transport = ScriptedTransport([Self.rejected, Self.ok])
        #expect(throws: CognitoError.self) { try client(transport).0.startSignIn(.password("b"), username: "a", deviceKey: nil) }
        #expect(transport.actions.count == 1)
    }

    @Test func actionsThatAreNotIdempotentAreRetriedOnlyWhenNothingWasSent() throws {
        let timedOut = ScriptedTransport([Self.timedOut, Self.ok])
        #expect(throws: CognitoError.self) { try client(timedOut).0.confirmSignUp(username: "a", code: "123456") }
        #expect(timedOut.actions.count == 1)
        let refused = ScriptedTransport([Self.refused, .success(HTTPResponse(status: 200, body: Data("{}".utf8)))])
        try client(refused).0.confirmSignUp(username: "a", code: "123456")
        #expect(refused.actions.count == 2)
    }

    @Test func anHTMLAnswerToGetTokensFromRefreshTokenIsNotRetried() {
        let transport = ScriptedTransport([Self.html500, Self.ok])
        #expect(throws: CognitoError.self) { try client(transport).0.getTokensFromRefreshToken(refreshToken: "r") }
        #expect(transport.actions.count == 1)
    }

    @Test func noRetryOutlastsTheDeadline() {
        let transport = ScriptedTransport([Self.html500, Self.ok])
        // The pause before a retry (50 to 100 s) is longer than what is left
        // of the deadline (30 s): a time no slow machine reaches before the
        // first request, as 0.15 s once did.
        let client = CognitoHTTPClient(
            endpoint: "http://x/", clientID: "c", timeouts: Timeouts(connect: 1, request: 1, command: 1),
            deadline: Deadline(secondsFromNow: 30), transport: transport,
            retryPolicy: RetryPolicy(basePause: 100, maxPause: 100, sleeper: { _ in }))
        #expect(throws: CognitoError.self) { try client.refresh(refreshToken: "r", username: nil) }
        #expect(transport.actions.count == 1)
    }
}
