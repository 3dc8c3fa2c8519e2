import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

/// A Cognito that answers from scripted results and counts calls.
final class FakeCognito: CognitoClient {
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

    private func runMeanwhile(_ call: String) {
        let next = meanwhile.withLock { queue in queue.first?.call == call ? queue.removeFirst().body : nil }
        next?()
    }

    /// InitiateAuth, as the wire would send it (CognitoWire): USER_PASSWORD_AUTH
    /// is a sign-in call, USER_AUTH and CUSTOM_AUTH are kept with their
    /// AuthParameters besides USERNAME. Whatever its flow, it takes the next
    /// first answer (`onSignIn`); the answers to RespondToAuthChallenge come
    /// from `challengeAnswers`.
    func startSignIn(_ start: SignInStart, username: String, deviceKey: String?) throws(CognitoError) -> AuthOutcome {
        var (flow, parameters) = CognitoWire.initiation(start, username: username, deviceKey: deviceKey)
        parameters["USERNAME"] = nil
        state.withLock { $0.deviceKeysSent.append(deviceKey) }
        switch flow {
        case "USER_PASSWORD_AUTH":
            runMeanwhile("sign-in")
            state.withLock { $0.signInCalls.append((username, parameters["PASSWORD"] ?? "")) }
        case "USER_AUTH": userAuthCalls.withLock { $0.append(parameters) }
        case "CUSTOM_AUTH": customAuthCalls.withLock { $0.append(parameters) }
        default: break
        }
        let next: Result<AuthOutcome, CognitoError> = state.withLock { s in
            s.signInResults.isEmpty ? .failure(.deadlineExceeded) : s.signInResults.removeFirst()
        }
        return try next.get()
    }

    /// The seconds of a RequestBudget in force at each refresh (nil: the
    /// command's deadline alone).
    let refreshBudgets = Mutex<[Double?]>([])

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

    /// Records an account action and fails it if the test asked for that.
    private func account(_ call: String) throws(CognitoError) {
        let error: CognitoError? = state.withLock { s in
            s.accountCalls.append(call)
            return s.accountError
        }
        if let error { throw error }
    }

    func signUp(username: String, password: String, attributes: [UserAttribute]) throws(CognitoError) -> SignUpResult {
        try account("SignUp \(username) \(attributes.map { "\($0.name)=\($0.value)" }.joined(separator: ","))")
        return SignUpResult(confirmed: false, userSub: "sub", delivery: CodeDelivery(destination: "a***@e***", medium: "EMAIL", attributeName: "email"))
    }

    func confirmSignUp(username: String, code: String) throws(CognitoError) {
        try account("ConfirmSignUp \(username) \(code)")
    }

    func resendConfirmationCode(username: String) throws(CognitoError) -> CodeDelivery? {
        try account("ResendConfirmationCode \(username)")
        return nil
    }

    func forgotPassword(username: String) throws(CognitoError) -> CodeDelivery? {
        try account("ForgotPassword \(username)")
        return nil
    }

    func confirmForgotPassword(username: String, code: String, newPassword: String) throws(CognitoError) {
        try account("ConfirmForgotPassword \(username) \(code)")
    }

    func changePassword(accessToken: String, previousPassword: String, proposedPassword: String) throws(CognitoError) {
        try account("ChangePassword")
    }

    var accountCalls: [String] { state.withLock { $0.accountCalls } }

    // MARK: Challenges, rotation and revocation

    /// Scripted answers to RespondToAuthChallenge, in order.
    let challengeAnswers = Mutex<[Result<AuthOutcome, CognitoError>]>([])
    /// Every RespondToAuthChallenge: name and responses.
    let responses = Mutex<[(String, [String: String])]>([])
    /// GetTokensFromRefreshToken's answers; empty means "not offered" (500 HTML, as moto).
    let modernRefreshResults = Mutex<[Result<AuthenticationResult, CognitoError>]>([])
    let modernRefreshCalls = Mutex(0)
    let revocations = Mutex<[String]>([])

