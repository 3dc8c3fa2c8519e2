import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// The fake Cognito in the role of the account actions, recorded in order, failing when the
/// test says.
extension FakeCognito: CognitoAccount {
    /// Records an account action and fails it if the test asked for that.
    func account(_ call: String) throws(CognitoError) {
        let error: CognitoError? = state.withLock { s in
            s.accountCalls.append(call)
            return s.accountError
        }
        if let error { throw error }
    }

    func signUp(username: String, password: String, attributes: [UserAttribute]) throws(CognitoError) -> SignUpResult {
        try account("SignUp \(username) \(attributes.map { "\($0.name)=\($0.value)" }.joined(separator: ","))")
        return SignUpResult(confirmed: false, userSub: "sub", delivery: CodeDelivery(destination: "a***@e***", medium: "EMAIL", attributeName: "email"))
    }

    func confirmSignUp(username: String, code: String) throws(CognitoError) {
        try account("ConfirmSignUp \(username) \(code)")
    }

    func resendConfirmationCode(username: String) throws(CognitoError) -> CodeDelivery? {
        try account("ResendConfirmationCode \(username)")
        return nil
    }

    func forgotPassword(username: String) throws(CognitoError) -> CodeDelivery? {
        try account("ForgotPassword \(username)")
        return nil
    }

    func confirmForgotPassword(username: String, code: String, newPassword: String) throws(CognitoError) {
        try account("ConfirmForgotPassword \(username) \(code)")
    }

    func changePassword(accessToken: String, previousPassword: String, proposedPassword: String) throws(CognitoError) {
        try account("ChangePassword")
    }

    var accountCalls: [String] { state.withLock { $0.accountCalls } }
}
