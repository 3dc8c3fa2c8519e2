import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// Cognito in the role of the signed-in user's MFA, kept in memory as GetUser would answer it.
final class FakeMFA: CognitoMFA {
    struct State {
        /// The user's MFA, as GetUser answers it.
        var settings = MFASettings(enabled: [], preferred: nil)
        /// Every change made, in order.
        var changes: [[MFAKind: MFAPreference]] = []
        /// The software tokens associated ("associate") and verified ("verify CODE").
        var softwareTokens: [String] = []
        /// Set: every MFA settings call fails with it.
        var error: CognitoError? = nil
        /// The first code that verifies an authenticator; any other is refused, as Cognito does.
        var rightCode: String? = nil
    }

    let state = Mutex(State())

    func associateSoftwareToken(accessToken: String) throws(CognitoError) -> String {
        state.withLock { $0.softwareTokens.append("associate") }
        return "JBSWY3DPEHPK3PXP"
    }

    func verifySoftwareToken(accessToken: String, code: String) throws(CognitoError) {
        let right = state.withLock {
            $0.softwareTokens.append("verify \(code)")
            return $0.rightCode.map { $0 == code } ?? true
        }
        if !right { throw .service(code: "EnableSoftwareTokenMFAException", message: "Code mismatch", httpStatus: 400) }
    }

    func mfaSettings(accessToken: String) throws(CognitoError) -> MFASettings {
        let (settings, error) = state.withLock { ($0.settings, $0.error) }
        if let error { throw error }
        return settings
    }

    func setMFAPreference(accessToken: String, _ settings: [MFAKind: MFAPreference]) throws(CognitoError) {
        let error: CognitoError? = state.withLock { s in
            if let error = s.error { return error }
            s.changes.append(settings)
            for (kind, preference) in settings {
                s.settings.enabled.removeAll { $0 == kind }
                if preference.enabled { s.settings.enabled.append(kind) }
                if preference.preferred { s.settings.preferred = kind } else if s.settings.preferred == kind { s.settings.preferred = nil }
            }
            return nil
        }
        if let error { throw error }
    }
}
