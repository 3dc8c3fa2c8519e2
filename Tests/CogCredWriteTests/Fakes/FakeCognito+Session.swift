import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// The fake Cognito in the role of the session: refreshes (scripted), revocation and sign-out
/// (recorded).
extension FakeCognito: CognitoSession {
    func refresh(refreshToken: String, username: String?, deviceKey: String?) throws(CognitoError) -> AuthenticationResult {
        refreshBudgets.withLock { $0.append(RequestBudget.deadline?.remaining) }
        let next: Result<AuthenticationResult, CognitoError> = state.withLock { s in
            s.refreshCalls.append(refreshToken)
            s.deviceKeysSent.append(deviceKey)
            s.refreshUsernames.append(username)
            return s.refreshResults.isEmpty ? .failure(.deadlineExceeded) : s.refreshResults.removeFirst()
        }
        return try next.get()
    }

    func getTokensFromRefreshToken(refreshToken: String, deviceKey: String?) throws(CognitoError) -> AuthenticationResult {
        modernRefreshCalls.withLock { $0 += 1 }
        refreshBudgets.withLock { $0.append(RequestBudget.deadline?.remaining) }
        state.withLock { $0.deviceKeysSent.append(deviceKey) }
        duringModernRefresh.withLock { $0 }?()
        let next: Result<AuthenticationResult, CognitoError> = modernRefreshResults.withLock {
            $0.isEmpty ? .failure(.badResponse(httpStatus: 500, detail: "not a JSON error")) : $0.removeFirst()
        }
        return try next.get()
    }

    func revokeToken(refreshToken: String) throws(CognitoError) {
        revocations.withLock { $0.append("revoke \(refreshToken)") }
        if let error = state.withLock({ $0.signOutError }) { throw error }
    }

    func globalSignOut(accessToken: String) throws(CognitoError) {
        revocations.withLock { $0.append("global") }
        if let error = state.withLock({ $0.signOutError }) { throw error }
    }

    var refreshCount: Int { state.withLock { $0.refreshCalls.count } }
    var lastRefreshToken: String? { state.withLock { $0.refreshCalls.last } }

    func onRefresh(_ result: Result<AuthenticationResult, CognitoError>) {
        state.withLock { $0.refreshResults.append(result) }
    }
}
