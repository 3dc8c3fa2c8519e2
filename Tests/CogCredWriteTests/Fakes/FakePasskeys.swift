import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// Cognito in the role of the user's passkeys: calls recorded, registration and pages scripted.
final class FakePasskeys: CognitoPasskeys {
    /// The options StartWebAuthnRegistration answers, the credentials
    /// completed, ListWebAuthnCredentials' pages, and the calls in order
    /// ("start", "complete ID", "list TOKEN", "delete ID").
    struct State {
        var options: WebAuthn.CreationOptions? = nil
        var completed: [WebAuthn.RegistrationCredential] = []
        var pages: [[Passkey]] = []
        var calls: [String] = []
        var error: CognitoError? = nil
    }

    let state = Mutex(State())

    func call(_ call: String) throws(CognitoError) {
        let error = state.withLock { s in
            s.calls.append(call)
            return s.error
        }
        if let error { throw error }
    }

    func startPasskeyRegistration(accessToken: String) throws(CognitoError) -> WebAuthn.CreationOptions {
        try call("start")
        guard let options = state.withLock({ $0.options }) else { throw .deadlineExceeded }
        return options
    }

    func completePasskeyRegistration(accessToken: String, credential: WebAuthn.RegistrationCredential) throws(CognitoError) {
        try call("complete \(credential.id)")
        state.withLock { $0.completed.append(credential) }
    }

    func listPasskeys(accessToken: String, nextToken: String?) throws(CognitoError) -> (passkeys: [Passkey], next: String?) {
        try call("list \(nextToken ?? "-")")
        return state.withLock { s in
            scriptedPage(s.pages, token: nextToken)
        }
    }

    func deletePasskey(accessToken: String, id: String) throws(CognitoError) {
        try call("delete \(id)")
    }
}
