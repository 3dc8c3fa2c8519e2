import Foundation
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

/// Cognito's vocabulary, both ways: what each challenge Cognito names means,
/// and what each answer sends (the names Amazon's SDKs send).
@Suite struct CognitoWireTests {
    static let srp = ["SALT": "ab", "SRP_B": "cd", "SECRET_BLOCK": "ZZ", "USER_ID_FOR_SRP": "alice-id"]

    @Test(arguments: [
        ("PASSWORD_VERIFIER", srp, Challenge.passwordVerifier(SRPServerStep(salt: "ab", serverB: "cd", secretBlock: "ZZ", userID: "alice-id"))),
        ("DEVICE_SRP_AUTH", [:], .deviceSRP),
        ("DEVICE_PASSWORD_VERIFIER", srp, .devicePasswordVerifier(SRPServerStep(salt: "ab", serverB: "cd", secretBlock: "ZZ", userID: "alice-id"))),
        ("SOFTWARE_TOKEN_MFA", ["CODE_DELIVERY_DESTINATION": "x"], .mfaCode(.totp, destination: nil)),
        ("SMS_MFA", ["CODE_DELIVERY_DESTINATION": "+***12"], .mfaCode(.sms, destination: "+***12")),
        ("EMAIL_MFA", ["CODE_DELIVERY_DESTINATION": "a***@e***"], .mfaCode(.email, destination: "a***@e***")),
        ("EMAIL_OTP", ["CODE_DELIVERY_DESTINATION": "a***@e***"], .oneTimeCode(.email, destination: "a***@e***")),
        ("SMS_OTP", [:], .oneTimeCode(.sms, destination: nil)),
        ("SELECT_MFA_TYPE", ["MFAS_CAN_CHOOSE": #"["SMS_MFA","EMAIL_MFA","WEB_AUTHN"]"#], .chooseMFA([.sms, .email])),
        ("NEW_PASSWORD_REQUIRED", ["requiredAttributes": #"["userAttributes.name"]"#], .newPassword(requiredAttributes: ["userAttributes.name"])),
        ("MFA_SETUP", ["MFAS_CAN_SETUP": #"["SOFTWARE_TOKEN_MFA"]"#], .setUpMFA([.totp])),
        ("MFA_SETUP", [:], .setUpMFA(nil)),
        ("CUSTOM_CHALLENGE", ["USERNAME": "alice-id", "question": "2+2?"], .custom(["question": "2+2?"])),
        ("WEB_AUTHN", ["CREDENTIAL_REQUEST_OPTIONS": #"{"challenge":"q83v","rpId":"auth.example.com"}"#],
         .passkey(requestOptions: .success(WebAuthn.RequestOptions(challenge: "q83v", rpId: "auth.example.com")))),
        ("WEB_AUTHN", ["CREDENTIAL_REQUEST_OPTIONS": "{}"],
         .passkey(requestOptions: .failure(.malformedOptions("the passkey challenge's options are not WebAuthn request options")))),
        ("WEB_AUTHN", [:], .passkey(requestOptions: nil)),
        ("SOMETHING_NEW", [:], .unknown("SOMETHING_NEW")),
    ] as [(String, [String: String], Challenge)])
    func eachChallengeIsReadAsWhatItAsks(name: String, parameters: [String: String], expected: Challenge) throws {
        let pending = try CognitoWire.pending(name: name, session: "s", parameters: parameters)
        #expect(pending.challenge == expected)
        #expect(pending.name == name)
    }

    @Test func theChoicesOfSignInAreTheAvailableChallenges() throws {
        let pending = try CognitoWire.pending(
            name: "SELECT_CHALLENGE", session: nil, parameters: [:], available: ["PASSWORD_SRP", "SMS_OTP", "WEB_AUTHN", "PASSWORD"])
        #expect(pending.challenge == .chooseSignInMethod([.srp, .smsOTP, .passkey, .password]))
        let without = try CognitoWire.pending(name: "SELECT_CHALLENGE", session: nil, parameters: [:], available: ["EMAIL_OTP"])
        #expect(without.challenge == .chooseSignInMethod([.emailOTP]))
    }

    @Test func anIncompleteSRPChallengeIsABadResponse() {
        #expect(throws: CognitoError.badResponse(httpStatus: 200, detail: "an incomplete SRP challenge")) {
            try CognitoWire.pending(name: "PASSWORD_VERIFIER", session: nil, parameters: ["SALT": "ab"])
        }
    }

    @Test func theUserIsNamedAsTheChallengeNamesThem() throws {
        #expect(try CognitoWire.pending(name: "SMS_MFA", session: nil, parameters: ["USERNAME": "u1", "USER_ID_FOR_SRP": "u2"]).userID == "u1")
        #expect(try CognitoWire.pending(name: "PASSWORD_VERIFIER", session: nil, parameters: Self.srp).userID == "alice-id")
        #expect(try CognitoWire.pending(name: "SMS_MFA", session: nil, parameters: [:]).userID == nil)
    }

    @Test(arguments: [
        ("SOFTWARE_TOKEN_MFA", [:], ChallengeAnswer.code("123456"), ["SOFTWARE_TOKEN_MFA_CODE": "123456"]),
        ("SMS_MFA", [:], .code("1"), ["SMS_MFA_CODE": "1"]),
        ("EMAIL_OTP", [:], .code("2"), ["EMAIL_OTP_CODE": "2"]),
        ("EMAIL_MFA", [:], .code("3"), ["EMAIL_MFA_CODE": "3"]),
        ("SMS_OTP", [:], .code("4"), ["SMS_OTP_CODE": "4"]),
        ("SELECT_MFA_TYPE", ["MFAS_CAN_CHOOSE": #"["SMS_MFA","EMAIL_MFA"]"#], .mfa(.email), ["ANSWER": "EMAIL_MFA"]),
        ("SELECT_MFA_TYPE", ["MFAS_CAN_CHOOSE": #"["SOFTWARE_TOKEN_MFA"]"#], .mfa(.totp), ["ANSWER": "SOFTWARE_TOKEN_MFA"]),
        ("SELECT_CHALLENGE", [:], .signInMethod(.password("pw")), ["ANSWER": "PASSWORD", "PASSWORD": "pw"]),
        ("SELECT_CHALLENGE", [:], .signInMethod(.srp(srpA: "A1")), ["ANSWER": "PASSWORD_SRP", "SRP_A": "A1"]),
        ("SELECT_CHALLENGE", [:], .signInMethod(.emailOTP), ["ANSWER": "EMAIL_OTP"]),
        ("NEW_PASSWORD_REQUIRED", [:], .newPassword("n3w"), ["NEW_PASSWORD": "n3w"]),
        ("CUSTOM_CHALLENGE", [:], .custom("4"), ["ANSWER": "4"]),
        ("MFA_SETUP", [:], .mfaSetUp, [:]),
        ("DEVICE_SRP_AUTH", [:], .deviceSRP(srpA: "A2"), ["SRP_A": "A2"]),
        ("PASSWORD_VERIFIER", srp, .passwordProof(PasswordProof(secretBlock: "ZZ", signature: "c2ln", timestamp: "Mon Nov 2 04:03:01 UTC 2026")),
            ["PASSWORD_CLAIM_SECRET_BLOCK": "ZZ", "PASSWORD_CLAIM_SIGNATURE": "c2ln", "TIMESTAMP": "Mon Nov 2 04:03:01 UTC 2026"]),
    ] as [(String, [String: String], ChallengeAnswer, [String: String])])
    func eachAnswerSendsWhatAmazonsSDKsSend(name: String, parameters: [String: String], answer: ChallengeAnswer, sent: [String: String]) throws {
        let pending = try CognitoWire.pending(name: name, session: "s", parameters: parameters)
        #expect(CognitoWire.responses(answer, to: pending, username: "alice", deviceKey: nil) == sent.merging(["USERNAME": "alice"]) { $1 })
        #expect(CognitoWire.responses(answer, to: pending, username: "alice", deviceKey: "dk")["DEVICE_KEY"] == "dk")
    }

    @Test(arguments: [
        (SignInStart.srp(srpA: "A"), "USER_SRP_AUTH", ["SRP_A": "A"]),
        (.password("pw"), "USER_PASSWORD_AUTH", ["PASSWORD": "pw"]),
        (.choice(nil), "USER_AUTH", [:]),
        (.choice(.srp(srpA: "A")), "USER_AUTH", ["PREFERRED_CHALLENGE": "PASSWORD_SRP", "SRP_A": "A"]),
        (.choice(.emailOTP), "USER_AUTH", ["PREFERRED_CHALLENGE": "EMAIL_OTP"]),
        (.custom(srpA: nil), "CUSTOM_AUTH", [:]),
        (.custom(srpA: "A"), "CUSTOM_AUTH", ["CHALLENGE_NAME": "SRP_A", "SRP_A": "A"]),
    ] as [(SignInStart, String, [String: String])])
    func eachStartIsAnAuthFlowWithItsParameters(start: SignInStart, flow: String, parameters: [String: String]) {
        let sent = CognitoWire.initiation(start, username: "alice", deviceKey: "dk")
        #expect(sent.flow == flow)
        #expect(sent.parameters == parameters.merging(["USERNAME": "alice", "DEVICE_KEY": "dk"]) { $1 })
    }

    /// The client adds SECRET_HASH over the name it answers for, and echoes
    /// the challenge's name and session.
    @Test func anAnswerCarriesTheSecretHashTheNameAndTheSession() throws {
        let transport = FakeTransport(status: 200, body: #"{"AuthenticationResult":{"AccessToken":"a.b.c"}}"#)
        let client = CognitoHTTPClient(
            endpoint: "http://127.0.0.1:1/", clientID: "client123", clientSecret: "shh", timeouts: Timeouts(connect: 5, request: 15, command: 30),
            deadline: Deadline(secondsFromNow: 30), transport: transport, retryPolicy: RetryPolicy(sleeper: { _ in }))
        let pending = try CognitoWire.pending(name: "SMS_MFA", session: "s9", parameters: ["USERNAME": "alice-id"])
        _ = try client.respond(to: pending, with: .code("123"), username: "alice-id", deviceKey: nil)
        let body = try JSONSerialization.jsonObject(with: try #require(transport.last).body) as! [String: Any]
        #expect(body["ChallengeName"] as? String == "SMS_MFA")
        #expect(body["Session"] as? String == "s9")
        #expect(body["ClientId"] as? String == "client123")
        #expect((body["ChallengeResponses"] as? [String: String]) == [
            "USERNAME": "alice-id", "SMS_MFA_CODE": "123",
            "SECRET_HASH": SecretHash.compute(username: "alice-id", clientID: "client123", clientSecret: "shh"),
        ])
    }

    /// Keys are the properties' names capitalised; a dictionary's keys go as they are.
    @Test func keysAreCapitalisedButDictionariesKeptAsTheyAre() throws {
        let confirm = CognitoWire.ConfirmDeviceRequest(
            accessToken: "t", deviceKey: "k", deviceSecretVerifierConfig: .init(passwordVerifier: "v", salt: "s"), deviceName: "n")
        let json = try JSONSerialization.jsonObject(with: CognitoWire.encoder().encode(confirm)) as! [String: Any]
        #expect(Set(json.keys) == ["AccessToken", "DeviceKey", "DeviceSecretVerifierConfig", "DeviceName"])
        #expect((json["DeviceSecretVerifierConfig"] as? [String: String]) == ["PasswordVerifier": "v", "Salt": "s"])

        let mfa = CognitoWire.SetUserMFAPreferenceRequest(accessToken: "t", [.sms: MFAPreference(enabled: true, preferred: false)])
        let mfaJSON = try JSONSerialization.jsonObject(with: CognitoWire.encoder().encode(mfa)) as! [String: Any]
        #expect((mfaJSON["SMSMfaSettings"] as? [String: Bool]) == ["Enabled": true, "PreferredMfa": false])

        let getID = CognitoIdentityHTTPClient.GetIDRequest(identityPoolId: "p", logins: ["cognito-idp.x/y": "id"])
        let getIDJSON = try JSONSerialization.jsonObject(with: CognitoWire.encoder().encode(getID)) as! [String: Any]
        #expect((getIDJSON["Logins"] as? [String: String]) == ["cognito-idp.x/y": "id"])
        #expect(getIDJSON["IdentityPoolId"] as? String == "p")

        let parameters = #"{"ChallengeName":"CUSTOM_CHALLENGE","ChallengeParameters":{"Question":"q","USERNAME":"u"}}"#
        let outcome = try CognitoHTTPClient.authOutcome(from: HTTPResponse(status: 200, body: Data(parameters.utf8)))
        #expect(outcome == .challenge(try CognitoWire.pending(name: "CUSTOM_CHALLENGE", session: nil, parameters: ["Question": "q", "USERNAME": "u"])))
    }

    @Test func oneEncoderForEveryPartOfAURI() {
        #expect("a-z.A_Z~09".percentEncoded == "a-z.A_Z~09")
        #expect("a b/+=&é*".percentEncoded == "a%20b%2F%2B%3D%26%C3%A9%2A")
        #expect(FormBody.encode([("scope", "openid email"), ("x", "&=")]) == "scope=openid%20email&x=%26%3D")
        #expect(TOTPURI.make(secret: "JBSW", account: "a@b.c", issuer: "Cognito eu_1") == "otpauth://totp/Cognito%20eu_1:a%40b.c?secret=JBSW&issuer=Cognito%20eu_1")
    }
}
