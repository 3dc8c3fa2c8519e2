import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// Cognito in the role of the user's devices: calls recorded, ListDevices' pages scripted.
final class FakeDevices: CognitoDevices {
    struct State {
        /// Device calls, in order: "confirm KEY NAME", "remember KEY", "not_remember KEY", "list TOKEN", "forget KEY".
        var calls: [String] = []
        /// ConfirmDevice's verifiers.
        var verifiers: [DeviceVerifier] = []
        /// ConfirmDevice answers UserConfirmationNecessary with it.
        var userChoosesDevice = false
        /// ListDevices' pages, in order.
        var pages: [[UserDevice]] = []
        /// Set: every device call fails with it.
        var error: CognitoError? = nil
    }

    let state = Mutex(State())
    /// Runs its "confirm" step at the start of ConfirmDevice (shared with
    /// sign-in in a FakeCognito: one queue, in order).
    let meanwhile: Meanwhile

    init(meanwhile: Meanwhile = Meanwhile()) { self.meanwhile = meanwhile }

    func call(_ call: String) throws(CognitoError) {
        let error = state.withLock { s in
            s.calls.append(call)
            return s.error
        }
        if let error { throw error }
    }

    func confirmDevice(accessToken: String, deviceKey: String, verifier: DeviceVerifier, name: String) throws(CognitoError) -> Bool {
        meanwhile.run("confirm")
        try call("confirm \(deviceKey) \(name)")
        return state.withLock { s in
            s.verifiers.append(verifier)
            return s.userChoosesDevice
        }
    }

    func updateDeviceStatus(accessToken: String, deviceKey: String, remembered: Bool) throws(CognitoError) {
        try call("\(remembered ? "remember" : "not_remember") \(deviceKey)")
    }

    func listDevices(accessToken: String, paginationToken: String?) throws(CognitoError) -> (devices: [UserDevice], next: String?) {
        try call("list \(paginationToken ?? "-")")
        return state.withLock { s in
            scriptedPage(s.pages, token: paginationToken)
        }
    }

    func forgetDevice(accessToken: String, deviceKey: String) throws(CognitoError) {
        try call("forget \(deviceKey)")
    }
}
