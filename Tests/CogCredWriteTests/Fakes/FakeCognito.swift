import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// A Cognito with all its roles: the one a TokenManager is given. Each
/// role is an in-memory fake of its own (FakeSignIn, FakeSession,
/// FakeAccount, FakeMFA, FakeDevices, FakePasskeys), which it forwards to;
/// sign-in and the session share the device keys sent, sign-in and the
/// devices the `meanwhile` queue.
final class FakeCognito: Sendable {
    let signIn: FakeSignIn
    let session: FakeSession
    let account = FakeAccount()
    let mfa = FakeMFA()
    let devices: FakeDevices
    let passkeys = FakePasskeys()
    /// The DEVICE_KEY (DeviceKey) of every sign-in and refresh, in order.
    let deviceKeysSent: DeviceKeysSent
    /// Another process acting at the start of a sign-in or ConfirmDevice.
    let meanwhile: Meanwhile

    init() {
        let deviceKeysSent = DeviceKeysSent(), meanwhile = Meanwhile()
        self.deviceKeysSent = deviceKeysSent
        self.meanwhile = meanwhile
        signIn = FakeSignIn(deviceKeysSent: deviceKeysSent, meanwhile: meanwhile)
        session = FakeSession(deviceKeysSent: deviceKeysSent)
        devices = FakeDevices(meanwhile: meanwhile)
    }
}

/// The device key of every call that sends one, in order.
final class DeviceKeysSent: Sendable {
    private let keys = Mutex<[String?]>([])

    func append(_ key: String?) { keys.withLock { $0.append(key) } }
    var all: [String?] { keys.withLock { $0 } }
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

/// Every role, forwarded to its fake.
extension FakeCognito: CognitoSignIn {
    func startSignIn(_ start: SignInStart, username: String, deviceKey: String?) throws(CognitoError) -> AuthOutcome {
        try signIn.startSignIn(start, username: username, deviceKey: deviceKey)
    }

    func respond(to challenge: PendingChallenge, with answer: ChallengeAnswer, username: String, deviceKey: String?)
        throws(CognitoError) -> AuthOutcome
    {
        try signIn.respond(to: challenge, with: answer, username: username, deviceKey: deviceKey)
    }

    func associateSoftwareToken(session: String?) throws(CognitoError) -> (secret: String, session: String?) {
        try signIn.associateSoftwareToken(session: session)
    }

    func verifySoftwareToken(session: String?, code: String) throws(CognitoError) -> String? {
        try signIn.verifySoftwareToken(session: session, code: code)
    }
}

/// confirmSession is CognitoClient's own (GetUser: the MFA settings read, of FakeMFA).
extension FakeCognito: CognitoSession {
    func refresh(refreshToken: String, username: String?, deviceKey: String?) throws(CognitoError) -> AuthenticationResult {
        try session.refresh(refreshToken: refreshToken, username: username, deviceKey: deviceKey)
    }

    func getTokensFromRefreshToken(refreshToken: String, deviceKey: String?) throws(CognitoError) -> AuthenticationResult {
        try session.getTokensFromRefreshToken(refreshToken: refreshToken, deviceKey: deviceKey)
    }

    func revokeToken(refreshToken: String) throws(CognitoError) {
        try session.revokeToken(refreshToken: refreshToken)
    }

    func globalSignOut(accessToken: String) throws(CognitoError) {
        try session.globalSignOut(accessToken: accessToken)
    }
}

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