    private func deviceCall(_ call: String) throws(CognitoError) {
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

    private func passkeyCall(_ call: String) throws(CognitoError) {
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

    /// The signed-in user's MFA, as GetUser answers it; every change made,
    /// and the software tokens associated (the secret) and verified (the code).
    let mfa = Mutex(MFASettings(enabled: [], preferred: nil))
    let mfaChanges = Mutex<[[MFAKind: MFAPreference]]>([])
    let softwareTokens = Mutex<[String]>([])
    /// Set: every MFA settings call fails with it.
    let mfaError = Mutex<CognitoError?>(nil)

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

    /// Every InitiateAuth USER_AUTH: its AuthParameters besides USERNAME.
    let userAuthCalls = Mutex<[[String: String]]>([])
    /// Every InitiateAuth CUSTOM_AUTH, likewise.
    let customAuthCalls = Mutex<[[String: String]]>([])

    /// RespondToAuthChallenge, recorded as the wire would send it: the
    /// challenge's name and ChallengeResponses (CognitoWire).
    func respond(to challenge: PendingChallenge, with answer: ChallengeAnswer, username: String, deviceKey: String?)
        throws(CognitoError) -> AuthOutcome
    {
        let sent = CognitoWire.responses(answer, to: challenge, username: username, deviceKey: deviceKey)
        responses.withLock { $0.append((challenge.name, sent)) }
        return try nextChallengeAnswer()
    }

    private func nextChallengeAnswer() throws(CognitoError) -> AuthOutcome {
        let next: Result<AuthOutcome, CognitoError> = challengeAnswers.withLock { $0.isEmpty ? .failure(.deadlineExceeded) : $0.removeFirst() }
        return try next.get()
    }

    func associateSoftwareToken(session: String?) throws(CognitoError) -> (secret: String, session: String?) {
        ("JBSWY3DPEHPK3PXP", "associated")
    }

    func verifySoftwareToken(session: String?, code: String) throws(CognitoError) -> String? {
        guard code == "123456" else { throw .service(code: "EnableSoftwareTokenMFAException", message: "Code mismatch", httpStatus: 400) }
        return "verified"
    }

    /// Runs inside GetTokensFromRefreshToken, before it answers: lets a test
    /// act as another process that refreshes at the same moment.
    let duringModernRefresh = Mutex<(@Sendable () -> Void)?>(nil)

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
        if let error = state.withLock({ $0.accountError }) { throw error }
    }

    func globalSignOut(accessToken: String) throws(CognitoError) {
        revocations.withLock { $0.append("global") }
        if let error = state.withLock({ $0.accountError }) { throw error }
    }

    var refreshCount: Int { state.withLock { $0.refreshCalls.count } }
    var lastRefreshToken: String? { state.withLock { $0.refreshCalls.last } }

    func onRefresh(_ result: Result<AuthenticationResult, CognitoError>) {
        state.withLock { $0.refreshResults.append(result) }
    }

    func onSignIn(_ result: Result<AuthOutcome, CognitoError>) {
        state.withLock { $0.signInResults.append(result) }
    }
}

/// An HTTP transport that records the request and returns a canned answer.
final class FakeTransport: HTTPTransport {
    let answer: Result<HTTPResponse, TransportError>
    let requests = Mutex<[HTTPRequest]>([])

    init(_ answer: Result<HTTPResponse, TransportError>) { self.answer = answer }

    convenience init(status: Int, body: String) {
        self.init(.success(HTTPResponse(status: status, body: Data(body.utf8))))
    }

    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        requests.withLock { $0.append(request) }
        return try answer.get()
    }

    var last: HTTPRequest? { requests.withLock { $0.last } }
}


/// The one way a unit test makes a TokenManager: profile "default" (the
/// test profile unless `profile`), a store, fakes for the services it calls
/// (a service not given fails as unreachable), a fixed clock and, unless the
/// test watches one, no lock: a single caller.
func makeManager(
    store: any TokenStore = InMemoryTokenStore(), cognito: FakeCognito = FakeCognito(), oauth: FakeOAuth? = nil,
    identity: FakeIdentity? = nil, authenticator: FakeAuthenticator = FakeAuthenticator(), profile: Profile = testProfile, clock: FakeClock,
    refreshMemory: any RefreshAPIMemory = InMemoryRefreshMemory(), lock: any RefreshLock = NoRefreshLock(),
    warn: @escaping @Sendable (String) -> Void = { _ in }
) -> TokenManager {
    TokenManager(
        profileName: "default", profile: profile, store: store, cognito: { cognito },
        oauth: {
            guard let oauth else { throw ConfigError.missingDomain }
            return oauth
        },
        identity: {
            guard let identity else { throw CognitoError.deadlineExceeded }
            return identity
        },
        authenticator: { authenticator }, clock: clock, refreshMemory: refreshMemory, lock: lock, warn: warn)
}

