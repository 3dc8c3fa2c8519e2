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
        endpoint: String, clientID: String, clientSecret: String? = nil,
        secretHashes: (@Sendable (String) throws(AgentFailure) -> String)? = nil, timeouts: Timeouts, deadline: Deadline,
        caBundle: String? = nil, allowsCleartext: Bool = false, transport: any HTTPTransport = CurlTransport(),
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.allowsCleartext = allowsCleartext
        self.endpoint = endpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.secretHashes = secretHashes
        self.timeouts = timeouts
        self.deadline = deadline
        self.caBundle = caBundle
        self.transport = transport
        self.retryPolicy = retryPolicy
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
        "GetId", "GetCredentialsForIdentity", "GetOpenIdToken",
    ]

    /// Whether this request may go out twice: RetryingPost's rule for
    /// trying it again, and CurlTransport's for letting libcurl re-send it.
    static func repeatable(_ action: String, once: Bool) -> Bool { !once && idempotentActions.contains(action) }

    /// POSTs one action and decodes its answer or its error, retried as
    /// `shouldRetry` says within the command's deadline (RetryingPost).
    /// `once`: this request may act even though its answer is lost (send
    /// a code), so it is sent again only when it surely did not arrive.
    func call<Request: Encodable, Response: Decodable>(_ action: String, _ body: Request, once: Bool = false) throws(CognitoError)
        -> Response
    {
        let payload: Data
        do {
            payload = try CognitoWire.encoder().encode(body)
        } catch {
            throw .badResponse(httpStatus: 0, detail: "could not encode the request")
        }
        // Exactly these two headers and no Authorization header: Cognito (and
        // its emulators) route on them.
        let headers = [("Content-Type", "application/x-amz-json-1.1"), ("X-Amz-Target", "\(targetPrefix).\(action)")]
        return try retryingPost.send(
            endpoint, action: action, headers: headers, body: payload, repeatable: Self.repeatable(action, once: once),
            retryIf: { shouldRetry($0, action: action, once: once) }, read: CognitoWire.decode)
    }

    func shouldRetry(_ error: CognitoError, action: String, once: Bool = false) -> Bool {
        // An HTML 5xx to an action a service may not offer is its way of
        // saying so: the caller falls back instead (never retried).
        if action == "GetTokensFromRefreshToken" && error.isUnsupportedOperation { return false }
        // Throttling rejects the request before it is acted on.
        if let code = error.code, CognitoError.throttlingCodes.contains(code) { return true }
        return RetryingPost.retries(error, repeatable: Self.repeatable(action, once: once))
    }

    var retryingPost: RetryingPost {
        RetryingPost(
            transport: transport, timeouts: timeouts, deadline: deadline, caBundle: caBundle, allowsCleartext: allowsCleartext,
            retryPolicy: retryPolicy)
    }

    /// One POST of a ready body with its own headers (STS's query protocol),
    /// retried like an idempotent action; the answer as it came.
    func post(_ body: Data, headers: [(String, String)]) throws(CognitoError) -> HTTPResponse {
        try retryingPost.send(endpoint, headers: headers, body: body, repeatable: true)
    }

    /// An InitiateAuth or RespondToAuthChallenge answer: tokens, a challenge,
    /// or the error it carries.
    public static func authOutcome(from response: HTTPResponse) throws(CognitoError) -> AuthOutcome {
        let decoded: CognitoWire.InitiateAuthResponse = try CognitoWire.decode(response)
        return try decoded.outcome()
    }
}
