#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON shapes of the sign-in and session actions (InitiateAuth,
/// RespondToAuthChallenge, GetTokensFromRefreshToken, RevokeToken, GlobalSignOut).
extension CognitoWire {
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

    /// A signed-in user's AccessToken, or a sign-in's Session (MFA_SETUP).
    struct SessionRequest: Encodable {
        var session: String? = nil
        var accessToken: String? = nil
    }

    /// Actions that answer `{}`.
    struct Empty: Decodable {}
}
