#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Cognito's user pool API: JSON over HTTPS, unsigned (the actions cog-cred
/// uses are public and authenticate with the app client id and the user's
/// own credentials).
public struct CognitoHTTPClient: CognitoClient {
    public let endpoint: String
    public let clientID: String
    /// The app client's secret, when it has one: every call that Cognito
    /// requires it for then carries SECRET_HASH.
    let clientSecret: String?
    public let timeouts: Timeouts
    public let deadline: Deadline
    /// A PEM file of CA certificates to trust instead of the system's.
    let caBundle: String?
    /// The endpoint is plain HTTP and was allowed to be (Endpoint.resolve).
    let allowsCleartext: Bool
    let transport: any HTTPTransport
    let retryPolicy: RetryPolicy
    /// The X-Amz-Target prefix: the user pool API's, or (for the identity
    /// pool client built on this one) `AWSCognitoIdentityService`.
    var targetPrefix = "AWSCognitoIdentityProviderService"

    public init(
        endpoint: String, clientID: String, clientSecret: String? = nil, timeouts: Timeouts, deadline: Deadline,
        caBundle: String? = nil, allowsCleartext: Bool = false, transport: any HTTPTransport = CurlTransport(),
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.allowsCleartext = allowsCleartext
        self.endpoint = endpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.timeouts = timeouts
        self.deadline = deadline
        self.caBundle = caBundle
        self.transport = transport
        self.retryPolicy = retryPolicy
    }

    func secretHash(_ username: String?) -> String? {
        guard let clientSecret, let username else { return nil }
        return SecretHash.compute(username: username, clientID: clientID, clientSecret: clientSecret)
    }

    public func signInWithPassword(username: String, password: String, deviceKey: String?) throws(CognitoError) -> AuthOutcome {
        var parameters = ["USERNAME": username, "PASSWORD": password]
        parameters["SECRET_HASH"] = secretHash(username)
        parameters["DEVICE_KEY"] = deviceKey
        let response: InitiateAuthResponse = try call(
            "InitiateAuth", InitiateAuthRequest(authFlow: "USER_PASSWORD_AUTH", clientID: clientID, authParameters: parameters))
        return try response.outcome()
    }

    public func refresh(refreshToken: String, username: String?, deviceKey: String?) throws(CognitoError) -> AuthenticationResult {
        var parameters = ["REFRESH_TOKEN": refreshToken]
        parameters["SECRET_HASH"] = secretHash(username)
        parameters["DEVICE_KEY"] = deviceKey
        let response: InitiateAuthResponse = try call(
            "InitiateAuth", InitiateAuthRequest(authFlow: "REFRESH_TOKEN_AUTH", clientID: clientID, authParameters: parameters))
        guard case .authenticated(let result) = try response.outcome() else {
            throw .badResponse(httpStatus: 200, detail: "a refresh answered with a challenge")
        }
        return result
    }

    public func signUp(username: String, password: String, attributes: [UserAttribute]) throws(CognitoError) -> SignUpResult {
        let response: SignUpResponse = try call(
            "SignUp",
            AccountRequest(
                clientID: clientID, username: username, secretHash: secretHash(username), password: password,
                userAttributes: attributes))
        return SignUpResult(
            confirmed: response.userConfirmed ?? false, userSub: response.userSub, delivery: response.codeDeliveryDetails?.delivery)
    }

    public func confirmSignUp(username: String, code: String) throws(CognitoError) {
        let _: Empty = try call(
            "ConfirmSignUp",
            AccountRequest(clientID: clientID, username: username, secretHash: secretHash(username), confirmationCode: code))
    }

    public func resendConfirmationCode(username: String) throws(CognitoError) -> CodeDelivery? {
        let response: DeliveryResponse = try call(
            "ResendConfirmationCode", AccountRequest(clientID: clientID, username: username, secretHash: secretHash(username)))
        return response.codeDeliveryDetails?.delivery
    }

