#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One AWS service that speaks the JSON 1.1 protocol, unsigned: Cognito's
/// user pools (CognitoHTTPClient) and identity pools
/// (CognitoIdentityHTTPClient). It knows the endpoint, the X-Amz-Target
/// prefix and which of the service's actions may go out twice; it POSTs an
/// action with RetryingPost's rules and reads the answer or the error
/// (CognitoWire's codec).
struct AWSJSONClient: Sendable {
    let endpoint: String
    /// The X-Amz-Target prefix: `AWSCognitoIdentityProviderService`,
    /// `AWSCognitoIdentityService`.
    let targetPrefix: String
    /// Actions that are safe to send twice: sending one again after a lost
    /// answer cannot do anything the first did not. The others are retried
    /// only when the service surely did not act on them.
    let idempotentActions: Set<String>
    /// Actions a service may not offer, and says so with an HTML 5xx: the
    /// caller falls back instead, so that answer is never retried.
    var mayBeMissing: Set<String> = []
    let post: RetryingPost

    /// Whether this request may go out twice: RetryingPost's rule for
    /// trying it again, and CurlTransport's for letting libcurl re-send it.
    func repeatable(_ action: String, once: Bool) -> Bool { !once && idempotentActions.contains(action) }

    /// POSTs one action and decodes its answer or its error, retried as
    /// `shouldRetry` says within the command's deadline (RetryingPost).
    /// `once`: this request may act even though its answer is lost (send
    /// a code), so it is sent again only when it surely did not arrive.
    ///
    /// `Response`'s metatype goes into the decoding closure: it must be
    /// Sendable (every shape's is), which the compiler checks.
    func call<Request: Encodable, Response: Decodable & SendableMetatype>(_ action: String, _ body: Request, once: Bool = false)
        throws(CognitoError) -> Response
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
        return try post.send(
            endpoint, action: action, headers: headers, body: payload, repeatable: repeatable(action, once: once),
            retryIf: { shouldRetry($0, action: action, once: once) }, read: CognitoWire.decode)
    }

    func shouldRetry(_ error: CognitoError, action: String, once: Bool = false) -> Bool {
        // An HTML 5xx to an action a service may not offer is its way of
        // saying so: the caller falls back instead (never retried).
        if mayBeMissing.contains(action) && error.isUnsupportedOperation { return false }
        // Throttling rejects the request before it is acted on.
        if error.reason == .throttled { return true }
        return RetryingPost.retries(error, repeatable: repeatable(action, once: once))
    }
}
