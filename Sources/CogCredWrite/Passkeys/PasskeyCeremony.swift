import CogCredRead

/// The client's half of WebAuthn, for a sign-in (get) and a registration
/// (create): checks Cognito's options against the profile's relying party,
/// writes the client data, asks the key, and writes the credential Cognito
/// takes back.
///
/// The one rule it exists for: this command line writes the origin itself
/// (`https://<rpId>`), so whatever relying party the options named would
/// be signed for. Options naming any but the profile's are refused before
/// the key is asked anything: an endpoint that is not the user's Cognito
/// cannot obtain an assertion for another site where the same key holds a
/// passkey.
public struct PasskeyCeremony {
    /// The profile's pinned relying party id.
    let relyingParty: String
    let authenticator: any Authenticator
    let prompts: any PasskeyPrompts

    public init(relyingParty: String, authenticator: any Authenticator, prompts: any PasskeyPrompts) {
        self.relyingParty = relyingParty
        self.authenticator = authenticator
        self.prompts = prompts
    }

    /// A browser's default wait when the options name none.
    static let defaultTimeoutMilliseconds = 60_000
    /// At most this long, whatever the options say.
    static let maxTimeoutMilliseconds = 600_000

    /// Answers a WEB_AUTHN challenge: the credential, as CREDENTIAL's JSON.
    public func signIn(_ options: WebAuthn.RequestOptions, username: String) throws -> String {
        try WebAuthn.checkChallenge(options.challenge)
        try pin(options.rpId)
        let allowed = try ids(options.allowCredentials, "the passkey challenge allows")
        let clientData = WebAuthn.clientData(type: "webauthn.get", challenge: options.challenge, relyingParty: relyingParty)
        let request = AssertionRequest(
            relyingParty: relyingParty, clientData: clientData, allowCredentials: allowed,
            userVerification: .named(options.userVerification), timeoutMilliseconds: timeout(options.timeout), username: username)
        // The person's time (a PIN, a touch) is not the network's.
        let assertion = try PersonTime.waiting { try authenticator.assertion(request, prompts: prompts) }
        return WebAuthn.AssertionCredential(assertion, clientData: clientData).json
    }

    /// Answers StartWebAuthnRegistration's options: the new credential.
    public func register(_ options: WebAuthn.CreationOptions) throws -> WebAuthn.RegistrationCredential {
        try pin(options.rp.id)
        try WebAuthn.checkChallenge(options.challenge)
        let algorithms = options.pubKeyCredParams.filter { $0.type == "public-key" }.map(\.alg)
        guard algorithms.contains(WebAuthn.es256) else { throw PasskeyError.unsupportedAlgorithm(algorithms) }
        guard let userID = Base64URL.decode(options.user.id), !userID.isEmpty, userID.count <= 64 else {
            throw PasskeyError.malformedOptions("the registration's user id is not base64url of 1 to 64 bytes")
        }
        let excluded = try ids(options.excludeCredentials, "the registration excludes")
        let clientData = WebAuthn.clientData(type: "webauthn.create", challenge: options.challenge, relyingParty: relyingParty)
        let request = CredentialRequest(
            relyingParty: relyingParty, relyingPartyName: options.rp.name ?? relyingParty, userID: userID,
            userName: options.user.name, userDisplayName: options.user.displayName ?? options.user.name, clientData: clientData,
            excludeCredentials: excluded, userVerification: .named(options.authenticatorSelection?.userVerification),
            timeoutMilliseconds: timeout(options.timeout))
        let credential = try PersonTime.waiting { try authenticator.makeCredential(request, prompts: prompts) }
        return WebAuthn.RegistrationCredential(credential, clientData: clientData)
    }

    /// The relying party the options name (none: the caller's, which is the
    /// pinned one) must be the profile's.
    func pin(_ named: String?) throws(PasskeyError) {
        guard let named else { return }
        guard named == relyingParty else { throw .relyingPartyMismatch(sent: named, pinned: relyingParty) }
    }

    /// The public-key credentials' ids, as bytes.
    func ids(_ descriptors: [WebAuthn.CredentialDescriptor]?, _ what: String) throws(PasskeyError) -> [[UInt8]] {
        var ids: [[UInt8]] = []
        for descriptor in descriptors ?? [] where descriptor.type == "public-key" {
            guard let id = Base64URL.decode(descriptor.id), !id.isEmpty else {
                throw .malformedOptions("\(what) a credential whose id is not base64url")
            }
            ids.append(id)
        }
        return ids
    }

    func timeout(_ milliseconds: Double?) -> Int {
        guard let milliseconds, milliseconds.isFinite, milliseconds >= 1000 else { return Self.defaultTimeoutMilliseconds }
        // Bounded before it becomes an Int: a huge timeout must not trap.
        return Int(min(milliseconds, Double(Self.maxTimeoutMilliseconds)))
    }
}
