#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The second factors Cognito can ask for.
public enum MFAKind: String, Sendable, Equatable, CaseIterable {
    /// An authenticator app (SOFTWARE_TOKEN_MFA).
    case totp = "SOFTWARE_TOKEN_MFA"
    /// A code by text message (SMS_MFA).
    case sms = "SMS_MFA"
    /// A code by email (EMAIL_OTP; some of Cognito's documentation says
    /// EMAIL_MFA, which is taken too).
    case email = "EMAIL_OTP"

    /// Its name on the command line (`--mfa-type`).
    public var optionName: String {
        switch self {
        case .totp: return "totp"
        case .sms: return "sms"
        case .email: return "email"
        }
    }

    /// Every kind by its name on the command line, in order.
    public static var optionNames: [String] { allCases.map(\.optionName) }

    public init?(optionName: String) {
        guard let kind = MFAKind.allCases.first(where: { $0.optionName == optionName }) else { return nil }
        self = kind
    }

    /// The kind a challenge or an MFAS_CAN_CHOOSE entry names.
    init?(challengeName: String) {
        if challengeName == "EMAIL_MFA" { self = .email } else { self.init(rawValue: challengeName) }
    }
}

/// What a person (or a script, through flags) answers when Cognito asks for
/// more than the password. The executable implements it with prompts and
/// flags; each method throws `AuthError.challengeNeedsInput` when it has
/// neither a terminal nor a flag to answer from.
public protocol ChallengeAnswers {
    /// NEW_PASSWORD_REQUIRED: the password to set.
    func newPassword(for username: String) throws -> String
    /// The current code of an authenticator app, or the code sent by SMS
    /// or email (to `destination`, masked, as Cognito says it).
    func mfaCode(_ kind: MFAKind, destination: String?) throws -> String
    /// SELECT_MFA_TYPE.
    func chooseMFA(from options: [MFAKind]) throws -> MFAKind
    /// MFA_SETUP: show the otpauth:// URI (and a QR code) and return the
    /// first code the authenticator app shows.
    func setUpAuthenticator(uri: String) throws -> String
    /// SELECT_CHALLENGE (choice-based sign-in): how to sign in, of the
    /// methods the pool offers this user; `unsupported` names what it also
    /// offers and this tool cannot do (WEB_AUTHN: a passkey).
    func chooseSignInMethod(from methods: [SignInMethod], unsupported: [String]) throws -> SignInMethod
    /// EMAIL_OTP or SMS_OTP as the first factor: the one-time code sent by
    /// email or SMS to `destination` (masked, as Cognito says it).
    func signInCode(_ kind: MFAKind, destination: String?) throws -> String
    /// CUSTOM_CHALLENGE: the answer to the challenge whose public parameters
    /// these are (one round of several, perhaps).
    func customAnswer(_ parameters: [String: String]) throws -> String
    /// A pool where users choose whether to remember a device: whether to
    /// remember this one, named `name`. Never throws for want of a terminal:
    /// the sign-in is done by then, and the answer is then no.
    func rememberDevice(name: String) -> Bool
}

extension TokenManager {
    /// At most this many challenges in one sign-in (new password, then
    /// MFA choice, then MFA code is the longest built-in sequence; a pool's
    /// custom challenges may ask more rounds).
    static let maxChallenges = 16

    /// Signs in, answers every challenge Cognito sends, and stores the three
    /// tokens. Nothing is stored unless the whole sign-in succeeds.
    @discardableResult
    public func signIn(
        username: String, password: String, flow: AuthFlow = .srp, device options: DeviceOptions = DeviceOptions(),
        answers: any ChallengeAnswers
    ) throws -> RefreshedTokens {
        try signIn(username: username, password: { password }, flow: flow, device: options, answers: answers)
    }