/// A security key that signs with fixed bytes and records what it was asked
/// (nothing, when a request must not reach it).
final class FakeAuthenticator: Authenticator {
    struct State {
        var assertions: [AssertionRequest] = []
        var creations: [CredentialRequest] = []
        var failure: PasskeyError? = nil
        /// Asks the prompts for a PIN first.
        var wantsPIN = false
        var pinsGiven: [String] = []
    }

    let state = Mutex(State())
    static let credentialID: [UInt8] = [1, 2, 3, 4, 250, 251]

    func assertion(_ request: AssertionRequest, prompts: any PasskeyPrompts) throws -> Assertion {
        let (failure, wantsPIN) = state.withLock { s in
            s.assertions.append(request)
            return (s.failure, s.wantsPIN)
        }
        if wantsPIN { try note(prompts.securityKeyPIN(retriesLeft: 8)) }
        prompts.touchSecurityKey(choosing: false)
        if let failure { throw failure }
        return Assertion(credentialID: Self.credentialID, authenticatorData: [9, 9, 9], signature: [7, 7], userHandle: [5])
    }

    func makeCredential(_ request: CredentialRequest, prompts: any PasskeyPrompts) throws -> NewCredential {
        let (failure, wantsPIN) = state.withLock { s in
            s.creations.append(request)
            return (s.failure, s.wantsPIN)
        }
        if wantsPIN { try note(prompts.securityKeyPIN(retriesLeft: 8)) }
        prompts.touchSecurityKey(choosing: false)
        if let failure { throw failure }
        return NewCredential(id: Self.credentialID, authenticatorData: [8, 8], format: "none", attestationStatement: [0xA0], transports: ["usb"])
    }

    private func note(_ pin: String) { state.withLock { $0.pinsGiven.append(pin) } }
}


/// Challenge answers a test sets up front; a nil answer means "no input available".
struct ScriptedAnswers: ChallengeAnswers {
    var newPassword: String? = nil
    var code: String? = nil
    var choice: MFAKind? = nil
    var method: SignInMethod? = nil
    var signInCode: String? = nil
    var customAnswers: [String] = []
    /// The answer to "remember this device?".
    var remember = false
    /// The security key's PIN.
    var pin: String? = nil
    let seen = Seen()

    func securityKeyPIN(retriesLeft: Int?) throws -> String {
        seen.pins.append(retriesLeft)
        guard let pin else { throw InputError("the security key needs its PIN and there is no terminal to ask on", category: .usage) }
        return pin
    }

    func touchSecurityKey(choosing: Bool) { seen.touches += 1 }

    final class Seen: @unchecked Sendable {
        var uris: [String] = []
        /// Each code asked for: its kind and where it was sent.
        var codes: [(MFAKind, String?)] = []
        /// Each SELECT_CHALLENGE: what was offered.
        var methods: [[SignInMethod]] = []
        /// Each PIN asked for: the tries left the key said.
        var pins: [Int?] = []
        /// Each touch asked for.
        var touches = 0
        /// Each first-factor code asked for.
        var signInCodes: [(MFAKind, String?)] = []
        /// Each custom challenge's parameters.
        var custom: [[String: String]] = []
        /// Each device name asked about.
        var rememberQuestions: [String] = []
    }

    func rememberDevice(name: String) -> Bool {
        seen.rememberQuestions.append(name)
        return remember
    }

    func newPassword(for username: String) throws -> String {
        guard let newPassword else { throw AuthError.challengeNeedsInput(challenge: "NEW_PASSWORD_REQUIRED", input: .newPassword) }
        return newPassword
    }

    func mfaCode(_ kind: MFAKind, destination: String?) throws -> String {
        seen.codes.append((kind, destination))
        guard let code else { throw AuthError.challengeNeedsInput(challenge: kind.rawValue, input: .mfaCode) }
        return code
    }

    func chooseSignInMethod(from methods: [SignInMethod]) throws -> SignInMethod {
        seen.methods.append(methods)
        guard let method else { throw AuthError.challengeNeedsInput(challenge: "SELECT_CHALLENGE", input: .signInMethod(methods)) }
        return method
    }

