import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// The fake Cognito in the role of the user's devices: calls recorded, ListDevices' pages scripted.
extension FakeCognito: CognitoDevices {
    func deviceCall(_ call: String) throws(CognitoError) {
        let error = state.withLock { s in
            s.deviceCalls.append(call)
            return s.deviceError
        }
        if let error { throw error }
    }

    func confirmDevice(accessToken: String, deviceKey: String, verifier: DeviceVerifier, name: String) throws(CognitoError) -> Bool {
        runMeanwhile("confirm")
        try deviceCall("confirm \(deviceKey) \(name)")
        return state.withLock { s in
            s.verifiers.append(verifier)
            return s.userChoosesDevice
        }
    }

    func updateDeviceStatus(accessToken: String, deviceKey: String, remembered: Bool) throws(CognitoError) {
        try deviceCall("\(remembered ? "remember" : "not_remember") \(deviceKey)")
    }

    func listDevices(accessToken: String, paginationToken: String?) throws(CognitoError) -> (devices: [UserDevice], next: String?) {
        try deviceCall("list \(paginationToken ?? "-")")
        return state.withLock { s in
            let index = Int(paginationToken ?? "0") ?? 0
            let page = index < s.devicePages.count ? s.devicePages[index] : []
            return (page, index + 1 < s.devicePages.count ? String(index + 1) : nil)
        }
    }

    func forgetDevice(accessToken: String, deviceKey: String) throws(CognitoError) {
        try deviceCall("forget \(deviceKey)")
    }
}