    /// The same, asking for the password only when a step needs it: a
    /// choice-based sign-in with a one-time code needs none. `method` is
    /// the choice flow's preferred first factor.
    ///
    /// On a pool that tracks devices, this machine signs in as the user's
    /// device when it is one (a remembered device skips MFA), and becomes
    /// one when Cognito offers (DeviceConfirmation). A device Cognito no
    /// longer knows is deleted and the sign-in made again without it.
    @discardableResult
    public func signIn(
        username: String, password readPassword: () throws -> String, flow: AuthFlow, method: SignInMethod? = nil,
        device options: DeviceOptions = DeviceOptions(), answers: any ChallengeAnswers
    ) throws -> RefreshedTokens {
        store.prepareWrites()
        let cognito = try makeCognito()
        var typed: String? = nil
        func password() throws -> String {
            if let typed { return typed }
            let read = try readPassword()
            typed = read
            return read
        }
        // Only the same user's confirmed device is offered to Cognito.
        var device = try rememberedDevice().flatMap { $0.confirmed && $0.belongs(to: username) ? $0 : nil }
        var result: (tokens: AuthenticationResult, provedDevice: Bool)
        do {
            result = try authenticate(cognito, username: username, password: password, flow: flow, method: method, device: device, answers: answers)
        } catch is DeviceRefused {
            warn("cog-cred: Cognito no longer knows this machine as a device of \(username) (forgotten elsewhere?); signing in without it")
            if let refused = device { try changeDevice(ifStill: refused.key, to: nil) }
            device = nil
            result = try authenticate(cognito, username: username, password: password, flow: flow, method: method, device: nil, answers: answers)
        }
        let sessionDevice = sessionDevice(result.tokens, used: device, signInName: username, name: options.name)
        // Under the refresh lock, so a refresh running now cannot store the
        // old session's tokens over the new ones.
        var tokens = try lock.withLock(profile: profileName) {
            try save(result.tokens, requireRefreshToken: true, device: sessionDevice.stored)
        }
        tokens.device = finishDevice(
            sessionDevice, accessToken: result.tokens.accessToken, provedDevice: result.provedDevice, cognito: cognito, options: options,
            answers: answers)
        return tokens
    }

    /// Cognito refused the device this sign-in offered: it no longer exists
    /// (ResourceNotFoundException), or its proof failed.
    struct DeviceRefused: Error {}

    /// The device challenges.
    static let deviceChallenges: Set<String> = ["DEVICE_SRP_AUTH", "DEVICE_PASSWORD_VERIFIER"]

