#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The Cognito identity pool actions `aws-credentials` uses, and STS's
/// AssumeRoleWithWebIdentity for the basic flow. Unsigned: they are
/// authorised by the user pool's ID token in `Logins`.
public protocol CognitoIdentityClient: Sendable {
    /// GetId: the user's identity in the pool.
    func getID(poolID: String, logins: [String: String]) throws(CognitoError) -> String
    /// GetCredentialsForIdentity (the enhanced flow).
    func credentials(identityID: String, logins: [String: String], roleARN: String?) throws(CognitoError)
        -> (accessKeyID: String, secretAccessKey: String, sessionToken: String, expiration: Int64)
    /// GetOpenIdToken, then STS AssumeRoleWithWebIdentity (the basic flow).
    func basicFlowCredentials(identityID: String, logins: [String: String], roleARN: String, sessionName: String)
        throws(CognitoError) -> (accessKeyID: String, secretAccessKey: String, sessionToken: String, expiration: Int64)
}

/// The identity pool's JSON 1.1 API (`X-Amz-Target:
/// AWSCognitoIdentityService.<Action>`, AWSJSONClient), and STS's query
/// protocol asked to answer in JSON (`Accept: application/json`): a form
/// body and an error shape of its own, over the same retrying POST.
public struct CognitoIdentityHTTPClient: CognitoIdentityClient {
    let identity: AWSJSONClient
    let stsEndpoint: String
    let sts: RetryingPost

    public init(
        identityEndpoint: String, stsEndpoint: String, identityCleartext: Bool = false, stsCleartext: Bool = false, connection: Connection
    ) {
        // Every action here only reads: safe to send twice.
        identity = AWSJSONClient(
            endpoint: identityEndpoint, targetPrefix: "AWSCognitoIdentityService",
            idempotentActions: ["GetId", "GetCredentialsForIdentity", "GetOpenIdToken"],
            post: connection.post(allowsCleartext: identityCleartext))
        self.stsEndpoint = stsEndpoint
        sts = connection.post(allowsCleartext: stsCleartext)
    }

    /// With a connection of its own.
    public init(
        identityEndpoint: String, stsEndpoint: String, timeouts: Timeouts, deadline: Deadline, caBundle: CABundle = .system,
        identityCleartext: Bool = false, stsCleartext: Bool = false, transport: any HTTPTransport = CurlTransport(),
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.init(
            identityEndpoint: identityEndpoint, stsEndpoint: stsEndpoint, identityCleartext: identityCleartext, stsCleartext: stsCleartext,
            connection: Connection(transport: transport, timeouts: timeouts, deadline: deadline, caBundle: caBundle, retryPolicy: retryPolicy))
    }

    public func getID(poolID: String, logins: [String: String]) throws(CognitoError) -> String {
        let answer: GetIDResponse = try identity.call("GetId", GetIDRequest(identityPoolId: poolID, logins: logins))
        guard let id = answer.identityId, !id.isEmpty else { throw .badResponse(httpStatus: 200, detail: "no IdentityId in the answer") }
        return id
    }

    public func credentials(identityID: String, logins: [String: String], roleARN: String?) throws(CognitoError)
        -> (accessKeyID: String, secretAccessKey: String, sessionToken: String, expiration: Int64)
    {
        let answer: CredentialsResponse = try identity.call(
            "GetCredentialsForIdentity", CredentialsRequest(identityId: identityID, logins: logins, customRoleArn: roleARN))
        guard let c = answer.credentials, let key = c.accessKeyId, let secret = c.secretKey, let session = c.sessionToken,
            let expiration = c.expiration.flatMap(Self.epochSeconds), !key.isEmpty, !secret.isEmpty, !session.isEmpty
        else { throw .badResponse(httpStatus: 200, detail: "no complete Credentials in the answer") }
        return (key, secret, session, expiration)
    }