    public func forgotPassword(username: String) throws(CognitoError) -> CodeDelivery? {
        let response: DeliveryResponse = try call(
            "ForgotPassword", AccountRequest(clientID: clientID, username: username, secretHash: secretHash(username)))
        return response.codeDeliveryDetails?.delivery
    }

    public func confirmForgotPassword(username: String, code: String, newPassword: String) throws(CognitoError) {
        let _: Empty = try call(
            "ConfirmForgotPassword",
            AccountRequest(
                clientID: clientID, username: username, secretHash: secretHash(username), password: newPassword,
                confirmationCode: code))
    }

    public func changePassword(accessToken: String, previousPassword: String, proposedPassword: String) throws(CognitoError) {
        let _: Empty = try call(
            "ChangePassword",
            ChangePasswordRequest(accessToken: accessToken, previousPassword: previousPassword, proposedPassword: proposedPassword))
    }

    public func initiateSRP(username: String, srpA: String, deviceKey: String?) throws(CognitoError) -> AuthOutcome {
        var parameters = ["USERNAME": username, "SRP_A": srpA]
        parameters["SECRET_HASH"] = secretHash(username)
        parameters["DEVICE_KEY"] = deviceKey
        let response: InitiateAuthResponse = try call(
            "InitiateAuth", InitiateAuthRequest(authFlow: "USER_SRP_AUTH", clientID: clientID, authParameters: parameters))
        return try response.outcome()
    }

    public func initiateAuth(flow: String, username: String, parameters: [String: String]) throws(CognitoError) -> AuthOutcome {
        var parameters = parameters
        parameters["USERNAME"] = username
        parameters["SECRET_HASH"] = secretHash(username)
        // One that sends a code (a one-time code, a custom trigger's) is not
        // sent twice: a second code would replace the first.
        let sendsACode = flow == "CUSTOM_AUTH" || ["EMAIL_OTP", "SMS_OTP"].contains(parameters["PREFERRED_CHALLENGE"] ?? "")
        let response: InitiateAuthResponse = try call(
            "InitiateAuth", InitiateAuthRequest(authFlow: flow, clientID: clientID, authParameters: parameters), once: sendsACode)
        return try response.outcome()
    }

    public func respondToChallenge(name: String, session: String?, responses: [String: String]) throws(CognitoError) -> AuthOutcome {
        var responses = responses
        responses["SECRET_HASH"] = secretHash(responses["USERNAME"])
        let response: InitiateAuthResponse = try call(
            "RespondToAuthChallenge",
            RespondToAuthChallengeRequest(challengeName: name, clientID: clientID, session: session, challengeResponses: responses))
        return try response.outcome()
    }

    public func associateSoftwareToken(session: String?) throws(CognitoError) -> (secret: String, session: String?) {
        let response: AssociateSoftwareTokenResponse = try call("AssociateSoftwareToken", SessionRequest(session: session))
        guard let secret = response.secretCode, !secret.isEmpty else {
            throw .badResponse(httpStatus: 200, detail: "no SecretCode in the answer")
        }
        return (secret, response.session ?? session)
    }

    public func verifySoftwareToken(session: String?, code: String) throws(CognitoError) -> String? {
        let response: VerifySoftwareTokenResponse = try call(
            "VerifySoftwareToken", VerifySoftwareTokenRequest(session: session, userCode: code, friendlyDeviceName: "cog-cred"))
        guard response.status == nil || response.status == "SUCCESS" else {
            throw .service(code: "EnableSoftwareTokenMFAException", message: "verification status \(response.status ?? "")", httpStatus: 200)
        }
        return response.session ?? session
    }

    public func associateSoftwareToken(accessToken: String) throws(CognitoError) -> String {
        let response: AssociateSoftwareTokenResponse = try call("AssociateSoftwareToken", SessionRequest(accessToken: accessToken))
        guard let secret = response.secretCode, !secret.isEmpty else {
            throw .badResponse(httpStatus: 200, detail: "no SecretCode in the answer")
        }
        return secret
    }

