#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON shapes of the passkey actions (WebAuthn registration and management).
extension CognitoWire {
    struct StartWebAuthnRegistrationResponse: Decodable {
        var credentialCreationOptions: WebAuthn.CreationOptions?
    }

    struct CompleteWebAuthnRegistrationRequest: Encodable {
        var accessToken: String
        var credential: WebAuthn.RegistrationCredential
    }

    struct ListWebAuthnCredentialsRequest: Encodable {
        var accessToken: String
        var nextToken: String?
        var maxResults: Int
    }

    struct ListWebAuthnCredentialsResponse: Decodable {
        struct Credential: Decodable {
            var credentialId: String?
            var friendlyCredentialName: String?
            var relyingPartyId: String?
            var authenticatorAttachment: String?
            var authenticatorTransports: [String]?
            var createdAt: Double?

            var passkey: Passkey? {
                guard let credentialId, !credentialId.isEmpty else { return nil }
                return Passkey(
                    id: credentialId, name: friendlyCredentialName, relyingParty: relyingPartyId, attachment: authenticatorAttachment,
                    transports: authenticatorTransports ?? [], created: createdAt.flatMap { Int64(exactly: $0.rounded(.down)) })
            }
        }

        var credentials: [Credential]?
        var nextToken: String?
    }

    struct DeleteWebAuthnCredentialRequest: Encodable {
        var accessToken: String
        var credentialId: String
    }
}
