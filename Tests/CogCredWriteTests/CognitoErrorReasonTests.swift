import Testing
@testable import CogCredWrite

/// How Cognito's errors are read: the code, and for the codes that cover
/// several faults the message, with the words Cognito sends (and the
/// end-to-end double, Tests/EndToEnd/cognito_double, sends them too).
@Suite struct CognitoErrorReasonTests {
    typealias Reason = CognitoError.Reason

    static func read(_ code: String, _ message: String, status: Int = 400) -> Reason? {
        CognitoError.service(code: code, message: message, httpStatus: status).reason
    }

    /// NotAuthorizedException is one code for many faults: the message says which.
    @Test(arguments: [
        ("Unable to verify secret hash for client 3abc", Reason.Refusal.secretHash),
        ("Client 3abc is configured with secret but SECRET_HASH was not received", .secretHash),
        ("Access Token does not have required scopes", .missingScope),
        ("Access Token has been revoked", .accessToken),
        ("Access Token has expired", .accessToken),
        ("Invalid Access Token", .accessToken),
        ("Invalid session for the user, session is expired.", .challengeSession),
        ("Invalid session for the user, session can only be used once.", .challengeSession),
        ("Invalid session for the user.", .challengeSession),
        ("Incorrect username or password.", .credentials),
        ("Password attempts exceeded", .credentials),
        ("User is disabled.", .credentials),
        ("Refresh Token has been revoked", .credentials),
        ("Refresh Token has expired", .credentials),
        ("Invalid Refresh Token", .credentials),
        ("User cannot be confirmed. Current status is CONFIRMED", .credentials),
        ("Invalid login token. Token expired: 1700000000 >= 1690000000", .credentials),
        ("Access to Identity 'us-east-1:1234' is forbidden.", .credentials),
        // A client secret sent as such (the token actions), not as SECRET_HASH.
        ("Unable to verify client secret for client 3abc", .credentials),
        ("", .credentials),
    ] as [(String, Reason.Refusal)])
    func notAuthorizedIsReadFromItsMessage(message: String, refusal: Reason.Refusal) {
        #expect(Self.read("NotAuthorizedException", message) == .refused(refusal))
    }

    @Test(arguments: [
        ("Device does not exist.", Reason.Missing.device),
        ("User pool client 3abc does not exist.", .resource),
        ("User pool us-east-1_abc does not exist.", .resource),
        ("Identity 'us-east-1:1234' not found.", .resource),
        ("IdentityPool 'us-east-1:5678' not found.", .resource),
        ("Credential not found.", .resource),
    ] as [(String, Reason.Missing)])
    func notFoundTellsADeviceApart(message: String, missing: Reason.Missing) {
        let error = CognitoError.service(code: "ResourceNotFoundException", message: message, httpStatus: 400)
        #expect(error.reason == .notFound(missing))
        #expect(error.isNotFound)
    }