    public func verifySoftwareToken(accessToken: String, code: String) throws(CognitoError) {
        let response: VerifySoftwareTokenResponse = try call(
            "VerifySoftwareToken", VerifySoftwareTokenRequest(accessToken: accessToken, userCode: code, friendlyDeviceName: "cog-cred"))
        guard response.status == nil || response.status == "SUCCESS" else {
            throw .service(code: "EnableSoftwareTokenMFAException", message: "verification status \(response.status ?? "")", httpStatus: 200)
        }
    }

    public func mfaSettings(accessToken: String) throws(CognitoError) -> MFASettings {
        let response: GetUserResponse = try call("GetUser", SessionRequest(accessToken: accessToken))
        return MFASettings(
            enabled: (response.userMFASettingList ?? []).compactMap(MFAKind.init(challengeName:)),
            preferred: response.preferredMfaSetting.flatMap(MFAKind.init(challengeName:)))
    }

    public func setMFAPreference(accessToken: String, _ settings: [MFAKind: MFAPreference]) throws(CognitoError) {
        let body = { (kind: MFAKind) in settings[kind].map { MFASettingsBody(enabled: $0.enabled, preferredMfa: $0.preferred) } }
        let _: Empty = try call(
            "SetUserMFAPreference",
            SetUserMFAPreferenceRequest(accessToken: accessToken, sms: body(.sms), totp: body(.totp), email: body(.email)))
    }

    public func getTokensFromRefreshToken(refreshToken: String, deviceKey: String?) throws(CognitoError) -> AuthenticationResult {
        let response: InitiateAuthResponse = try call(
            "GetTokensFromRefreshToken",
            RefreshTokenRequest(refreshToken: refreshToken, clientID: clientID, clientSecret: clientSecret, deviceKey: deviceKey))
        guard case .authenticated(let result) = try response.outcome() else {
            throw .badResponse(httpStatus: 200, detail: "a refresh answered with a challenge")
        }
        return result
    }

    public func confirmDevice(accessToken: String, deviceKey: String, verifier: DeviceVerifier, name: String) throws(CognitoError)
        -> Bool
    {
        let response: ConfirmDeviceResponse = try call(
            "ConfirmDevice",
            ConfirmDeviceRequest(
                accessToken: accessToken, deviceKey: deviceKey,
                verifier: .init(passwordVerifier: verifier.passwordVerifier, salt: verifier.salt), deviceName: name))
        return response.userConfirmationNecessary ?? false
    }

    public func updateDeviceStatus(accessToken: String, deviceKey: String, remembered: Bool) throws(CognitoError) {
        let _: Empty = try call(
            "UpdateDeviceStatus",
            DeviceRequest(accessToken: accessToken, deviceKey: deviceKey, rememberedStatus: remembered ? "remembered" : "not_remembered"))
    }

    public func listDevices(accessToken: String, paginationToken: String?) throws(CognitoError)
        -> (devices: [UserDevice], next: String?)
    {
        let response: ListDevicesResponse = try call(
            "ListDevices", ListDevicesRequest(accessToken: accessToken, limit: 60, paginationToken: paginationToken))
        let devices = (response.devices ?? []).compactMap { device -> UserDevice? in
            guard let key = device.deviceKey, !key.isEmpty else { return nil }
            let attributes = Dictionary((device.deviceAttributes ?? []).map { ($0.name, $0.value ?? "") }) { first, _ in first }
            let seen = device.deviceLastAuthenticatedDate ?? device.deviceLastModifiedDate ?? device.deviceCreateDate
            return UserDevice(
                key: key, name: attributes["device_name"], lastSeen: seen.map { Int64($0.rounded(.down)) },
                remembered: attributes["dev:device_remembered_status"] == "remembered")
        }
        return (devices, response.paginationToken.flatMap { $0.isEmpty ? nil : $0 })
    }

    public func forgetDevice(accessToken: String, deviceKey: String) throws(CognitoError) {
        let _: Empty = try call("ForgetDevice", DeviceRequest(accessToken: accessToken, deviceKey: deviceKey))
    }

    public func revokeToken(refreshToken: String) throws(CognitoError) {
        let _: Empty = try call(
            "RevokeToken", RevokeTokenRequest(token: refreshToken, clientID: clientID, clientSecret: clientSecret))
    }