    /// InitiateAuth and every challenge up to the tokens; whether the
    /// device answered its challenges (and so proved itself) on the way.
    func authenticate(
        _ cognito: any CognitoClient, username: String, password: () throws -> String, flow: AuthFlow, method: SignInMethod?,
        device: RememberedDevice?, answers: any ChallengeAnswers
    ) throws -> (tokens: AuthenticationResult, provedDevice: Bool) {
        func step(_ challenge: String? = nil, _ body: () throws(CognitoError) -> AuthOutcome) throws -> AuthOutcome {
            try signInCall(challenge, offeringDevice: device != nil, body)
        }
        var srp: SRPClient? = nil
        var deviceSRP: SRPClient? = nil
        /// The first factor's parameters (PASSWORD or SRP_A), for USER_AUTH.
        func firstFactor(_ method: SignInMethod) throws -> [String: String] {
            switch method {
            case .password: return ["PASSWORD": try password()]
            case .srp:
                // Read now, before anything is sent: a password that cannot
                // be read must not leave a challenge begun.
                _ = try password()
                let client = try SRPClient()
                srp = client
                return ["SRP_A": client.publicA]
            case .emailOTP, .smsOTP: return [:]
            }
        }
        var outcome: AuthOutcome
        switch flow {
        case .srp:
            let client = try SRPClient()
            srp = client
            outcome = try step { () throws(CognitoError) in
                try cognito.initiateSRP(username: username, srpA: client.publicA, deviceKey: device?.key)
            }
        case .password:
            let typed = try password()
            outcome = try step { () throws(CognitoError) in
                try cognito.signInWithPassword(username: username, password: typed, deviceKey: device?.key)
            }
        case .choice:
            var parameters: [String: String] = [:]
            if let method {
                parameters = try firstFactor(method)
                parameters["PREFERRED_CHALLENGE"] = method.challenge
            }
            parameters["DEVICE_KEY"] = device?.key
            outcome = try step { () throws(CognitoError) in
                try cognito.initiateAuth(flow: "USER_AUTH", username: username, parameters: parameters)
            }
        case .custom:
            var parameters: [String: String] = [:]
            parameters["DEVICE_KEY"] = device?.key
            outcome = try step { () throws(CognitoError) in
                try cognito.initiateAuth(flow: "CUSTOM_AUTH", username: username, parameters: parameters)
            }
        case .customSRP:
            // Amplify's custom flow with SRP: the password proved first, then the custom challenges.
            var parameters = try firstFactor(.srp).merging(["CHALLENGE_NAME": "SRP_A"]) { $1 }
            parameters["DEVICE_KEY"] = device?.key
            outcome = try step { () throws(CognitoError) in
                try cognito.initiateAuth(flow: "CUSTOM_AUTH", username: username, parameters: parameters)
            }
        case .browser:
            throw AuthError.unsupportedChallenge("the browser flow (sign-in --browser)")
        }

        var userID = username
        // A one-time code chosen as the first factor is still to come.
        var codeSignsIn = flow == .choice && (method == .emailOTP || method == .smsOTP)
        for _ in 0..<TokenManager.maxChallenges {
            guard case .challenge(let name, let session, let parameters) = outcome else { break }
            // The name Cognito knows the user by (not an alias they typed):
            // every response carries it as USERNAME, and SECRET_HASH is
            // computed over it. Amazon's SDKs take the challenge's USERNAME,
            // else USER_ID_FOR_SRP; the SRP proof itself is over USER_ID_FOR_SRP.
            userID = parameters["USERNAME"] ?? parameters["USER_ID_FOR_SRP"] ?? userID
            var responses: [String: String]
            var responseSession = session
            switch name {
            case "PASSWORD_VERIFIER":
                guard let srp else { throw AuthError.unsupportedChallenge(name) }
                responses = try passwordVerifier(
                    srp, userID: userID, srpUserID: parameters["USER_ID_FOR_SRP"] ?? userID, password: try password(), parameters)
            case "DEVICE_SRP_AUTH":
                // A remembered device: it proves its own password, by SRP,
                // instead of the user answering MFA.
                guard device != nil else { throw AuthError.unsupportedChallenge(name) }
                let client = try SRPClient()
                deviceSRP = client
                responses = ["USERNAME": userID, "SRP_A": client.publicA]
            case "DEVICE_PASSWORD_VERIFIER":
                guard let device, let deviceSRP else { throw AuthError.unsupportedChallenge(name) }
                responses = try passwordVerifier(
                    deviceSRP, userID: userID, srpUserID: device.key, password: device.password, parameters, poolName: device.groupKey)
            case "SELECT_CHALLENGE":
                // Choice-based sign-in without a preference (or one this
                // user lacks): the pool's first factors for this user. Only
                // there: offered to an SRP profile, answering "password"
                // would send the password to whoever asked.
                guard flow == .choice else { throw AuthError.unsupportedChallenge(name) }
                let offered = TokenManager.jsonList(parameters[AuthOutcome.availableChallenges])
                let methods = offered.compactMap(SignInMethod.init(challenge:))
                let chosen = try answers.chooseSignInMethod(
                    from: methods, unsupported: offered.filter { SignInMethod(challenge: $0) == nil })
                responses = try firstFactor(chosen).merging(["USERNAME": userID, "ANSWER": chosen.challenge]) { $1 }
                codeSignsIn = chosen == .emailOTP || chosen == .smsOTP
            case "EMAIL_OTP" where codeSignsIn, "SMS_OTP":
                // The one-time code that is the first factor (EMAIL_OTP after
                // a password is email MFA, below).
                codeSignsIn = false
                let code = try answers.signInCode(name == "SMS_OTP" ? .sms : .email, destination: parameters["CODE_DELIVERY_DESTINATION"])
                responses = ["USERNAME": userID, name + "_CODE": code]
            case "NEW_PASSWORD_REQUIRED":
                let required = TokenManager.jsonList(parameters["requiredAttributes"])
                if !required.isEmpty { throw AuthError.requiredAttributes(required) }
                responses = ["USERNAME": userID, "NEW_PASSWORD": try answers.newPassword(for: userID)]
            case "SOFTWARE_TOKEN_MFA":
                responses = ["USERNAME": userID, "SOFTWARE_TOKEN_MFA_CODE": try answers.mfaCode(.totp, destination: nil)]
            case "SMS_MFA", "EMAIL_OTP", "EMAIL_MFA":
                // A code sent by text or email, answered under the challenge's
                // own name: SMS_MFA_CODE, EMAIL_OTP_CODE, EMAIL_MFA_CODE.
                let kind: MFAKind = name == "SMS_MFA" ? .sms : .email
                let code = try answers.mfaCode(kind, destination: parameters["CODE_DELIVERY_DESTINATION"])
                responses = ["USERNAME": userID, name + "_CODE": code]
            case "SELECT_MFA_TYPE":
                // Answered with the name Cognito offered.
                let offered = TokenManager.jsonList(parameters["MFAS_CAN_CHOOSE"])
                let options = offered.compactMap(MFAKind.init(challengeName:))
                guard !options.isEmpty else { throw AuthError.unsupportedChallenge(name) }
                let choice = try answers.chooseMFA(from: options)
                responses = ["USERNAME": userID, "ANSWER": offered.first { MFAKind(challengeName: $0) == choice } ?? choice.rawValue]
            case "CUSTOM_CHALLENGE":
                // The pool's Lambda triggers ask; the public parameters are shown.
                responses = ["USERNAME": userID, "ANSWER": try answers.customAnswer(parameters)]
            case "MFA_SETUP":
                let options = TokenManager.jsonList(parameters["MFAS_CAN_SETUP"])
                guard options.isEmpty || options.contains(MFAKind.totp.rawValue) else { throw AuthError.unsupportedChallenge(name) }
                responseSession = try setUpAuthenticator(cognito, session: session, userID: userID, answers: answers)
                responses = ["USERNAME": userID]
            default:
                throw AuthError.unsupportedChallenge(name)
            }
            // As Amazon's SDKs do: every answer names the device signing in.
            responses["DEVICE_KEY"] = device?.key
            let answered = responses
            outcome = try step(name) { () throws(CognitoError) in
                try cognito.respondToChallenge(name: name, session: responseSession, responses: answered)
            }
        }
        guard case .authenticated(let result) = outcome else {
            throw AuthError.cognito(.badResponse(httpStatus: 200, detail: "too many challenges"), operation: .signIn)
        }
        return (result, deviceSRP != nil)
    }

