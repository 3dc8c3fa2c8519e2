#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Cognito's own vocabulary, and the one place it is written: the names of
/// the sign-in flows, challenges, AuthParameters and ChallengeResponses
/// (this file), and the JSON shapes of the actions (CognitoWire+*Shapes,
/// one file per family of actions). Everything above the transport
/// speaks the typed words of Challenge.swift and CognitoClient.swift.
enum CognitoWire {
    // MARK: - Sign-in: starting

    /// InitiateAuth's AuthFlow and AuthParameters for a start; `secretHash`
    /// (over `username`) when the app client has a secret.
    static func initiation(_ start: SignInStart, username: String, deviceKey: String?, secretHash: String? = nil)
        -> (flow: String, parameters: [String: String])
    {
        var parameters = ["USERNAME": username]
        parameters["DEVICE_KEY"] = deviceKey
        parameters["SECRET_HASH"] = secretHash
        switch start {
        case .srp(let srpA):
            parameters["SRP_A"] = srpA
            return ("USER_SRP_AUTH", parameters)
        case .password(let password):
            parameters["PASSWORD"] = password
            return ("USER_PASSWORD_AUTH", parameters)
        case .choice(let factor):
            if let factor {
                parameters.merge(firstFactorParameters(factor)) { $1 }
                parameters["PREFERRED_CHALLENGE"] = challengeName(factor.method)
            }
            return ("USER_AUTH", parameters)
        case .custom(let srpA):
            // Amplify's custom flow with SRP: the password proved first.
            if let srpA {
                parameters["CHALLENGE_NAME"] = "SRP_A"
                parameters["SRP_A"] = srpA
            }
            return ("CUSTOM_AUTH", parameters)
        }
    }

    /// A start that makes Cognito send a code (a one-time code, a custom
    /// trigger's): never sent twice, as a second code would replace the first.
    static func sendsACode(_ start: SignInStart) -> Bool {
        switch start {
        case .custom, .choice(.emailOTP), .choice(.smsOTP): return true
        case .srp, .password, .choice: return false
        }
    }

    /// REFRESH_TOKEN_AUTH's AuthParameters.
    static func refreshParameters(refreshToken: String, secretHash: String?, deviceKey: String?) -> [String: String] {
        var parameters = ["REFRESH_TOKEN": refreshToken]
        parameters["SECRET_HASH"] = secretHash
        parameters["DEVICE_KEY"] = deviceKey
        return parameters
    }

    static let refreshFlow = "REFRESH_TOKEN_AUTH"

    // MARK: - Sign-in: challenges

    /// A challenge as Cognito sent it. `available` is the answer's
    /// AvailableChallenges (SELECT_CHALLENGE's choices).
    static func pending(name: String, session: String?, parameters: [String: String], available: [String]? = nil) throws(CognitoError)
        -> PendingChallenge
    {
        // The name Cognito knows the user by: Amazon's SDKs take the
        // challenge's USERNAME, else USER_ID_FOR_SRP.
        let userID = parameters["USERNAME"] ?? parameters["USER_ID_FOR_SRP"]
        return PendingChallenge(
            challenge: try challenge(name: name, parameters, available: available ?? []), session: session, userID: userID, name: name,
            parameters: parameters)
    }

    static func challenge(name: String, _ parameters: [String: String], available: [String]) throws(CognitoError) -> Challenge {
        let destination = parameters["CODE_DELIVERY_DESTINATION"]
        switch name {
        case "PASSWORD_VERIFIER": return .passwordVerifier(try srpStep(parameters))
        case "DEVICE_SRP_AUTH": return .deviceSRP
        case "DEVICE_PASSWORD_VERIFIER": return .devicePasswordVerifier(try srpStep(parameters))
        case "SOFTWARE_TOKEN_MFA": return .mfaCode(.totp, destination: nil)
        case "SMS_MFA": return .mfaCode(.sms, destination: destination)
        case "EMAIL_MFA": return .mfaCode(.email, destination: destination)
        case "EMAIL_OTP": return .oneTimeCode(.email, destination: destination)
        case "SMS_OTP": return .oneTimeCode(.sms, destination: destination)
        case "SELECT_MFA_TYPE": return .chooseMFA(list(parameters["MFAS_CAN_CHOOSE"]).compactMap(mfaKind(named:)))
        case "SELECT_CHALLENGE":
            return .chooseSignInMethod(available.compactMap(signInMethod(named:)))
        case "NEW_PASSWORD_REQUIRED": return .newPassword(requiredAttributes: list(parameters["requiredAttributes"]))
        case "MFA_SETUP":
            let offered = list(parameters["MFAS_CAN_SETUP"])
            return .setUpMFA(offered.isEmpty ? nil : offered.compactMap(mfaKind(named:)))
        case "CUSTOM_CHALLENGE": return .custom(parameters.filter { $0.key != "USERNAME" && $0.key != "USER_ID_FOR_SRP" })
        case "WEB_AUTHN": return .passkey(requestOptions: parameters["CREDENTIAL_REQUEST_OPTIONS"].map(WebAuthn.RequestOptions.read))
        default: return .unknown(name)
        }
    }