    public func globalSignOut(accessToken: String) throws(CognitoError) {
        let _: Empty = try call("GlobalSignOut", AccessTokenRequest(accessToken: accessToken))
    }

    /// Actions that are safe to send twice: sending one again after a lost
    /// answer cannot do anything the first did not. The others (SignUp,
    /// ConfirmSignUp, ChangePassword, challenge responses that spend a
    /// session...) are retried only when Cognito surely did not act on them.
    static let idempotentActions: Set<String> = [
        "InitiateAuth", "GetTokensFromRefreshToken", "RevokeToken", "GlobalSignOut", "ListDevices", "UpdateDeviceStatus",
        "GetId", "GetCredentialsForIdentity", "GetOpenIdToken",
    ]

    /// POSTs one action and decodes its answer or its error, retrying
    /// temporary failures with exponential backoff and jitter inside the
    /// command's deadline. Nothing is printed per retry; the last error is
    /// what the caller reports.
    /// `once`: this request may act even though its answer is lost (send
    /// a code), so it is sent again only when it surely did not arrive.
    func call<Request: Encodable, Response: Decodable>(_ action: String, _ body: Request, once: Bool = false) throws(CognitoError)
        -> Response
    {
        let payload: Data
        do {
            payload = try JSONEncoder().encode(body)
        } catch {
            throw .badResponse(httpStatus: 0, detail: "could not encode the request")
        }
        var attempt = 0
        while true {
            do {
                return try send(action, payload)
            } catch {
                attempt += 1
                let pause = retryPolicy.pause(afterAttempt: attempt)
                guard attempt < retryPolicy.maxAttempts, shouldRetry(error, action: action, once: once),
                    deadline.remaining > pause + 0.1
                else { throw error }
                retryPolicy.sleep(pause)
            }
        }
    }

    func shouldRetry(_ error: CognitoError, action: String, once: Bool = false) -> Bool {
        let idempotent = !once && CognitoHTTPClient.idempotentActions.contains(action)
        // An HTML 5xx to an action a service may not offer is its way of
        // saying so: the caller falls back instead (never retried).
        if action == "GetTokensFromRefreshToken" && error.isUnsupportedOperation { return false }
        switch error {
        case .transport(let failure):
            // Refused or unresolvable: nothing reached Cognito, safe for any action.
            if failure.kind == .connectionFailed && failure.nothingSent { return true }
            return failure.kind != .tls && idempotent
        case .service(let code, _, let status):
            // Throttling rejects the request before it is acted on.
            if CognitoError.throttlingCodes.contains(code) { return true }
            return status >= 500 && idempotent
        case .badResponse(let status, _):
            return status >= 500 && idempotent
        case .deadlineExceeded:
            return false
        }
    }

    /// One exchange, bounded by what is left of the command's deadline.
    func send<Response: Decodable>(_ action: String, _ payload: Data) throws(CognitoError) -> Response {
        let remaining = deadline.remaining
        guard remaining > 0.05 else { throw .deadlineExceeded }
        // Exactly these two headers and no Authorization header: Cognito (and
        // its emulators) route on them.
        let request = HTTPRequest(
            url: endpoint,
            headers: [
                ("Content-Type", "application/x-amz-json-1.1"),
                ("X-Amz-Target", "\(targetPrefix).\(action)"),
            ],
            body: payload,
            connectTimeout: min(timeouts.connect, remaining),
            totalTimeout: min(timeouts.request, remaining),
            caBundle: caBundle, allowsCleartext: allowsCleartext)
        let response: HTTPResponse
        do {
            response = try transport.send(request)
        } catch {
            throw .transport(error)
        }
        return try CognitoHTTPClient.decode(response)
    }

