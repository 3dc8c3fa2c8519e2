import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// A Cognito that answers from scripted results and counts calls.
/// Its roles are in FakeCognito+<Role>.swift; the state they keep is here.
final class FakeCognito: Sendable {
    struct State {
        var signInResults: [Result<AuthOutcome, CognitoError>] = []
        var refreshResults: [Result<AuthenticationResult, CognitoError>] = []
        var signInCalls: [(String, String)] = []
        var refreshCalls: [String] = []
        var refreshUsernames: [String?] = []
        /// Account actions, in order, with their arguments.
        var accountCalls: [String] = []
        var accountError: CognitoError? = nil
        /// The DEVICE_KEY (DeviceKey) of every sign-in and refresh, in order.
        var deviceKeysSent: [String?] = []
        /// Device calls, in order: "confirm KEY NAME", "remember KEY", "not_remember KEY", "list TOKEN", "forget KEY".
        var deviceCalls: [String] = []
        /// ConfirmDevice's verifiers.
        var verifiers: [DeviceVerifier] = []
        /// ConfirmDevice answers UserConfirmationNecessary with it.
        var userChoosesDevice = false
        /// ListDevices' pages, in order.
        var devicePages: [[UserDevice]] = []
        /// Set: every device call fails with it.
        var deviceError: CognitoError? = nil
    }

    let state = Mutex(State())
    /// Each runs once, in order, at the start of the call it names
    /// ("sign-in", "confirm"), outside the state's lock: another process
    /// acting meanwhile.
    let meanwhile = Mutex<[(call: String, body: @Sendable () -> Void)]>([])

    func runMeanwhile(_ call: String) {
        let next = meanwhile.withLock { queue in queue.first?.call == call ? queue.removeFirst().body : nil }
        next?()
    }

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

    /// Passkeys: the options StartWebAuthnRegistration answers, the
    /// credentials completed, ListWebAuthnCredentials' pages, and the calls
    /// in order ("start", "complete ID", "list TOKEN", "delete ID").
    struct Passkeys {
        var options: WebAuthn.CreationOptions? = nil
        var completed: [WebAuthn.RegistrationCredential] = []
        var pages: [[Passkey]] = []
        var calls: [String] = []
        var error: CognitoError? = nil
    }

    let passkeyState = Mutex(Passkeys())

    /// The signed-in user's MFA, as GetUser answers it; every change made,
    /// and the software tokens associated (the secret) and verified (the code).
    let mfa = Mutex(MFASettings(enabled: [], preferred: nil))
    let mfaChanges = Mutex<[[MFAKind: MFAPreference]]>([])
    let softwareTokens = Mutex<[String]>([])
    /// Set: every MFA settings call fails with it.
    let mfaError = Mutex<CognitoError?>(nil)

    /// Every InitiateAuth USER_AUTH: its AuthParameters besides USERNAME.
    let userAuthCalls = Mutex<[[String: String]]>([])
    /// Every InitiateAuth CUSTOM_AUTH, likewise.
    let customAuthCalls = Mutex<[[String: String]]>([])

    /// Runs inside GetTokensFromRefreshToken, before it answers: lets a test
    /// act as another process that refreshes at the same moment.
    let duringModernRefresh = Mutex<(@Sendable () -> Void)?>(nil)
}
