import Foundation
import Synchronization
@testable import CogCredWrite
@testable import CogCredRead
import CogCredTestSupport

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
    /// Answers given again after a refusal (RefusedAnswer): codes and new
    /// passwords, taken in order before `code` and `newPassword`.
    var again: [String]? = nil
    let seen = Seen()

    func mayAnswerAgain(_ refused: RefusedAnswer) -> Bool {
        seen.refusals.append(refused)
        return again != nil
    }

    /// The next answer given again, if any is left.
    func nextAgain() -> String? {
        guard let again, seen.againTaken < again.count else { return nil }
        defer { seen.againTaken += 1 }
        return again[seen.againTaken]
    }

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
        /// Each refusal told, and how many answers were given again.
        var refusals: [RefusedAnswer] = []
        var againTaken = 0
    }

    func rememberDevice(name: String) -> Bool {
        seen.rememberQuestions.append(name)
        return remember
    }

    func newPassword(for username: String) throws -> String {
        if !seen.refusals.isEmpty, let next = nextAgain() { return next }
        guard let newPassword else { throw AuthError.challengeNeedsInput(challenge: "NEW_PASSWORD_REQUIRED", input: .newPassword) }
        return newPassword
    }

    func mfaCode(_ kind: MFAKind, destination: String?) throws -> String {
        seen.codes.append((kind, destination))
        if !seen.refusals.isEmpty, let next = nextAgain() { return next }
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
        return customAnswers[min(seen.custom.count, customAnswers.count) - 1]
    }

    func signInCode(_ kind: MFAKind, destination: String?) throws -> String {
        seen.signInCodes.append((kind, destination))
        if !seen.refusals.isEmpty, let next = nextAgain() { return next }
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

/// A list call's scripted pages: the page a token names (the first without
/// one) and the token of the next, as ListDevices and ListWebAuthnCredentials page.
func scriptedPage<Item>(_ pages: [[Item]], token: String?) -> ([Item], String?) {
    let index = Int(token ?? "0") ?? 0
    let page = index < pages.count ? pages[index] : []
    return (page, index + 1 < pages.count ? String(index + 1) : nil)
}

/// An agent in this process, serving `store` on a real socket in a new
/// directory: its sessions are made with `cognito`, `profile` and `clock`,
/// and its failures worded by their description.
func servingAgent(
    _ store: InMemoryTokenStore, _ cognito: FakeCognito, profile: Profile = testProfile, clock: FakeClock,
    bounds: AgentServer.Bounds = AgentServer.Bounds(connections: 64, requestBytes: 16 << 20, answering: 8, answeringForOne: 4)
) throws -> AgentConnection {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    let service = AgentService(
        config: { ConfigFile(profiles: ["default": profile]) },
        manager: { name, warn in makeManager(store: store, cognito: cognito, profile: profile, clock: clock, warn: warn) },
        store: store, describe: { error in AgentFailure((error as? any CogCredFailure)?.category ?? .other, "\(error)") })
    guard case .success(let socket) = AgentSocket.listen(at: directory + "/agent", environment: { _ in nil }) else {
        throw AgentFailure(.other, "cannot listen")
    }
    onThread { AgentServer(socket: socket, service: service, bounds: bounds, log: { _ in }).serve() }
    return AgentConnection(path: socket.path)
}
