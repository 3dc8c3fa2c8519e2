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
    /// With an agent that keeps the client secret: SECRET_HASH for a
    /// username, made there (AgentClient.secretHash).
    let secretHashes: (@Sendable (String) throws(AgentFailure) -> String)?
    public let connection: Connection
    /// The endpoint is plain HTTP and was allowed to be (Endpoint.resolve).
    let allowsCleartext: Bool

    public init(
        endpoint: String, clientID: String, clientSecret: String? = nil,
        secretHashes: (@Sendable (String) throws(AgentFailure) -> String)? = nil, allowsCleartext: Bool = false, connection: Connection
    ) {
        self.allowsCleartext = allowsCleartext
        self.endpoint = endpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.secretHashes = secretHashes
        self.connection = connection
    }

    /// With a connection of its own.
    public init(
        endpoint: String, clientID: String, clientSecret: String? = nil,
        secretHashes: (@Sendable (String) throws(AgentFailure) -> String)? = nil, timeouts: Timeouts, deadline: Deadline,
        caBundle: CABundle = .system, allowsCleartext: Bool = false, transport: any HTTPTransport = CurlTransport(),
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.init(
            endpoint: endpoint, clientID: clientID, clientSecret: clientSecret, secretHashes: secretHashes, allowsCleartext: allowsCleartext,
            connection: Connection(transport: transport, timeouts: timeouts, deadline: deadline, caBundle: caBundle, retryPolicy: retryPolicy))
    }

    func secretHash(_ username: String?) throws(CognitoError) -> String? {
        guard let username else { return nil }
        if let secretHashes {
            do { return try secretHashes(username) } catch { throw .noSecretHash(error) }
        }
        guard let clientSecret else { return nil }
        return SecretHash.compute(username: username, clientID: clientID, clientSecret: clientSecret)
    }

    public func startSignIn(_ start: SignInStart, username: String, deviceKey: String?) throws(CognitoError) -> AuthOutcome {
        let (flow, parameters) = CognitoWire.initiation(start, username: username, deviceKey: deviceKey, secretHash: try secretHash(username))
        let response: CognitoWire.InitiateAuthResponse = try call(
            "InitiateAuth", CognitoWire.InitiateAuthRequest(authFlow: flow, clientId: clientID, authParameters: parameters),
            once: CognitoWire.sendsACode(start))
        return try response.outcome()
    }

    public func respond(to challenge: PendingChallenge, with answer: ChallengeAnswer, username: String, deviceKey: String?)
        throws(CognitoError) -> AuthOutcome
    {
        let responses = CognitoWire.responses(answer, to: challenge, username: username, deviceKey: deviceKey, secretHash: try secretHash(username))
        let response: CognitoWire.InitiateAuthResponse = try call(
            "RespondToAuthChallenge",
            CognitoWire.RespondToAuthChallengeRequest(
                challengeName: challenge.name, clientId: clientID, session: challenge.session, challengeResponses: responses))
        return try response.outcome()
    }

    public func refresh(refreshToken: String, username: String?, deviceKey: String?) throws(CognitoError) -> AuthenticationResult {
        let parameters = CognitoWire.refreshParameters(refreshToken: refreshToken, secretHash: try secretHash(username), deviceKey: deviceKey)
        let response: CognitoWire.InitiateAuthResponse = try call(
            "InitiateAuth", CognitoWire.InitiateAuthRequest(authFlow: CognitoWire.refreshFlow, clientId: clientID, authParameters: parameters))
        return try Self.tokens(response)
    }

    public func getTokensFromRefreshToken(refreshToken: String, deviceKey: String?) throws(CognitoError) -> AuthenticationResult {
        let response: CognitoWire.InitiateAuthResponse = try call(
            "GetTokensFromRefreshToken",
            CognitoWire.RefreshTokenRequest(refreshToken: refreshToken, clientId: clientID, clientSecret: clientSecret, deviceKey: deviceKey))
        return try Self.tokens(response)
    }

    static func tokens(_ response: CognitoWire.InitiateAuthResponse) throws(CognitoError) -> AuthenticationResult {
        guard case .authenticated(let result) = try response.outcome() else {
            throw .badResponse(httpStatus: 200, detail: "a refresh answered with a challenge")
        }
        return result
    }

    // MARK: Account

    func accountRequest(_ username: String, password: String? = nil, code: String? = nil, attributes: [UserAttribute]? = nil)
        throws(CognitoError) -> CognitoWire.AccountRequest
    {
        CognitoWire.AccountRequest(
            clientId: clientID, username: username, secretHash: try secretHash(username), password: password, confirmationCode: code,
            userAttributes: attributes)
    }

    public func signUp(username: String, password: String, attributes: [UserAttribute]) throws(CognitoError) -> SignUpResult {
        let response: CognitoWire.SignUpResponse = try call(
            "SignUp", accountRequest(username, password: password, attributes: attributes))
        return SignUpResult(
            confirmed: response.userConfirmed ?? false, userSub: response.userSub, delivery: response.codeDeliveryDetails?.delivery)
    }

    public func confirmSignUp(username: String, code: String) throws(CognitoError) {
        let _: CognitoWire.Empty = try call("ConfirmSignUp", accountRequest(username, code: code))
    }

    public func resendConfirmationCode(username: String) throws(CognitoError) -> CodeDelivery? {
        let response: CognitoWire.DeliveryResponse = try call("ResendConfirmationCode", accountRequest(username))
        return response.codeDeliveryDetails?.delivery
    }

    public func forgotPassword(username: String) throws(CognitoError) -> CodeDelivery? {
        let response: CognitoWire.DeliveryResponse = try call("ForgotPassword", accountRequest(username))
        return response.codeDeliveryDetails?.delivery
    }

    public func confirmForgotPassword(username: String, code: String, newPassword: String) throws(CognitoError) {
        let _: CognitoWire.Empty = try call("ConfirmForgotPassword", accountRequest(username, password: newPassword, code: code))
    }

    public func changePassword(accessToken: String, previousPassword: String, proposedPassword: String) throws(CognitoError) {
        let _: CognitoWire.Empty = try call(
            "ChangePassword",
            CognitoWire.ChangePasswordRequest(accessToken: accessToken, previousPassword: previousPassword, proposedPassword: proposedPassword))
    }

    // MARK: MFA

    public func associateSoftwareToken(session: String?) throws(CognitoError) -> (secret: String, session: String?) {
        let response = try associateSoftwareToken(CognitoWire.SessionRequest(session: session))
        return (response.secret, response.session ?? session)
    }

    public func associateSoftwareToken(accessToken: String) throws(CognitoError) -> String {
        try associateSoftwareToken(CognitoWire.SessionRequest(accessToken: accessToken)).secret
    }

    func associateSoftwareToken(_ request: CognitoWire.SessionRequest) throws(CognitoError) -> (secret: String, session: String?) {
        let response: CognitoWire.AssociateSoftwareTokenResponse = try call("AssociateSoftwareToken", request)
        guard let secret = response.secretCode, !secret.isEmpty else {
            throw .badResponse(httpStatus: 200, detail: "no SecretCode in the answer")
        }
        return (secret, response.session)
    }

    public func verifySoftwareToken(session: String?, code: String) throws(CognitoError) -> String? {
        try verifySoftwareToken(CognitoWire.VerifySoftwareTokenRequest(session: session, userCode: code, friendlyDeviceName: "cog-cred"))
            ?? session
    }

    public func verifySoftwareToken(accessToken: String, code: String) throws(CognitoError) {
        _ = try verifySoftwareToken(
            CognitoWire.VerifySoftwareTokenRequest(accessToken: accessToken, userCode: code, friendlyDeviceName: "cog-cred"))
    }

    /// The session the answer carries on.
    func verifySoftwareToken(_ request: CognitoWire.VerifySoftwareTokenRequest) throws(CognitoError) -> String? {
        let response: CognitoWire.VerifySoftwareTokenResponse = try call("VerifySoftwareToken", request)
        guard response.succeeded else {
            throw .service(code: "EnableSoftwareTokenMFAException", message: "verification status \(response.status ?? "")", httpStatus: 200)
        }
        return response.session
    }

    public func mfaSettings(accessToken: String) throws(CognitoError) -> MFASettings {
        let response: CognitoWire.GetUserResponse = try call("GetUser", CognitoWire.SessionRequest(accessToken: accessToken))
        return response.settings
    }

    public func setMFAPreference(accessToken: String, _ settings: [MFAKind: MFAPreference]) throws(CognitoError) {
        let _: CognitoWire.Empty = try call("SetUserMFAPreference", CognitoWire.SetUserMFAPreferenceRequest(accessToken: accessToken, settings))
    }

    // MARK: Devices and sign-out

    public func confirmDevice(accessToken: String, deviceKey: String, verifier: DeviceVerifier, name: String) throws(CognitoError)
        -> Bool
    {
        let response: CognitoWire.ConfirmDeviceResponse = try call(
            "ConfirmDevice",
            CognitoWire.ConfirmDeviceRequest(
                accessToken: accessToken, deviceKey: deviceKey,
                deviceSecretVerifierConfig: .init(passwordVerifier: verifier.passwordVerifier, salt: verifier.salt), deviceName: name))
        return response.userConfirmationNecessary ?? false
    }

    public func updateDeviceStatus(accessToken: String, deviceKey: String, remembered: Bool) throws(CognitoError) {
        let _: CognitoWire.Empty = try call(
            "UpdateDeviceStatus",
            CognitoWire.DeviceRequest(
                accessToken: accessToken, deviceKey: deviceKey, deviceRememberedStatus: CognitoWire.DeviceRequest.status(remembered: remembered)))
    }

    public func listDevices(accessToken: String, paginationToken: String?) throws(CognitoError)
        -> (devices: [UserDevice], next: String?)
    {
        let response: CognitoWire.ListDevicesResponse = try call(
            "ListDevices", CognitoWire.ListDevicesRequest(accessToken: accessToken, limit: 60, paginationToken: paginationToken))
        return ((response.devices ?? []).compactMap(\.userDevice), response.paginationToken.flatMap { $0.isEmpty ? nil : $0 })
    }

    public func forgetDevice(accessToken: String, deviceKey: String) throws(CognitoError) {
        let _: CognitoWire.Empty = try call("ForgetDevice", CognitoWire.DeviceRequest(accessToken: accessToken, deviceKey: deviceKey))
    }

    public func startPasskeyRegistration(accessToken: String) throws(CognitoError) -> WebAuthn.CreationOptions {
        let response: CognitoWire.StartWebAuthnRegistrationResponse = try call(
            "StartWebAuthnRegistration", CognitoWire.SessionRequest(accessToken: accessToken))
        guard let options = response.credentialCreationOptions else {
            throw .badResponse(httpStatus: 200, detail: "no CredentialCreationOptions in the answer")
        }
        return options
    }

    public func completePasskeyRegistration(accessToken: String, credential: WebAuthn.RegistrationCredential) throws(CognitoError) {
        let _: CognitoWire.Empty = try call(
            "CompleteWebAuthnRegistration", CognitoWire.CompleteWebAuthnRegistrationRequest(accessToken: accessToken, credential: credential))
    }

    public func listPasskeys(accessToken: String, nextToken: String?) throws(CognitoError) -> (passkeys: [Passkey], next: String?) {
        let response: CognitoWire.ListWebAuthnCredentialsResponse = try call(
            "ListWebAuthnCredentials", CognitoWire.ListWebAuthnCredentialsRequest(accessToken: accessToken, nextToken: nextToken, maxResults: 20))
        return ((response.credentials ?? []).compactMap(\.passkey), response.nextToken.flatMap { $0.isEmpty ? nil : $0 })
    }

    public func deletePasskey(accessToken: String, id: String) throws(CognitoError) {
        let _: CognitoWire.Empty = try call(
            "DeleteWebAuthnCredential", CognitoWire.DeleteWebAuthnCredentialRequest(accessToken: accessToken, credentialId: id))
    }

    public func revokeToken(refreshToken: String) throws(CognitoError) {
        let _: CognitoWire.Empty = try call(
            "RevokeToken", CognitoWire.RevokeTokenRequest(token: refreshToken, clientId: clientID, clientSecret: clientSecret))
    }

    public func globalSignOut(accessToken: String) throws(CognitoError) {
        let _: CognitoWire.Empty = try call("GlobalSignOut", CognitoWire.SessionRequest(accessToken: accessToken))
    }

    // MARK: Transport

    /// Actions that are safe to send twice: sending one again after a lost
    /// answer cannot do anything the first did not. The others (SignUp,
    /// ConfirmSignUp, ChangePassword, challenge responses that spend a
    /// session...) are retried only when Cognito surely did not act on them.
    static let idempotentActions: Set<String> = [
        "InitiateAuth", "GetTokensFromRefreshToken", "RevokeToken", "GlobalSignOut", "ListDevices", "UpdateDeviceStatus",
    ]

    /// The user pool API: GetTokensFromRefreshToken is newer than some
    /// emulators, which answer it with an HTML 5xx (Refresh falls back).
    var api: AWSJSONClient {
        AWSJSONClient(
            endpoint: endpoint, targetPrefix: "AWSCognitoIdentityProviderService", idempotentActions: Self.idempotentActions,
            mayBeMissing: ["GetTokensFromRefreshToken"],
            post: connection.post(allowsCleartext: allowsCleartext))
    }

    func call<Request: Encodable, Response: Decodable & SendableMetatype>(_ action: String, _ body: Request, once: Bool = false)
        throws(CognitoError) -> Response
    {
        try api.call(action, body, once: once)
    }

    /// An InitiateAuth or RespondToAuthChallenge answer: tokens, a challenge,
    /// or the error it carries.
    public static func authOutcome(from response: HTTPResponse) throws(CognitoError) -> AuthOutcome {
        let decoded: CognitoWire.InitiateAuthResponse = try CognitoWire.decode(response)
        return try decoded.outcome()
    }
}
