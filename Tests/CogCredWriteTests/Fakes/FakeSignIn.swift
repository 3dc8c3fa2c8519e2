import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// Cognito in the role of signing in: InitiateAuth and the challenges, every first answer
/// from one queue (onSignIn).
final class FakeSignIn: CognitoSignIn {
    struct State {
        /// The first answers, in order.
        var results: [Result<AuthOutcome, CognitoError>] = []
        /// Every USER_PASSWORD_AUTH: username and password.
        var calls: [(String, String)] = []
    }

    let state = Mutex(State())
    /// Scripted answers to RespondToAuthChallenge, in order.
    let challengeAnswers = Mutex<[Result<AuthOutcome, CognitoError>]>([])
    /// Every RespondToAuthChallenge: name and responses.
    let responses = Mutex<[(String, [String: String])]>([])
    /// Every InitiateAuth USER_AUTH: its AuthParameters besides USERNAME.
    let userAuthCalls = Mutex<[[String: String]]>([])
    /// Every InitiateAuth CUSTOM_AUTH, likewise.
    let customAuthCalls = Mutex<[[String: String]]>([])
    /// Shared with the session (a FakeCognito's): the device key of every call.
    let deviceKeysSent: DeviceKeysSent
    /// Runs its "sign-in" steps at the start of USER_PASSWORD_AUTH (shared
    /// with the devices in a FakeCognito: one queue, in order).
    let meanwhile: Meanwhile

    init(deviceKeysSent: DeviceKeysSent = DeviceKeysSent(), meanwhile: Meanwhile = Meanwhile()) {
        self.deviceKeysSent = deviceKeysSent
        self.meanwhile = meanwhile
    }

    /// InitiateAuth, as the wire would send it (CognitoWire): USER_PASSWORD_AUTH
    /// is a sign-in call, USER_AUTH and CUSTOM_AUTH are kept with their
    /// AuthParameters besides USERNAME. Whatever its flow, it takes the next
    /// first answer (`onSignIn`); the answers to RespondToAuthChallenge come
    /// from `challengeAnswers`.
    func startSignIn(_ start: SignInStart, username: String, deviceKey: String?) throws(CognitoError) -> AuthOutcome {
        var (flow, parameters) = CognitoWire.initiation(start, username: username, deviceKey: deviceKey)
        parameters["USERNAME"] = nil
        deviceKeysSent.append(deviceKey)
        switch flow {
        case "USER_PASSWORD_AUTH":
            meanwhile.run("sign-in")
            state.withLock { $0.calls.append((username, parameters["PASSWORD"] ?? "")) }
        case "USER_AUTH": userAuthCalls.withLock { $0.append(parameters) }
        case "CUSTOM_AUTH": customAuthCalls.withLock { $0.append(parameters) }
        default: break
        }
        let next: Result<AuthOutcome, CognitoError> = state.withLock { s in
            s.results.isEmpty ? .failure(.deadlineExceeded) : s.results.removeFirst()
        }
        return try next.get()
    }

    /// RespondToAuthChallenge, recorded as the wire would send it: the
    /// challenge's name and ChallengeResponses (CognitoWire).
    func respond(to challenge: PendingChallenge, with answer: ChallengeAnswer, username: String, deviceKey: String?)
        throws(CognitoError) -> AuthOutcome
    {
        let sent = CognitoWire.responses(answer, to: challenge, username: username, deviceKey: deviceKey)
        responses.withLock { $0.append((challenge.name, sent)) }
        return try nextChallengeAnswer()
    }

    func nextChallengeAnswer() throws(CognitoError) -> AuthOutcome {
        let next: Result<AuthOutcome, CognitoError> = challengeAnswers.withLock { $0.isEmpty ? .failure(.deadlineExceeded) : $0.removeFirst() }
        return try next.get()
    }

    func associateSoftwareToken(session: String?) throws(CognitoError) -> (secret: String, session: String?) {
        ("JBSWY3DPEHPK3PXP", "associated")
    }

    func verifySoftwareToken(session: String?, code: String) throws(CognitoError) -> String? {
        guard code == "123456" else { throw .service(code: "EnableSoftwareTokenMFAException", message: "Code mismatch", httpStatus: 400) }
        return "verified"
    }

    func onSignIn(_ result: Result<AuthOutcome, CognitoError>) {
        state.withLock { $0.results.append(result) }
    }
}