    /// Whether `error`, to a sign-in that offered a device, says the device
    /// is gone (Cognito's "Device does not exist.") or failed its proof. A
    /// wrong client secret or a spent session is no fault of the device's.
    static func refusesDevice(_ error: CognitoError, challenge: String?) -> Bool {
        guard case .service(let code, let message, _) = error else { return false }
        let lower = message.lowercased()
        if code == "ResourceNotFoundException" && lower.contains("device") { return true }
        guard challenge.map(deviceChallenges.contains) == true, !AuthError.isSecretHashFailure(error), !lower.contains("session") else {
            return false
        }
        return code == "NotAuthorizedException" || code == "ResourceNotFoundException"
    }

    /// PASSWORD_VERIFIER's (or, with the device's group key as `poolName`,
    /// DEVICE_PASSWORD_VERIFIER's) responses.
    func passwordVerifier(
        _ srp: SRPClient, userID: String, srpUserID: String, password: String, _ parameters: [String: String], poolName: String? = nil
    ) throws -> [String: String] {
        guard let salt = parameters["SALT"], let b = parameters["SRP_B"], let block = parameters["SECRET_BLOCK"] else {
            throw AuthError.cognito(.badResponse(httpStatus: 200, detail: "an incomplete SRP challenge"), operation: .signIn)
        }
        let poolName = poolName ?? profile.userPoolID.split(separator: "_", maxSplits: 1).last.map(String.init) ?? profile.userPoolID
        let timestamp = SRPClient.timestamp(clock.now())
        let signature = try srp.passwordSignature(
            poolName: poolName, userID: srpUserID, password: password, saltHex: salt, serverBHex: b, secretBlock: block,
            timestamp: timestamp)
        return [
            "USERNAME": userID, "PASSWORD_CLAIM_SECRET_BLOCK": block, "PASSWORD_CLAIM_SIGNATURE": signature,
            "TIMESTAMP": timestamp,
        ]
    }

    /// MFA_SETUP: associate an authenticator app, verify its first code, and
    /// return the session for the final response.
    func setUpAuthenticator(_ cognito: any CognitoClient, session: String?, userID: String, answers: any ChallengeAnswers) throws
        -> String?
    {
        let (secret, associated) = try signInCall { () throws(CognitoError) in try cognito.associateSoftwareToken(session: session) }
        let uri = TOTPURI.make(secret: secret, account: userID, issuer: "Cognito \(profile.userPoolID)")
        let code = try answers.setUpAuthenticator(uri: uri)
        return try signInCall { () throws(CognitoError) in try cognito.verifySoftwareToken(session: associated, code: code) }
    }

    /// One call of a sign-in; when it offered a device, Cognito's refusal
    /// of the device (at `challenge`) is told apart: `DeviceRefused`.
    func signInCall<T>(_ challenge: String? = nil, offeringDevice: Bool = false, _ body: () throws(CognitoError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            if offeringDevice, Self.refusesDevice(error, challenge: challenge) { throw DeviceRefused() }
            throw AuthError.cognito(error, operation: .signIn)
        }
    }

    /// Cognito sends lists inside challenge parameters as JSON text: '["SMS_MFA","SOFTWARE_TOKEN_MFA"]'.
    static func jsonList(_ text: String?) -> [String] {
        guard let text, let data = text.data(using: .utf8) else { return [] }
        return (try? JSONDecoder().decode([String].self, from: data)) ?? []
    }
}

/// otpauth:// URIs (the Key URI Format authenticator apps scan).
public enum TOTPURI {
    public static func make(secret: String, account: String, issuer: String) -> String {
        let label = escape(issuer) + ":" + escape(account)
        return "otpauth://totp/\(label)?secret=\(escape(secret))&issuer=\(escape(issuer))"
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters.
    static func escape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let unreserved = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
            if unreserved {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = Array("0123456789ABCDEF")
                out += "%\(hex[Int(byte >> 4)])\(hex[Int(byte & 0xF)])"
            }
        }
        return out
    }
}
