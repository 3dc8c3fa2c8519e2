#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The AWS JSON 1.1 protocol's codec. The JSON's keys are the shapes'
/// property names with the first letter capitalised (`accessToken` is
/// `AccessToken`), as the protocol spells them; dictionaries
/// (AuthParameters, Logins...) are sent and read as they are.
extension CognitoWire {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .custom { path in
            let name = path.last?.stringValue ?? ""
            // Inside a WebAuthn object the names are W3C's, as they are.
            if path.dropLast().contains(where: { webAuthnMembers.contains($0.stringValue) }) { return Key(name) }
            return Key(name.prefix(1).uppercased() + name.dropFirst())
        }
        return encoder
    }

    /// Members that carry a WebAuthn object (W3C's lowerCamel names, which
    /// the decoder's rule leaves as they are too).
    static let webAuthnMembers: Set<String> = ["credential"]

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .custom { path in Key(path.last.map { $0.stringValue.prefix(1).lowercased() + $0.stringValue.dropFirst() } ?? "") }
        return decoder
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Turns an HTTP answer into the action's result or a `CognitoError`.
    /// Anything that is not Cognito-shaped JSON is a `badResponse`.
    static func decode<Response: Decodable>(_ response: HTTPResponse) throws(CognitoError) -> Response {
        if response.status == 200 {
            do {
                return try decoder().decode(Response.self, from: response.body)
            } catch {
                throw .badResponse(httpStatus: 200, detail: response.body.isEmpty ? "empty body" : "not the expected JSON")
            }
        }
        if let error = try? decoder().decode(ErrorBody.self, from: response.body), let type = error.type, !type.isEmpty {
            // "com.amazonaws...#NotAuthorizedException" -> "NotAuthorizedException"
            let code = type.split(separator: "#").last.map(String.init) ?? type
            throw .service(code: code, message: error.message ?? "", httpStatus: response.status)
        }
        throw .badResponse(httpStatus: response.status, detail: response.body.isEmpty ? "empty body" : "not a JSON error")
    }

    struct ErrorBody: Decodable {
        var type: String?
        /// `message`, or `Message` as some AWS services spell it: both read as this.
        var message: String?

        enum CodingKeys: String, CodingKey {
            case type = "__type"
            case message
        }
    }
}
