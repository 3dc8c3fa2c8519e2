import CogCredRead

/// A FIDO2 authenticator (a security key): signs a challenge with a
/// passkey it holds, or makes a new one. The real one is libfido2's
/// (Fido2Authenticator); tests use an in-memory fake. Either asks the
/// person through `prompts` (a PIN, a touch), which the executable answers.
public protocol Authenticator: Sendable {
    /// authenticatorGetAssertion: one assertion, by one of the allowed
    /// credentials (or any of the key's for the relying party).
    func assertion(_ request: AssertionRequest, prompts: any PasskeyPrompts) throws -> Assertion
    /// authenticatorMakeCredential: a new discoverable ES256 credential.
    func makeCredential(_ request: CredentialRequest, prompts: any PasskeyPrompts) throws -> NewCredential
}

/// What the person is asked for while a security key works. Terminal I/O:
/// the executable's (its PIN prompt reads with echo off, or one line of
/// standard input with `--pin-stdin`).
public protocol PasskeyPrompts {
    /// The key's PIN; `retriesLeft` as the key counts them, when it said.
    func securityKeyPIN(retriesLeft: Int?) throws -> String
    /// The key now waits for a touch (said once, before it blocks);
    /// `choosing`: several keys wait, and the one touched is used.
    func touchSecurityKey(choosing: Bool)
}

/// A sign-in's request to the key.
public struct AssertionRequest: Sendable, Equatable {
    public var relyingParty: String
    /// The client data the key signs a hash of (the key sees the hash only).
    public var clientData: [UInt8]
    /// Credential ids the relying party accepts; empty: any of the key's.
    public var allowCredentials: [[UInt8]]
    public var userVerification: WebAuthn.UserVerification
    /// How long to wait for a touch (and a PIN's exchange).
    public var timeoutMilliseconds: Int
    /// The user's name, to pick among several of the key's credentials.
    public var username: String
}

/// A signed assertion.
public struct Assertion: Sendable, Equatable {
    public var credentialID: [UInt8]
    /// The authenticator data (raw bytes).
    public var authenticatorData: [UInt8]
    public var signature: [UInt8]
    /// The user handle a discoverable credential keeps.
    public var userHandle: [UInt8]?

    public init(credentialID: [UInt8], authenticatorData: [UInt8], signature: [UInt8], userHandle: [UInt8]?) {
        self.credentialID = credentialID
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }
}

/// A registration's request to the key.
public struct CredentialRequest: Sendable, Equatable {
    public var relyingParty: String
    public var relyingPartyName: String
    public var userID: [UInt8]
    public var userName: String
    public var userDisplayName: String
    public var clientData: [UInt8]
    /// Credentials the user has already: a key holding one refuses.
    public var excludeCredentials: [[UInt8]]
    public var userVerification: WebAuthn.UserVerification
    public var timeoutMilliseconds: Int
}

/// A new credential, as the key attested it.
public struct NewCredential: Sendable, Equatable {
    public var id: [UInt8]
    /// The authenticator data (raw bytes), with the attested credential data.
    public var authenticatorData: [UInt8]
    /// The attestation statement format ("packed", "fido-u2f", "none").
    public var format: String
    /// The attestation statement, CBOR (a map).
    public var attestationStatement: [UInt8]
    /// How the key is reached ("usb", "nfc").
    public var transports: [String]

    public init(id: [UInt8], authenticatorData: [UInt8], format: String, attestationStatement: [UInt8], transports: [String]) {
        self.id = id
        self.authenticatorData = authenticatorData
        self.format = format
        self.attestationStatement = attestationStatement
        self.transports = transports
    }
}