    public func basicFlowCredentials(identityID: String, logins: [String: String], roleARN: String, sessionName: String)
        throws(CognitoError) -> (accessKeyID: String, secretAccessKey: String, sessionToken: String, expiration: Int64)
    {
        let token: OpenIDTokenResponse = try identity.call("GetOpenIdToken", OpenIDTokenRequest(identityId: identityID, logins: logins))
        guard let webIdentity = token.token, !webIdentity.isEmpty else {
            throw .badResponse(httpStatus: 200, detail: "no Token in the answer")
        }
        let form = FormBody.encode([
            ("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", roleARN),
            ("RoleSessionName", sessionName), ("WebIdentityToken", webIdentity),
        ])
        // Retried like an idempotent action: AssumeRoleWithWebIdentity only reads.
        let response = try sts.send(
            stsEndpoint, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
            body: Data(form.utf8), repeatable: true)
        guard response.status == 200 else {
            if let error = try? CognitoWire.decoder().decode(STSErrorResponse.self, from: response.body), let code = error.error?.code {
                throw .service(code: code, message: error.error?.message ?? "", httpStatus: response.status)
            }
            throw .badResponse(httpStatus: response.status, detail: response.body.isEmpty ? "empty body" : "not an STS error")
        }
        guard let answer = try? CognitoWire.decoder().decode(STSResponse.self, from: response.body),
            let c = answer.assumeRoleWithWebIdentityResponse?.assumeRoleWithWebIdentityResult?.credentials, let key = c.accessKeyId, let secret = c.secretAccessKey,
            let session = c.sessionToken, let expiration = c.expiration.flatMap(Self.epochSeconds), !key.isEmpty, !secret.isEmpty,
            !session.isEmpty
        else { throw .badResponse(httpStatus: 200, detail: "no complete Credentials in STS's answer") }
        return (key, secret, session, expiration)
    }

    /// An `Expiration` (seconds since the epoch, a JSON number such as
    /// 1.515115602E9) as whole seconds; nil for one no clock can reach
    /// (converting 1.5E29 would trap: found by fuzz-identity-response).
    static func epochSeconds(_ value: Double) -> Int64? {
        guard value.isFinite, value >= 0, value < 1e15 else { return nil }
        return Int64(value)
    }

    // MARK: - Wire shapes (keys as CognitoWire writes and reads them: `identityId` is `IdentityId`)

    struct GetIDRequest: Encodable {
        var identityPoolId: String
        var logins: [String: String]
    }

    struct GetIDResponse: Decodable {
        var identityId: String?
    }

    struct CredentialsRequest: Encodable {
        var identityId: String
        var logins: [String: String]
        var customRoleArn: String?
    }

    struct CredentialsResponse: Decodable {
        var credentials: Credentials?

        struct Credentials: Decodable {
            var accessKeyId: String?
            var secretKey: String?
            var sessionToken: String?
            /// Seconds since the epoch, as a JSON number (AWS JSON 1.1 timestamps).
            var expiration: Double?
        }
    }

    struct OpenIDTokenRequest: Encodable {
        var identityId: String
        var logins: [String: String]
    }

    struct OpenIDTokenResponse: Decodable {
        var token: String?
    }

    /// `{"AssumeRoleWithWebIdentityResponse": {"AssumeRoleWithWebIdentityResult": {"Credentials": {...}}}}`.
    struct STSResponse: Decodable {
        var assumeRoleWithWebIdentityResponse: Response?

        struct Response: Decodable {
            var assumeRoleWithWebIdentityResult: Result?
        }

        struct Result: Decodable {
            var credentials: Credentials?
        }

        struct Credentials: Decodable {
            var accessKeyId: String?
            var secretAccessKey: String?
            var sessionToken: String?
            var expiration: Double?
        }
    }

    /// `{"Error": {"Code": ..., "Message": ...}}`.
    struct STSErrorResponse: Decodable {
        var error: STSError?

        struct STSError: Decodable {
            var code: String?
            var message: String?
        }
    }
}
