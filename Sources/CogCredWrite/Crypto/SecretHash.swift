#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Cognito's SECRET_HASH for app clients that have a client secret:
/// Base64(HMAC-SHA256(key: client secret, message: username + client id)).
///
/// Which username matters: the one typed at InitiateAuth and the
/// unauthenticated account calls, USER_ID_FOR_SRP in challenge responses, and
/// for a refresh the name Cognito knows the user by (the access token's
/// `username` claim), which differs from what was typed when the pool signs
/// users in by email alias.
public enum SecretHash {
    public static func compute(username: String, clientID: String, clientSecret: String) -> String {
        let digest = Digest.hmacSHA256(key: Array(clientSecret.utf8), message: Array((username + clientID).utf8))
        return Data(digest).base64EncodedString()
    }
}
