import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// The fake Cognito in the role of signing in: InitiateAuth and the challenges, every first
/// answer from one queue (onSignIn).
extension FakeCognito: CognitoSignIn {
    /// InitiateAuth, as the wire would send it (CognitoWire): USER_PASSWORD_AUTH
    /// is a sign-in call, USER_AUTH and CUSTOM_AUTH are kept with their
    /// AuthParameters besides USERNAME. Whatever its flow, it takes the next
    /// first answer (`onSignIn`); the answers to RespondToAuthChallenge come
    /// from `challengeAnswers`.
    func startSignIn(_ start: SignInStart, username: String, deviceKey: String?) throws(CognitoError) -> AuthOutcome {
        var (flow, parameters) = CognitoWire.initiation(start, username: username, deviceKey: deviceKey)
        parameters["USERNAME"] = nil
        state.withLock { $0.deviceKeysSent.append(deviceKey) }
        switch flow {
        case "USER_PASSWORD_AUTH":
            meanwhile.run("sign-in")
            state.withLock { $0.signInCalls.append((username, parameters["PASSWORD"] ?? "")) }
        case "USER_AUTH": userAuthCalls.withLock { $0.append(parameters) }
        case "CUSTOM_AUTH": customAuthCalls.withLock { $0.append(parameters) }
        default: break
        }
        let next: Result<AuthOutcome, CognitoError> = state.withLock { s in
            s.signInResults.isEmpty ? .failure(.deadlineExceeded) : s.signInResults.removeFirst()
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
        state.withLock { $0.signInResults.append(result) }
    }
}