    static func srpStep(_ parameters: [String: String]) throws(CognitoError) -> SRPServerStep {
        guard let salt = parameters["SALT"], let b = parameters["SRP_B"], let block = parameters["SECRET_BLOCK"] else {
            throw .badResponse(httpStatus: 200, detail: "an incomplete SRP challenge")
        }
        return SRPServerStep(salt: salt, serverB: b, secretBlock: block, userID: parameters["USER_ID_FOR_SRP"])
    }

    /// RespondToAuthChallenge's ChallengeResponses; `secretHash` over
    /// `username`. As Amazon's SDKs do, every answer names the device signing in.
    static func responses(
        _ answer: ChallengeAnswer, to pending: PendingChallenge, username: String, deviceKey: String?, secretHash: String? = nil
    ) -> [String: String] {
        var responses = ["USERNAME": username]
        responses["DEVICE_KEY"] = deviceKey
        responses["SECRET_HASH"] = secretHash
        switch answer {
        case .passwordProof(let proof):
            responses["PASSWORD_CLAIM_SECRET_BLOCK"] = proof.secretBlock
            responses["PASSWORD_CLAIM_SIGNATURE"] = proof.signature
            responses["TIMESTAMP"] = proof.timestamp
        case .deviceSRP(let srpA):
            responses["SRP_A"] = srpA
        case .code(let code):
            // Under the challenge's own name: SMS_MFA_CODE, EMAIL_OTP_CODE...
            responses[pending.name + "_CODE"] = code
        case .mfa(let kind):
            // With the name Cognito offered (EMAIL_OTP or EMAIL_MFA).
            responses["ANSWER"] = list(pending.parameters["MFAS_CAN_CHOOSE"]).first { mfaKind(named: $0) == kind } ?? challengeName(kind)
        case .signInMethod(let factor):
            responses.merge(firstFactorParameters(factor)) { $1 }
            responses["ANSWER"] = challengeName(factor.method)
        case .newPassword(let password):
            responses["NEW_PASSWORD"] = password
        case .custom(let text):
            responses["ANSWER"] = text
        case .mfaSetUp:
            break
        case .passkey(let credential):
            responses["CREDENTIAL"] = credential
        }
        return responses
    }

    static func firstFactorParameters(_ factor: FirstFactor) -> [String: String] {
        switch factor {
        case .password(let password): return ["PASSWORD": password]
        case .srp(let srpA): return ["SRP_A": srpA]
        case .emailOTP, .smsOTP, .passkey: return [:]
        }
    }

    /// Cognito sends lists inside challenge parameters as JSON text: '["SMS_MFA","SOFTWARE_TOKEN_MFA"]'.
    static func list(_ text: String?) -> [String] {
        guard let text else { return [] }
        return (try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? []
    }

    // MARK: - Names

    /// An MFA kind by the name a challenge, MFAS_CAN_CHOOSE or GetUser gives
    /// it (email MFA is EMAIL_OTP, or EMAIL_MFA in some of Cognito's documentation).
    static func mfaKind(named name: String) -> MFAKind? {
        switch name {
        case "SOFTWARE_TOKEN_MFA": return .totp
        case "SMS_MFA": return .sms
        case "EMAIL_OTP", "EMAIL_MFA": return .email
        default: return nil
        }
    }

    static func challengeName(_ kind: MFAKind) -> String {
        switch kind {
        case .totp: return "SOFTWARE_TOKEN_MFA"
        case .sms: return "SMS_MFA"
        case .email: return "EMAIL_OTP"
        }
    }

    /// PREFERRED_CHALLENGE, SELECT_CHALLENGE's ANSWER, and the name in AvailableChallenges.
    static func challengeName(_ method: SignInMethod) -> String {
        switch method {
        case .emailOTP: return "EMAIL_OTP"
        case .smsOTP: return "SMS_OTP"
        case .password: return "PASSWORD"
        case .srp: return "PASSWORD_SRP"
        case .passkey: return "WEB_AUTHN"
        }
    }

    static func signInMethod(named name: String) -> SignInMethod? {
        SignInMethod.allCases.first { challengeName($0) == name }
    }
}