    /// One POST of a ready body with its own headers (STS's query protocol),
    /// retried like an idempotent action; the answer as it came.
    func post(_ body: Data, headers: [(String, String)]) throws(CognitoError) -> HTTPResponse {
        try RetryingPost(
            transport: transport, timeouts: timeouts, deadline: deadline, caBundle: caBundle, allowsCleartext: allowsCleartext,
            retryPolicy: retryPolicy
        ).send(endpoint, headers: headers, body: body, repeatable: true)
    }

    /// An InitiateAuth or RespondToAuthChallenge answer: tokens, a challenge,
    /// or the error it carries.
    public static func authOutcome(from response: HTTPResponse) throws(CognitoError) -> AuthOutcome {
        let decoded: InitiateAuthResponse = try decode(response)
        return try decoded.outcome()
    }

    /// Turns an HTTP answer into the action's result or a `CognitoError`.
    /// Anything that is not Cognito-shaped JSON is a `badResponse`.
    static func decode<Response: Decodable>(_ response: HTTPResponse) throws(CognitoError) -> Response {
        if response.status == 200 {
            do {
                return try JSONDecoder().decode(Response.self, from: response.body)
            } catch {
                throw .badResponse(httpStatus: 200, detail: response.body.isEmpty ? "empty body" : "not the expected JSON")
            }
        }
        if let error = try? JSONDecoder().decode(ErrorBody.self, from: response.body), let type = error.type, !type.isEmpty {
            // "com.amazonaws...#NotAuthorizedException" -> "NotAuthorizedException"
            let code = type.split(separator: "#").last.map(String.init) ?? type
            throw .service(code: code, message: error.message ?? "", httpStatus: response.status)
        }
        let detail = response.body.isEmpty ? "empty body" : "not a JSON error"
        throw .badResponse(httpStatus: response.status, detail: detail)
    }
}

// MARK: - Wire shapes

struct InitiateAuthRequest: Encodable {
    var authFlow: String
    var clientID: String
    var authParameters: [String: String]

    enum CodingKeys: String, CodingKey {
        case authFlow = "AuthFlow"
        case clientID = "ClientId"
        case authParameters = "AuthParameters"
    }
}

struct InitiateAuthResponse: Decodable {
    var authenticationResult: AuthenticationResultBody?
    var challengeName: String?
    var session: String?
    var challengeParameters: [String: String]?
    var availableChallenges: [String]?

    enum CodingKeys: String, CodingKey {
        case authenticationResult = "AuthenticationResult"
        case challengeName = "ChallengeName"
        case session = "Session"
        case challengeParameters = "ChallengeParameters"
        case availableChallenges = "AvailableChallenges"
    }

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
                    accessToken: access, idToken: result.idToken, refreshToken: result.refreshToken,
                    expiresIn: result.expiresIn, newDevice: newDevice))
        }
        if let name = challengeName, !name.isEmpty {
            var parameters = challengeParameters ?? [:]
            if let availableChallenges {
                // Encoding strings cannot fail.
                let list = (try? JSONEncoder().encode(availableChallenges)) ?? Data("[]".utf8)
                parameters[AuthOutcome.availableChallenges] = String(decoding: list, as: UTF8.self)
            }
            return .challenge(name: name, session: session, parameters: parameters)
        }
        throw .badResponse(httpStatus: 200, detail: "neither tokens nor a challenge in the answer")
    }
}

struct AuthenticationResultBody: Decodable {
    var accessToken: String?
    var idToken: String?
    var refreshToken: String?
    var expiresIn: Int64?
    var newDeviceMetadata: NewDeviceMetadataBody?

    enum CodingKeys: String, CodingKey {
        case accessToken = "AccessToken"
        case idToken = "IdToken"
        case refreshToken = "RefreshToken"
        case expiresIn = "ExpiresIn"
        case newDeviceMetadata = "NewDeviceMetadata"
    }
}

struct NewDeviceMetadataBody: Decodable {
    var deviceKey: String?
    var deviceGroupKey: String?

    enum CodingKeys: String, CodingKey {
        case deviceKey = "DeviceKey"
        case deviceGroupKey = "DeviceGroupKey"
    }
}

struct ConfirmDeviceRequest: Encodable {
    struct Verifier: Encodable {
        var passwordVerifier: String
        var salt: String

