import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// Cognito in the role of the session: refreshes (scripted), revocation and sign-out
/// (recorded).
final class FakeSession: CognitoSession {
    struct State {
        /// InitiateAuth REFRESH_TOKEN_AUTH's answers, in order.
        var results: [Result<AuthenticationResult, CognitoError>] = []
        /// Every REFRESH_TOKEN_AUTH: its refresh token, and its username (for the secret hash).
        var calls: [String] = []
        var usernames: [String?] = []
        /// Set: RevokeToken and GlobalSignOut fail with it.
        var signOutError: CognitoError? = nil
    }

    let state = Mutex(State())
    /// The seconds of a RequestBudget in force at each refresh (nil: the
    /// command's deadline alone).
    let refreshBudgets = Mutex<[Double?]>([])
    /// GetTokensFromRefreshToken's answers; empty means "not offered" (500 HTML, as moto).
    let modernRefreshResults = Mutex<[Result<AuthenticationResult, CognitoError>]>([])
    let modernRefreshCalls = Mutex(0)
    /// Runs inside GetTokensFromRefreshToken, before it answers: lets a test
    /// act as another process that refreshes at the same moment.
    let duringModernRefresh = Mutex<(@Sendable () -> Void)?>(nil)
    /// "revoke TOKEN", "global", in order.
    let revocations = Mutex<[String]>([])
    /// Shared with sign-in (a FakeCognito's): the device key of every call.
    let deviceKeysSent: DeviceKeysSent

    init(deviceKeysSent: DeviceKeysSent = DeviceKeysSent()) { self.deviceKeysSent = deviceKeysSent }

    func refresh(refreshToken: String, username: String?, deviceKey: String?) throws(CognitoError) -> AuthenticationResult {
        refreshBudgets.withLock { $0.append(RequestBudget.deadline?.remaining) }
        deviceKeysSent.append(deviceKey)
        let next: Result<AuthenticationResult, CognitoError> = state.withLock { s in
            s.calls.append(refreshToken)
            s.usernames.append(username)
            return s.results.isEmpty ? .failure(.deadlineExceeded) : s.results.removeFirst()
        }
        return try next.get()
    }

    func getTokensFromRefreshToken(refreshToken: String, deviceKey: String?) throws(CognitoError) -> AuthenticationResult {
        modernRefreshCalls.withLock { $0 += 1 }
        refreshBudgets.withLock { $0.append(RequestBudget.deadline?.remaining) }
        deviceKeysSent.append(deviceKey)
        duringModernRefresh.withLock { $0 }?()
        let next: Result<AuthenticationResult, CognitoError> = modernRefreshResults.withLock {
            $0.isEmpty ? .failure(.badResponse(httpStatus: 500, detail: "not a JSON error")) : $0.removeFirst()
        }
        return try next.get()
    }

    /// GetUser, for a session alone: it answers (a FakeCognito asks its FakeMFA).
    func confirmSession(accessToken: String) throws(CognitoError) {}

    func revokeToken(refreshToken: String) throws(CognitoError) {
        revocations.withLock { $0.append("revoke \(refreshToken)") }
        if let error = state.withLock({ $0.signOutError }) { throw error }
    }

    func globalSignOut(accessToken: String) throws(CognitoError) {
        revocations.withLock { $0.append("global") }
        if let error = state.withLock({ $0.signOutError }) { throw error }
    }

    var refreshCount: Int { state.withLock { $0.calls.count } }
    var lastRefreshToken: String? { state.withLock { $0.calls.last } }

    func onRefresh(_ result: Result<AuthenticationResult, CognitoError>) {
        state.withLock { $0.results.append(result) }
    }
}
