import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// The fake Cognito in the role of the signed-in user's MFA, kept in memory as GetUser would
/// answer it.
extension FakeCognito: CognitoMFA {
    func associateSoftwareToken(accessToken: String) throws(CognitoError) -> String {
        softwareTokens.withLock { $0.append("associate") }
        return "JBSWY3DPEHPK3PXP"
    }

    func verifySoftwareToken(accessToken: String, code: String) throws(CognitoError) {
        softwareTokens.withLock { $0.append("verify \(code)") }
    }

    func mfaSettings(accessToken: String) throws(CognitoError) -> MFASettings {
        if let error = mfaError.withLock({ $0 }) { throw error }
        return mfa.withLock { $0 }
    }

    func setMFAPreference(accessToken: String, _ settings: [MFAKind: MFAPreference]) throws(CognitoError) {
        if let error = mfaError.withLock({ $0 }) { throw error }
        mfaChanges.withLock { $0.append(settings) }
        mfa.withLock { current in
            for (kind, preference) in settings {
                current.enabled.removeAll { $0 == kind }
                if preference.enabled { current.enabled.append(kind) }
                if preference.preferred { current.preferred = kind } else if current.preferred == kind { current.preferred = nil }
            }
        }
    }
}
