import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// A Cognito that answers from scripted results and counts calls: the one
/// a TokenManager is given. Signing in and the session (which share the
/// device keys sent and the `meanwhile` queue) are its own, in
/// FakeCognito+SignIn.swift and FakeCognito+Session.swift, with their state
/// here; the other roles are a fake each (FakeAccount, FakeMFA, FakeDevices,
/// FakePasskeys), which it forwards to.
final class FakeCognito: Sendable {
    let account = FakeAccount()
    let mfa = FakeMFA()
    let devices: FakeDevices
    let passkeys = FakePasskeys()

    init() {
        let meanwhile = Meanwhile()
        self.meanwhile = meanwhile
        devices = FakeDevices(meanwhile: meanwhile)
    }

    struct State {
        var signInResults: [Result<AuthOutcome, CognitoError>] = []
        var refreshResults: [Result<AuthenticationResult, CognitoError>] = []
        var signInCalls: [(String, String)] = []
        var refreshCalls: [String] = []
        var refreshUsernames: [String?] = []
        /// Set: RevokeToken and GlobalSignOut fail with it.
        var signOutError: CognitoError? = nil
        /// The DEVICE_KEY (DeviceKey) of every sign-in and refresh, in order.
        var deviceKeysSent: [String?] = []
    }

    let state = Mutex(State())
    /// Another process acting at the start of a sign-in or ConfirmDevice.
    let meanwhile: Meanwhile

    /// The seconds of a RequestBudget in force at each refresh (nil: the
    /// command's deadline alone).
    let refreshBudgets = Mutex<[Double?]>([])

    /// Scripted answers to RespondToAuthChallenge, in order.
    let challengeAnswers = Mutex<[Result<AuthOutcome, CognitoError>]>([])
    /// Every RespondToAuthChallenge: name and responses.
    let responses = Mutex<[(String, [String: String])]>([])
    /// GetTokensFromRefreshToken's answers; empty means "not offered" (500 HTML, as moto).
    let modernRefreshResults = Mutex<[Result<AuthenticationResult, CognitoError>]>([])
    let modernRefreshCalls = Mutex(0)
    let revocations = Mutex<[String]>([])

    /// Every InitiateAuth USER_AUTH: its AuthParameters besides USERNAME.
    let userAuthCalls = Mutex<[[String: String]]>([])
    /// Every InitiateAuth CUSTOM_AUTH, likewise.
    let customAuthCalls = Mutex<[[String: String]]>([])

    /// Runs inside GetTokensFromRefreshToken, before it answers: lets a test
    /// act as another process that refreshes at the same moment.
    let duringModernRefresh = Mutex<(@Sendable () -> Void)?>(nil)
}

/// Steps that each run once, in order, at the start of the call they name
/// ("sign-in", "confirm"), outside the fakes' locks: another process acting
/// meanwhile.
final class Meanwhile: Sendable {
    let queue = Mutex<[(call: String, body: @Sendable () -> Void)]>([])

    func run(_ call: String) {
        let next = queue.withLock { queue in queue.first?.call == call ? queue.removeFirst().body : nil }
        next?()
    }
}

/// The roles that are a fake each, forwarded to it.
extension FakeCognito: CognitoAccount {
    func signUp(username: String, password: String, attributes: [UserAttribute]) throws(CognitoError) -> SignUpResult {
        try account.signUp(username: username, password: password, attributes: attributes)
    }

    func confirmSignUp(username: String, code: String) throws(CognitoError) {
        try account.confirmSignUp(username: username, code: code)
    }

    func resendConfirmationCode(username: String) throws(CognitoError) -> CodeDelivery? {
        try account.resendConfirmationCode(username: username)
    }

    func forgotPassword(username: String) throws(CognitoError) -> CodeDelivery? {
        try account.forgotPassword(username: username)
    }

    func confirmForgotPassword(username: String, code: String, newPassword: String) throws(CognitoError) {
        try account.confirmForgotPassword(username: username, code: code, newPassword: newPassword)
    }

    func changePassword(accessToken: String, previousPassword: String, proposedPassword: String) throws(CognitoError) {
        try account.changePassword(accessToken: accessToken, previousPassword: previousPassword, proposedPassword: proposedPassword)
    }
}

extension FakeCognito: CognitoMFA {
    func associateSoftwareToken(accessToken: String) throws(CognitoError) -> String {
        try mfa.associateSoftwareToken(accessToken: accessToken)
    }

    func verifySoftwareToken(accessToken: String, code: String) throws(CognitoError) {
        try mfa.verifySoftwareToken(accessToken: accessToken, code: code)
    }

    func mfaSettings(accessToken: String) throws(CognitoError) -> MFASettings {
        try mfa.mfaSettings(accessToken: accessToken)
    }

    func setMFAPreference(accessToken: String, _ settings: [MFAKind: MFAPreference]) throws(CognitoError) {
        try mfa.setMFAPreference(accessToken: accessToken, settings)
    }
}

extension FakeCognito: CognitoDevices {
    func confirmDevice(accessToken: String, deviceKey: String, verifier: DeviceVerifier, name: String) throws(CognitoError) -> Bool {
        try devices.confirmDevice(accessToken: accessToken, deviceKey: deviceKey, verifier: verifier, name: name)
    }

    func updateDeviceStatus(accessToken: String, deviceKey: String, remembered: Bool) throws(CognitoError) {
        try devices.updateDeviceStatus(accessToken: accessToken, deviceKey: deviceKey, remembered: remembered)
    }

    func listDevices(accessToken: String, paginationToken: String?) throws(CognitoError) -> (devices: [UserDevice], next: String?) {
        try devices.listDevices(accessToken: accessToken, paginationToken: paginationToken)
    }

    func forgetDevice(accessToken: String, deviceKey: String) throws(CognitoError) {
        try devices.forgetDevice(accessToken: accessToken, deviceKey: deviceKey)
    }
}

extension FakeCognito: CognitoPasskeys {
    func startPasskeyRegistration(accessToken: String) throws(CognitoError) -> WebAuthn.CreationOptions {
        try passkeys.startPasskeyRegistration(accessToken: accessToken)
    }

    func completePasskeyRegistration(accessToken: String, credential: WebAuthn.RegistrationCredential) throws(CognitoError) {
        try passkeys.completePasskeyRegistration(accessToken: accessToken, credential: credential)
    }

    func listPasskeys(accessToken: String, nextToken: String?) throws(CognitoError) -> (passkeys: [Passkey], next: String?) {
        try passkeys.listPasskeys(accessToken: accessToken, nextToken: nextToken)
    }

    func deletePasskey(accessToken: String, id: String) throws(CognitoError) {
        try passkeys.deletePasskey(accessToken: accessToken, id: id)
    }
}