        enum CodingKeys: String, CodingKey {
            case passwordVerifier = "PasswordVerifier"
            case salt = "Salt"
        }
    }

    var accessToken: String
    var deviceKey: String
    var verifier: Verifier
    var deviceName: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "AccessToken"
        case deviceKey = "DeviceKey"
        case verifier = "DeviceSecretVerifierConfig"
        case deviceName = "DeviceName"
    }
}

struct ConfirmDeviceResponse: Decodable {
    var userConfirmationNecessary: Bool?

    enum CodingKeys: String, CodingKey {
        case userConfirmationNecessary = "UserConfirmationNecessary"
    }
}

/// UpdateDeviceStatus (with a status) and ForgetDevice.
struct DeviceRequest: Encodable {
    var accessToken: String
    var deviceKey: String
    var rememberedStatus: String? = nil

    enum CodingKeys: String, CodingKey {
        case accessToken = "AccessToken"
        case deviceKey = "DeviceKey"
        case rememberedStatus = "DeviceRememberedStatus"
    }
}

struct ListDevicesRequest: Encodable {
    var accessToken: String
    var limit: Int
    var paginationToken: String?

    enum CodingKeys: String, CodingKey {
        case accessToken = "AccessToken"
        case limit = "Limit"
        case paginationToken = "PaginationToken"
    }
}

struct ListDevicesResponse: Decodable {
    struct Device: Decodable {
        struct Attribute: Decodable {
            var name: String
            var value: String?

            enum CodingKeys: String, CodingKey {
                case name = "Name"
                case value = "Value"
            }
        }

        var deviceKey: String?
        var deviceAttributes: [Attribute]?
        var deviceCreateDate: Double?
        var deviceLastModifiedDate: Double?
        var deviceLastAuthenticatedDate: Double?

        enum CodingKeys: String, CodingKey {
            case deviceKey = "DeviceKey"
            case deviceAttributes = "DeviceAttributes"
            case deviceCreateDate = "DeviceCreateDate"
            case deviceLastModifiedDate = "DeviceLastModifiedDate"
            case deviceLastAuthenticatedDate = "DeviceLastAuthenticatedDate"
        }
    }

    var devices: [Device]?
    var paginationToken: String?

    enum CodingKeys: String, CodingKey {
        case devices = "Devices"
        case paginationToken = "PaginationToken"
    }
}

/// The shared shape of the unauthenticated account actions (SignUp,
/// ConfirmSignUp, ResendConfirmationCode, ForgotPassword,
/// ConfirmForgotPassword); absent fields are not sent.
struct AccountRequest: Encodable {
    var clientID: String
    var username: String
    var secretHash: String?
    var password: String? = nil
    var confirmationCode: String? = nil
    var userAttributes: [UserAttribute]? = nil

    enum CodingKeys: String, CodingKey {
        case clientID = "ClientId"
        case username = "Username"
        case secretHash = "SecretHash"
        case password = "Password"
        case confirmationCode = "ConfirmationCode"
        case userAttributes = "UserAttributes"
    }
}

struct RespondToAuthChallengeRequest: Encodable {
    var challengeName: String
    var clientID: String
    var session: String?
    var challengeResponses: [String: String]

    enum CodingKeys: String, CodingKey {
        case challengeName = "ChallengeName"
        case clientID = "ClientId"
        case session = "Session"
        case challengeResponses = "ChallengeResponses"
    }
}

/// A Session (sign-in's MFA_SETUP) or a signed-in user's AccessToken.
struct SessionRequest: Encodable {
    var session: String? = nil
    var accessToken: String? = nil

    enum CodingKeys: String, CodingKey {
        case session = "Session"
        case accessToken = "AccessToken"
    }
}

struct GetUserResponse: Decodable {
    var userMFASettingList: [String]?
    var preferredMfaSetting: String?

    enum CodingKeys: String, CodingKey {
        case userMFASettingList = "UserMFASettingList"
        case preferredMfaSetting = "PreferredMfaSetting"
    }
}

