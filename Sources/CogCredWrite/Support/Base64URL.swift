#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CogCredRead

/// base64url without padding (RFC 4648 section 5), as PKCE and WebAuthn
/// write binary values.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// nil for anything but base64url's alphabet (padding tolerated).
    static func decode(_ text: String) -> [UInt8]? {
        let alphabet = { (byte: UInt8) in
            Base64URL.isLetterOrDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "=")
        }
        guard text.utf8.allSatisfy(alphabet) else { return nil }
        return JWT.base64URLDecode(text[...].utf8)
    }

    static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
    }
}