    /// The codes that are a reason whatever the message.
    @Test(arguments: [
        ("RefreshTokenReuseException", "Refresh token has already been used", Reason.refreshTokenReused),
        ("UserNotFoundException", "User does not exist.", .userNotFound),
        ("UserNotFoundException", "Username/client id combination not found.", .userNotFound),
        ("UserNotConfirmedException", "User is not confirmed.", .userNotConfirmed),
        ("PasswordResetRequiredException", "Password reset required for the user", .passwordResetRequired),
        ("CodeMismatchException", "Invalid verification code provided, please try again.", .codeMismatch),
        ("CodeMismatchException", "Invalid code received for user", .codeMismatch),
        ("EnableSoftwareTokenMFAException", "Code mismatch", .codeMismatch),
        ("ExpiredCodeException", "Invalid code provided, please request a code again.", .codeExpired),
        ("UsernameExistsException", "User already exists", .usernameExists),
        ("InvalidPasswordException", "Password did not conform with policy: Password not long enough", .invalidPassword),
        ("AliasExistsException", "An account with the given email already exists.", .aliasExists),
        // Not the secret hash's refusal: the client has no secret to get wrong.
        ("InvalidParameterException", "Client 3abc is not configured for secret but secret hash was received", .invalidParameter),
        ("CodeDeliveryFailureException", "Unable to deliver the code", .codeDeliveryFailed),
        ("TooManyRequestsException", "Rate exceeded", .throttled),
        ("LimitExceededException", "Attempt limit exceeded, please try after some time.", .throttled),
        ("ThrottlingException", "Rate exceeded", .throttled),
        ("InternalErrorException", "An internal error occurred", .serviceFault),
        ("ServiceUnavailableException", "", .serviceFault),
        ("RequestTimeoutException", "", .serviceFault),
        ("UnknownOperationException", "", .unsupportedOperation),
        ("InvalidAction", "Could not find operation GetCredentialsForIdentity for version 2011-06-15", .unsupportedOperation),
        ("WebAuthnChallengeNotFoundException", "The WebAuthn challenge was not found.", .passkeyChallengeExpired),
        ("WebAuthnNotEnabledException", "Passkeys are not enabled for this user pool.", .passkeysNotOffered),
        ("WebAuthnConfigurationMissingException", "", .passkeysNotOffered),
        ("WebAuthnRelyingPartyMismatchException", "", .passkeyRelyingPartyMismatch),
        ("WebAuthnOriginNotAllowedException", "", .passkeyRelyingPartyMismatch),
        ("WebAuthnClientMismatchException", "", .passkeyClientMismatch),
        ("WebAuthnCredentialNotSupportedException", "The passkey credential is not supported.", .passkeyNotSupported),
        ("InvalidIdentityPoolConfigurationException", "Invalid identity pool configuration. Check assigned IAM roles for this pool.",
            .identityPoolMisconfigured),
        ("AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity", .roleRefused),
        ("InvalidIdentityToken", "The web identity token's signature could not be verified.", .identityTokenRefused),
        ("ExpiredTokenException", "Token expired: current date/time 1700000000 must be before the expiration date/time 1690000000",
            .identityTokenExpired),
        ("invalid_grant", "Invalid Refresh Token", .oauth(.invalidGrant)),
        ("access_denied", "", .oauth(.accessDenied)),
        ("invalid_token", "the access token was refused", .oauth(.invalidToken)),
        ("invalid_client", "Client 3abc does not exist", .oauth(.invalidClient)),
        ("unauthorized_client", "The client is not allowed the client_credentials grant", .oauth(.unauthorizedClient)),
        ("invalid_scope", "orders/read is not a custom scope of the client", .oauth(.invalidScope)),
        ("invalid_request", "grant_type is required", .oauth(.unsupportedRequest)),
        ("unsupported_grant_type", "", .oauth(.unsupportedRequest)),
        ("unsupported_token_type", "Only refresh tokens can be revoked", .oauth(.unsupportedRequest)),
        ("unsupported_response_type", "", .oauth(.unsupportedRequest)),
        ("SerializationException", "ChallengeResponses values must be strings", .other("SerializationException")),
        ("UnauthorizedException", "Unable to verify client secret for client 3abc", .other("UnauthorizedException")),
    ] as [(String, String, Reason)])
    func aCodeIsItsReason(code: String, message: String, reason: Reason) {
        #expect(Self.read(code, message) == reason)
    }

    /// Only Cognito's JSON errors carry a reason.
    @Test func noAnswerNoReason() {
        #expect(CognitoError.transport(TransportError(.timedOut, "")).reason == nil)
        #expect(CognitoError.badResponse(httpStatus: 404, detail: "Not Found").reason == nil)
        #expect(CognitoError.deadlineExceeded.reason == nil)
        #expect(!CognitoError.badResponse(httpStatus: 404, detail: "Not Found").isNotFound)
    }

    /// The reasons that make an error worth trying again, and an action the
    /// service does not offer.
    @Test func temporaryAndUnsupportedFollowTheReason() {
        #expect(CognitoError.service(code: "TooManyRequestsException", message: "Rate exceeded", httpStatus: 400).isTemporary)
        #expect(CognitoError.service(code: "InternalErrorException", message: "", httpStatus: 400).isTemporary)
        #expect(CognitoError.service(code: "SomethingNew", message: "", httpStatus: 503).isTemporary)
        #expect(!CognitoError.service(code: "NotAuthorizedException", message: "Incorrect username or password.", httpStatus: 400).isTemporary)
        #expect(!CognitoError.service(code: "CodeDeliveryFailureException", message: "", httpStatus: 400).isTemporary)
        #expect(CognitoError.service(code: "UnknownOperationException", message: "", httpStatus: 400).isUnsupportedOperation)
        #expect(CognitoError.service(code: "InvalidAction", message: "", httpStatus: 400).isUnsupportedOperation)
        #expect(!CognitoError.service(code: "ResourceNotFoundException", message: "", httpStatus: 400).isUnsupportedOperation)
    }
}
