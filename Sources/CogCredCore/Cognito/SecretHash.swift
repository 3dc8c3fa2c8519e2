import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Cognito's SECRET_HASH for app clients that have a client secret:
/// Base64(HMAC-SHA256(key: client secret, message: username + client id)).
///
/// Which username matters: the one typed at InitiateAuth and the
/// unauthenticated account calls, but for a refresh the name Cognito knows
/// the user by (the access token's `username` claim), which differs from
/// what was typed when the pool signs users in by email alias.
public enum SecretHash {
    public static func compute(username: String, clientID: String, clientSecret: String) -> String {
        let key = Array(clientSecret.utf8)
        let message = Array((username + clientID).utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = key.withUnsafeBytes { k in
            message.withUnsafeBytes { m in
                HMAC(EVP_sha256(), k.baseAddress, Int32(key.count), m.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count, &digest, &length)
            }
        }
        // HMAC-SHA256 over in-memory buffers cannot fail short of memory exhaustion.
        precondition(ok != nil && length == 32, "HMAC-SHA256 failed")
        return Data(digest[0..<Int(length)]).base64EncodedString()
    }
}
