#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// WebAuthn's own words (W3C Web Authentication, level 3), as Cognito
/// passes them through: the options it sends and the credentials it takes
/// back. Their member names are W3C's lowerCamel ones, not the AWS JSON
/// protocol's, so CognitoWire's encoder leaves them as they are. Binary
/// values are base64url without padding throughout.
public enum WebAuthn {
    /// Whether the key must verify the user (a PIN, a fingerprint), as the
    /// options ask.
    public enum UserVerification: String, Sendable, Equatable {
        case required, preferred, discouraged

        /// WebAuthn's default when the options say nothing.
        static func named(_ name: String?) -> UserVerification { name.flatMap(UserVerification.init(rawValue:)) ?? .preferred }
    }

    /// A credential the key may (or, excluded, may not) use.
    struct CredentialDescriptor: Codable, Sendable, Equatable {
        var type: String
        var id: String
        var transports: [String]?
    }

    /// A sign-in's challenge: PublicKeyCredentialRequestOptionsJSON,
    /// Cognito's CREDENTIAL_REQUEST_OPTIONS. Read where the challenge is
    /// (CognitoWire), as registration's options are; checked by the ceremony.
    public struct RequestOptions: Decodable, Sendable, Equatable {
        var challenge: String
        var rpId: String?
        /// Milliseconds.
        var timeout: Double?
        var allowCredentials: [CredentialDescriptor]?
        var userVerification: String?
    }

    /// A registration's challenge: PublicKeyCredentialCreationOptionsJSON,
    /// StartWebAuthnRegistration's CredentialCreationOptions.
    public struct CreationOptions: Decodable, Sendable, Equatable {
        struct RelyingParty: Decodable, Sendable, Equatable {
            var id: String?
            var name: String?
        }

        struct User: Decodable, Sendable, Equatable {
            var id: String
            var name: String
            var displayName: String?
        }

        struct Parameters: Decodable, Sendable, Equatable {
            var type: String
            var alg: Int
        }

        struct Selection: Decodable, Sendable, Equatable {
            var userVerification: String?
            var residentKey: String?
            var requireResidentKey: Bool?
        }

        var rp: RelyingParty
        var user: User
        var challenge: String
        var pubKeyCredParams: [Parameters]
        /// Milliseconds.
        var timeout: Double?
        var excludeCredentials: [CredentialDescriptor]?
        var authenticatorSelection: Selection?
    }

    /// COSE's ES256 (ECDSA P-256 with SHA-256): what a security key makes.
    static let es256 = -7

    /// The challenge goes back in the client data unchanged; anything but
    /// base64url would be re-encoded there, and Cognito compares the text.
    static func checkChallenge(_ challenge: String) throws(PasskeyError) {
        guard !challenge.isEmpty, Base64URL.decode(challenge) != nil, !challenge.contains("=") else {
            throw .malformedOptions("the passkey challenge is not base64url")
        }
    }

    /// CollectedClientData, as a native client writes it: the options'
    /// challenge unchanged and the origin `https://<rpId>` (what AWS's own
    /// libfido2 client for Linux sends). Its bytes are what the key signs
    /// a hash of, and what goes back to Cognito.
    static func clientData(type: String, challenge: String, relyingParty: String) -> [UInt8] {
        struct ClientData: Encodable {
            var type: String
            var challenge: String
            var origin: String
            var crossOrigin = false
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let data = ClientData(type: type, challenge: challenge, origin: "https://" + relyingParty)
        // Four strings and a Bool: encoding cannot fail.
        return Array((try? encoder.encode(data)) ?? Data())
    }

    /// PublicKeyCredential as JSON (RegistrationResponseJSON,
    /// AuthenticationResponseJSON): a key's answer, with what it answered.
    public struct Credential<Response: Encodable & Sendable & Equatable>: Encodable, Sendable, Equatable {
        var id: String
        var rawId: String
        var type = "public-key"
        var response: Response
        var clientExtensionResults: [String: String] = [:]
        /// A security key, never this machine's own authenticator.
        var authenticatorAttachment = "cross-platform"

        init(id: [UInt8], response: Response) {
            self.id = Base64URL.encode(id)
            rawId = self.id
            self.response = response
        }
    }

    struct AssertionResponse: Encodable, Sendable, Equatable {
        var clientDataJSON: String
        var authenticatorData: String
        var signature: String
        var userHandle: String?
    }

    public struct AttestationResponse: Encodable, Sendable, Equatable {
        var clientDataJSON: String
        var attestationObject: String
        var transports: [String]
    }

    /// A sign-in's answer, Cognito's CREDENTIAL.
    typealias AssertionCredential = Credential<AssertionResponse>
    /// A registration's answer, CompleteWebAuthnRegistration's Credential.
    public typealias RegistrationCredential = Credential<AttestationResponse>
}

extension WebAuthn.RequestOptions {
    /// Reads the options as Cognito sends them: a JSON string.
    public init(json text: String) throws(PasskeyError) {
        guard let options = try? JSONDecoder().decode(WebAuthn.RequestOptions.self, from: Data(text.utf8)) else {
            throw .malformedOptions("the passkey challenge's options are not WebAuthn request options")
        }
        self = options
    }

    /// The options as `Challenge.passkey` carries them: read, or why not,
    /// which fails the sign-in only when it answers with a passkey (so
    /// after what is checked first: the flow, the profile's relying party).
    static func read(_ text: String) -> Result<WebAuthn.RequestOptions, PasskeyError> {
        do { return .success(try WebAuthn.RequestOptions(json: text)) } catch { return .failure(error) }
    }
}

extension WebAuthn.Credential where Response == WebAuthn.AssertionResponse {
    init(_ assertion: Assertion, clientData: [UInt8]) {
        self.init(
            id: assertion.credentialID,
            response: WebAuthn.AssertionResponse(
                clientDataJSON: Base64URL.encode(clientData), authenticatorData: Base64URL.encode(assertion.authenticatorData),
                signature: Base64URL.encode(assertion.signature), userHandle: assertion.userHandle.map(Base64URL.encode)))
    }

    /// As CREDENTIAL carries it: a JSON string.
    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}

extension WebAuthn.Credential where Response == WebAuthn.AttestationResponse {
    init(_ credential: NewCredential, clientData: [UInt8]) {
        let attestation = CBOR.attestationObject(
            format: credential.format, statement: credential.attestationStatement, authenticatorData: credential.authenticatorData)
        self.init(
            id: credential.id,
            response: WebAuthn.AttestationResponse(
                clientDataJSON: Base64URL.encode(clientData), attestationObject: Base64URL.encode(attestation),
                transports: credential.transports))
    }
}
