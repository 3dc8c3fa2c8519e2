#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Cognito's own vocabulary, and the one place it is written: the names of
/// the sign-in flows, challenges, AuthParameters and ChallengeResponses,
/// and the JSON shapes of the actions. Everything above the transport
/// speaks the typed words of Challenge.swift and CognitoClient.swift.
///
/// The JSON's keys are the shapes' property names with the first letter
/// capitalised (`accessToken` is `AccessToken`), as the AWS JSON 1.1
/// protocol spells them; dictionaries (AuthParameters, Logins...) are sent
/// and read as they are.
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

    // MARK: - JSON

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .custom { path in
            let name = path.last?.stringValue ?? ""
            // Inside a WebAuthn object the names are W3C's, as they are.
            if path.dropLast().contains(where: { webAuthnMembers.contains($0.stringValue) }) { return Key(name) }
            return Key(name.prefix(1).uppercased() + name.dropFirst())
        }
        return encoder
    }

    /// Members that carry a WebAuthn object (W3C's lowerCamel names, which
    /// the decoder's rule leaves as they are too).
    static let webAuthnMembers: Set<String> = ["credential"]

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .custom { path in Key(path.last.map { $0.stringValue.prefix(1).lowercased() + $0.stringValue.dropFirst() } ?? "") }
        return decoder
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Turns an HTTP answer into the action's result or a `CognitoError`.
    /// Anything that is not Cognito-shaped JSON is a `badResponse`.
    static func decode<Response: Decodable>(_ response: HTTPResponse) throws(CognitoError) -> Response {
        if response.status == 200 {
            do {
                return try decoder().decode(Response.self, from: response.body)
            } catch {
                throw .badResponse(httpStatus: 200, detail: response.body.isEmpty ? "empty body" : "not the expected JSON")
            }
        }
        if let error = try? decoder().decode(ErrorBody.self, from: response.body), let type = error.type, !type.isEmpty {
            // "com.amazonaws...#NotAuthorizedException" -> "NotAuthorizedException"
            let code = type.split(separator: "#").last.map(String.init) ?? type
            throw .service(code: code, message: error.message ?? "", httpStatus: response.status)
        }
        throw .badResponse(httpStatus: response.status, detail: response.body.isEmpty ? "empty body" : "not a JSON error")
    }

    struct ErrorBody: Decodable {
        var type: String?
        /// `message`, or `Message` as some AWS services spell it: both read as this.
        var message: String?

        enum CodingKeys: String, CodingKey {
            case type = "__type"
            case message
        }
    }

    // MARK: - Shapes

    struct InitiateAuthRequest: Encodable {
        var authFlow: String
        var clientId: String
        var authParameters: [String: String]
    }

    struct InitiateAuthResponse: Decodable {
        var authenticationResult: AuthenticationResultBody?
        var challengeName: String?
        var session: String?
        var challengeParameters: [String: String]?
        var availableChallenges: [String]?

        func outcome() throws(CognitoError) -> AuthOutcome {
            if let result = authenticationResult {
                guard let access = result.accessToken, !access.isEmpty else {
                    throw .badResponse(httpStatus: 200, detail: "no access token in the answer")
                }
                var newDevice: NewDeviceMetadata? = nil
                if let metadata = result.newDeviceMetadata, let key = metadata.deviceKey, let group = metadata.deviceGroupKey,
                    !key.isEmpty, !group.isEmpty
                {
                    newDevice = NewDeviceMetadata(deviceKey: key, deviceGroupKey: group)
                }
                return .authenticated(
                    AuthenticationResult(
                        accessToken: access, idToken: result.idToken, refreshToken: result.refreshToken, expiresIn: result.expiresIn,
                        newDevice: newDevice))
            }
            if let name = challengeName, !name.isEmpty {
                return .challenge(
                    try CognitoWire.pending(name: name, session: session, parameters: challengeParameters ?? [:], available: availableChallenges))
            }
            throw .badResponse(httpStatus: 200, detail: "neither tokens nor a challenge in the answer")
        }
    }

    struct AuthenticationResultBody: Decodable {
        var accessToken: String?, idToken: String?, refreshToken: String?
        /// Seconds the access token lives.
        var expiresIn: Int64?
        var newDeviceMetadata: NewDeviceMetadataBody?
    }

    struct NewDeviceMetadataBody: Decodable {
        var deviceKey: String?, deviceGroupKey: String?
    }

    struct RespondToAuthChallengeRequest: Encodable {
        var challengeName: String, clientId: String, session: String?
        var challengeResponses: [String: String]
    }

    /// GetTokensFromRefreshToken and RevokeToken send the raw client secret.
    struct RefreshTokenRequest: Encodable {
        var refreshToken: String
        var clientId: String, clientSecret: String?
        var deviceKey: String?
    }

    struct RevokeTokenRequest: Encodable {
        var token: String
        var clientId: String, clientSecret: String?
    }

    /// The shared shape of the unauthenticated account actions (SignUp,
    /// ConfirmSignUp, ResendConfirmationCode, ForgotPassword,
    /// ConfirmForgotPassword); absent fields are not sent.
    struct AccountRequest: Encodable {
        var clientId: String
        var username: String
        var secretHash: String?
        var password: String? = nil
        var confirmationCode: String? = nil
        var userAttributes: [UserAttribute]? = nil
    }

    struct SignUpResponse: Decodable {
        var userConfirmed: Bool?, userSub: String?
        var codeDeliveryDetails: CodeDeliveryDetails?
    }

    struct DeliveryResponse: Decodable {
        var codeDeliveryDetails: CodeDeliveryDetails?
    }

    struct CodeDeliveryDetails: Decodable {
        var destination: String?, deliveryMedium: String?, attributeName: String?

        var delivery: CodeDelivery { CodeDelivery(destination: destination, medium: deliveryMedium, attributeName: attributeName) }
    }

    /// A signed-in user's AccessToken, or a sign-in's Session (MFA_SETUP).
    struct SessionRequest: Encodable {
        var session: String? = nil
        var accessToken: String? = nil
    }

    struct ChangePasswordRequest: Encodable {
        var accessToken: String
        var previousPassword: String
        var proposedPassword: String
    }

    struct AssociateSoftwareTokenResponse: Decodable {
        var secretCode: String?
        var session: String?
    }

    struct VerifySoftwareTokenRequest: Encodable {
        var session: String? = nil
        var accessToken: String? = nil
        var userCode: String
        var friendlyDeviceName: String
    }

    struct VerifySoftwareTokenResponse: Decodable {
        var status: String?
        var session: String?

        /// Status SUCCESS (or none, as some emulators answer).
        var succeeded: Bool { status == nil || status == "SUCCESS" }
    }

    struct GetUserResponse: Decodable {
        var userMFASettingList: [String]?
        var preferredMfaSetting: String?

        var settings: MFASettings {
            MFASettings(
                enabled: (userMFASettingList ?? []).compactMap(CognitoWire.mfaKind(named:)),
                preferred: preferredMfaSetting.flatMap(CognitoWire.mfaKind(named:)))
        }
    }

    struct SetUserMFAPreferenceRequest: Encodable {
        struct Setting: Encodable {
            var enabled: Bool
            var preferredMfa: Bool
        }

        var accessToken: String
        var sms: Setting?
        var totp: Setting?
        var email: Setting?

        init(accessToken: String, _ settings: [MFAKind: MFAPreference]) {
            self.accessToken = accessToken
            let setting = { (kind: MFAKind) in settings[kind].map { Setting(enabled: $0.enabled, preferredMfa: $0.preferred) } }
            sms = setting(.sms)
            totp = setting(.totp)
            email = setting(.email)
        }

        enum CodingKeys: String, CodingKey {
            case accessToken
            case sms = "SMSMfaSettings"
            case totp = "SoftwareTokenMfaSettings"
            case email = "EmailMfaSettings"
        }
    }

    struct ConfirmDeviceRequest: Encodable {
        struct Verifier: Encodable {
            var passwordVerifier: String, salt: String
        }

        var accessToken: String
        var deviceKey: String
        var deviceSecretVerifierConfig: Verifier
        var deviceName: String
    }

    struct ConfirmDeviceResponse: Decodable {
        var userConfirmationNecessary: Bool?
    }

    /// UpdateDeviceStatus (with a status) and ForgetDevice.
    struct DeviceRequest: Encodable {
        var accessToken: String
        var deviceKey: String
        var deviceRememberedStatus: String? = nil

        static func status(remembered: Bool) -> String { remembered ? "remembered" : "not_remembered" }
    }

    struct ListDevicesRequest: Encodable {
        var accessToken: String
        var limit: Int
        var paginationToken: String?
    }

    struct ListDevicesResponse: Decodable {
        struct Device: Decodable {
            struct Attribute: Decodable {
                var name: String
                var value: String?
            }

            var deviceKey: String?
            var deviceAttributes: [Attribute]?
            var deviceCreateDate: Double?
            var deviceLastModifiedDate: Double?
            var deviceLastAuthenticatedDate: Double?

            var userDevice: UserDevice? {
                guard let deviceKey, !deviceKey.isEmpty else { return nil }
                let attributes = Dictionary((deviceAttributes ?? []).map { ($0.name, $0.value ?? "") }) { first, _ in first }
                let seen = deviceLastAuthenticatedDate ?? deviceLastModifiedDate ?? deviceCreateDate
                return UserDevice(
                    key: deviceKey, name: attributes["device_name"], lastSeen: seen.flatMap { Int64(exactly: $0.rounded(.down)) },
                    remembered: attributes["dev:device_remembered_status"] == "remembered")
            }
        }

        var devices: [Device]?
        var paginationToken: String?
    }

    // MARK: - Passkeys (WebAuthn registration and management)

    struct StartWebAuthnRegistrationResponse: Decodable {
        var credentialCreationOptions: WebAuthn.CreationOptions?
    }

    struct CompleteWebAuthnRegistrationRequest: Encodable {
        var accessToken: String
        var credential: WebAuthn.RegistrationCredential
    }

    struct ListWebAuthnCredentialsRequest: Encodable {
        var accessToken: String
        var nextToken: String?
        var maxResults: Int
    }

    struct ListWebAuthnCredentialsResponse: Decodable {
        struct Credential: Decodable {
            var credentialId: String?
            var friendlyCredentialName: String?
            var relyingPartyId: String?
            var authenticatorAttachment: String?
            var authenticatorTransports: [String]?
            var createdAt: Double?

            var passkey: Passkey? {
                guard let credentialId, !credentialId.isEmpty else { return nil }
                return Passkey(
                    id: credentialId, name: friendlyCredentialName, relyingParty: relyingPartyId, attachment: authenticatorAttachment,
                    transports: authenticatorTransports ?? [], created: createdAt.flatMap { Int64(exactly: $0.rounded(.down)) })
            }
        }

        var credentials: [Credential]?
        var nextToken: String?
    }

    struct DeleteWebAuthnCredentialRequest: Encodable {
        var accessToken: String
        var credentialId: String
    }

    /// Actions that answer `{}`.
    struct Empty: Decodable {}
}
