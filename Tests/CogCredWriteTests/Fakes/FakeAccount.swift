import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// Cognito in the role of the account actions, recorded in order, failing when the test says.
final class FakeAccount: CognitoAccount {
    struct State {
        /// Account actions, in order, with their arguments.
        var calls: [String] = []
        /// Set: every account action fails with it.
        var error: CognitoError? = nil
    }

    let state = Mutex(State())

    /// Records an account action and fails it if the test asked for that.
    func call(_ call: String) throws(CognitoError) {
        let error: CognitoError? = state.withLock { s in
            s.calls.append(call)
            return s.error
        }
        if let error { throw error }
    }

    func signUp(username: String, password: String, attributes: [UserAttribute]) throws(CognitoError) -> SignUpResult {
        try call("SignUp \(username) \(attributes.map { "\($0.name)=\($0.value)" }.joined(separator: ","))")
        return SignUpResult(confirmed: false, userSub: "sub", delivery: CodeDelivery(destination: "a***@e***", medium: "EMAIL", attributeName: "email"))
    }

    func confirmSignUp(username: String, code: String) throws(CognitoError) {
        try call("ConfirmSignUp \(username) \(code)")
    }

    func resendConfirmationCode(username: String) throws(CognitoError) -> CodeDelivery? {
        try call("ResendConfirmationCode \(username)")
        return nil
    }

    func forgotPassword(username: String) throws(CognitoError) -> CodeDelivery? {
        try call("ForgotPassword \(username)")
        return nil
    }

    func confirmForgotPassword(username: String, code: String, newPassword: String) throws(CognitoError) {
        try call("ConfirmForgotPassword \(username) \(code)")
    }

    func changePassword(accessToken: String, previousPassword: String, proposedPassword: String) throws(CognitoError) {
        try call("ChangePassword")
    }

    var calls: [String] { state.withLock { $0.calls } }
}
