import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// The fake Cognito in the role of the user's passkeys: calls recorded, registration and
/// pages scripted.
extension FakeCognito: CognitoPasskeys {
    func passkeyCall(_ call: String) throws(CognitoError) {
        let error = passkeyState.withLock { s in
            s.calls.append(call)
            return s.error
        }
        if let error { throw error }
    }

    func startPasskeyRegistration(accessToken: String) throws(CognitoError) -> WebAuthn.CreationOptions {
        try passkeyCall("start")
        guard let options = passkeyState.withLock({ $0.options }) else { throw .deadlineExceeded }
        return options
    }

    func completePasskeyRegistration(accessToken: String, credential: WebAuthn.RegistrationCredential) throws(CognitoError) {
        try passkeyCall("complete \(credential.id)")
        passkeyState.withLock { $0.completed.append(credential) }
    }

    func listPasskeys(accessToken: String, nextToken: String?) throws(CognitoError) -> (passkeys: [Passkey], next: String?) {
        try passkeyCall("list \(nextToken ?? "-")")
        return passkeyState.withLock { s in
            let index = Int(nextToken ?? "0") ?? 0
            let page = index < s.pages.count ? s.pages[index] : []
            return (page, index + 1 < s.pages.count ? String(index + 1) : nil)
        }
    }

    func deletePasskey(accessToken: String, id: String) throws(CognitoError) {
        try passkeyCall("delete \(id)")
    }
}