struct MFASettingsBody: Encodable {
    var enabled: Bool
    var preferredMfa: Bool

    enum CodingKeys: String, CodingKey {
        case enabled = "Enabled"
        case preferredMfa = "PreferredMfa"
    }
}

struct SetUserMFAPreferenceRequest: Encodable {
    var accessToken: String
    var sms: MFASettingsBody?
    var totp: MFASettingsBody?
    var email: MFASettingsBody?

    enum CodingKeys: String, CodingKey {
        case accessToken = "AccessToken"
        case sms = "SMSMfaSettings"
        case totp = "SoftwareTokenMfaSettings"
        case email = "EmailMfaSettings"
    }
}

struct AssociateSoftwareTokenResponse: Decodable {
    var secretCode: String?
    var session: String?

    enum CodingKeys: String, CodingKey {
        case secretCode = "SecretCode"
        case session = "Session"
    }
}

struct VerifySoftwareTokenRequest: Encodable {
    var session: String? = nil
    var accessToken: String? = nil
    var userCode: String
    var friendlyDeviceName: String

    enum CodingKeys: String, CodingKey {
        case session = "Session"
        case accessToken = "AccessToken"
        case userCode = "UserCode"
        case friendlyDeviceName = "FriendlyDeviceName"
    }
}

struct VerifySoftwareTokenResponse: Decodable {
    var status: String?
    var session: String?

    enum CodingKeys: String, CodingKey {
        case status = "Status"
        case session = "Session"
    }
}

struct RefreshTokenRequest: Encodable {
    var refreshToken: String
    var clientID: String
    var clientSecret: String?
    var deviceKey: String?

    enum CodingKeys: String, CodingKey {
        case refreshToken = "RefreshToken"
        case clientID = "ClientId"
        case clientSecret = "ClientSecret"
        case deviceKey = "DeviceKey"
    }
}

struct RevokeTokenRequest: Encodable {
    var token: String
    var clientID: String
    var clientSecret: String?

    enum CodingKeys: String, CodingKey {
        case token = "Token"
        case clientID = "ClientId"
        case clientSecret = "ClientSecret"
    }
}

struct AccessTokenRequest: Encodable {
    var accessToken: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "AccessToken"
    }
}

struct ChangePasswordRequest: Encodable {
    var accessToken: String
    var previousPassword: String
    var proposedPassword: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "AccessToken"
        case previousPassword = "PreviousPassword"
        case proposedPassword = "ProposedPassword"
    }
}

struct CodeDeliveryDetailsBody: Decodable {
    var destination: String?
    var deliveryMedium: String?
    var attributeName: String?

    enum CodingKeys: String, CodingKey {
        case destination = "Destination"
        case deliveryMedium = "DeliveryMedium"
        case attributeName = "AttributeName"
    }

    var delivery: CodeDelivery {
        CodeDelivery(destination: destination, medium: deliveryMedium, attributeName: attributeName)
    }
}

struct SignUpResponse: Decodable {
    var userConfirmed: Bool?
    var userSub: String?
    var codeDeliveryDetails: CodeDeliveryDetailsBody?

    enum CodingKeys: String, CodingKey {
        case userConfirmed = "UserConfirmed"
        case userSub = "UserSub"
        case codeDeliveryDetails = "CodeDeliveryDetails"
    }
}

struct DeliveryResponse: Decodable {
    var codeDeliveryDetails: CodeDeliveryDetailsBody?

    enum CodingKeys: String, CodingKey {
        case codeDeliveryDetails = "CodeDeliveryDetails"
    }
}

/// Actions that answer `{}`.
struct Empty: Decodable {}

struct ErrorBody: Decodable {
    var type: String?
    var message: String?

    enum CodingKeys: String, CodingKey {
        case type = "__type"
        case message
        // Some AWS services spell it with a capital M.
        case capitalMessage = "Message"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decodeIfPresent(String.self, forKey: .type)
        message = try c.decodeIfPresent(String.self, forKey: .message) ?? c.decodeIfPresent(String.self, forKey: .capitalMessage)
    }
}