    func customAnswer(_ parameters: [String: String]) throws -> String {
        seen.custom.append(parameters)
        guard !customAnswers.isEmpty else { throw AuthError.challengeNeedsInput(challenge: "CUSTOM_CHALLENGE", input: .customAnswer) }
        return customAnswers[seen.custom.count - 1]
    }

    func signInCode(_ kind: MFAKind, destination: String?) throws -> String {
        seen.signInCodes.append((kind, destination))
        guard let signInCode else { throw AuthError.challengeNeedsInput(challenge: kind.rawValue, input: .signInCode) }
        return signInCode
    }

    func chooseMFA(from options: [MFAKind]) throws -> MFAKind {
        guard let choice else { throw AuthError.challengeNeedsInput(challenge: "SELECT_MFA_TYPE", input: .mfaKind(options)) }
        return choice
    }

    func setUpAuthenticator(uri: String) throws -> String {
        seen.uris.append(uri)
        return try mfaCode(.totp, destination: nil)
    }
}

extension AuthOutcome {
    /// Where a scripted SELECT_CHALLENGE carries the answer's AvailableChallenges (a JSON list).
    static let availableChallenges = "AvailableChallenges"

    /// A challenge scripted as Cognito's JSON says it, read as CognitoWire reads it.
    static func challenge(name: String, session: String?, parameters: [String: String]) -> AuthOutcome {
        var parameters = parameters
        let available = parameters.removeValue(forKey: availableChallenges).map { CognitoWire.list($0) }
        return .challenge(try! CognitoWire.pending(name: name, session: session, parameters: parameters, available: available))
    }

    /// A challenge scripted by what it asks, as Cognito would send it: the
    /// name and parameters CognitoWire reads back into `asked` (checked), so
    /// the answers the sign-in sends are the wire's. `userID`: the USERNAME
    /// the challenge names the user by.
    static func challenge(_ asked: Challenge, session: String?, userID: String? = nil) -> AuthOutcome {
        func list(_ names: [String]) -> String { "[" + names.map { "\"\($0)\"" }.joined(separator: ",") + "]" }
        var parameters: [String: String] = [:]
        parameters["USERNAME"] = userID
        var available: [String]? = nil
        let name: String
        switch asked {
        case .passwordVerifier(let step), .devicePasswordVerifier(let step):
            name = asked.provesDevice ? "DEVICE_PASSWORD_VERIFIER" : "PASSWORD_VERIFIER"
            parameters["SALT"] = step.salt
            parameters["SRP_B"] = step.serverB
            parameters["SECRET_BLOCK"] = step.secretBlock
            parameters["USER_ID_FOR_SRP"] = step.userID
        case .deviceSRP: name = "DEVICE_SRP_AUTH"
        case .mfaCode(let kind, let destination):
            // Email MFA by the name that cannot be read as a one-time code.
            name = kind == .email ? "EMAIL_MFA" : CognitoWire.challengeName(kind)
            parameters["CODE_DELIVERY_DESTINATION"] = destination
        case .oneTimeCode(let kind, let destination):
            name = kind == .sms ? "SMS_OTP" : "EMAIL_OTP"
            parameters["CODE_DELIVERY_DESTINATION"] = destination
        case .chooseMFA(let kinds):
            name = "SELECT_MFA_TYPE"
            parameters["MFAS_CAN_CHOOSE"] = list(kinds.map(CognitoWire.challengeName))
        case .chooseSignInMethod(let methods):
            name = "SELECT_CHALLENGE"
            available = methods.map(CognitoWire.challengeName)
        case .newPassword(let attributes):
            name = "NEW_PASSWORD_REQUIRED"
            parameters["requiredAttributes"] = list(attributes)
        case .setUpMFA(let kinds):
            name = "MFA_SETUP"
            parameters["MFAS_CAN_SETUP"] = kinds.map { list($0.map(CognitoWire.challengeName)) }
        case .custom(let own):
            name = "CUSTOM_CHALLENGE"
            parameters.merge(own) { $1 }
        case .passkey:
            preconditionFailure("a passkey challenge is scripted with its request options, as Cognito's JSON")
        case .unknown(let unknown): name = unknown
        }
        let pending = try! CognitoWire.pending(name: name, session: session, parameters: parameters, available: available)
        precondition(pending.challenge == asked, "\(asked) does not survive the wire: \(pending.challenge)")
        return .challenge(pending)
    }
}
