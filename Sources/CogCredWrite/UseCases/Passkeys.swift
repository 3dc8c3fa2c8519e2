// The signed-in user's passkeys (`cog-cred passkey`): added with a
// security key, listed and removed, with the access token (refreshed first
// when it is too old), which must carry the aws.cognito.signin.user.admin
// scope. A sign-in with a passkey is SignIn's.

extension TokenManager {
    /// Makes a passkey on the security key and registers it with Cognito
    /// (StartWebAuthnRegistration, the key, CompleteWebAuthnRegistration).
    /// Returns it as Cognito lists it, when it does.
    @discardableResult
    public func addPasskey(prompts: any PasskeyPrompts) throws -> Passkey? {
        // Before anything is sent: a profile with no relying party makes no passkey.
        let ceremony = try passkeyCeremony(prompts: prompts)
        let access = try currentToken(.access).value
        let cognito: any CognitoPasskeys = try makeCognito()
        let options = try cognitoCall(.passkeys(profile: profileName)) { () throws(CognitoError) in try cognito.startPasskeyRegistration(accessToken: access) }
        let credential = try ceremony.register(options)
        try cognitoCall(.passkeys(profile: profileName)) { () throws(CognitoError) in try cognito.completePasskeyRegistration(accessToken: access, credential: credential) }
        return try passkeys().first { $0.id == credential.id }
    }

    /// Every passkey of the user's (ListWebAuthnCredentials, all pages).
    public func passkeys() throws -> [Passkey] {
        let access = try currentToken(.access).value
        let cognito: any CognitoPasskeys = try makeCognito()
        return try everyPage { token in
            let page = try cognitoCall(.passkeys(profile: profileName)) { () throws(CognitoError) in try cognito.listPasskeys(accessToken: access, nextToken: token) }
            return (page.passkeys, page.next)
        }
    }

    /// Removes a passkey (DeleteWebAuthnCredential) by its credential id.
    public func removePasskey(_ id: String) throws {
        let access = try currentToken(.access).value
        let cognito: any CognitoPasskeys = try makeCognito()
        try cognitoCall(.passkeys(profile: profileName)) { () throws(CognitoError) in try cognito.deletePasskey(accessToken: access, id: id) }
    }

    /// The ceremony for this profile's relying party and security key.
    func passkeyCeremony(prompts: any PasskeyPrompts) throws(PasskeyError) -> PasskeyCeremony {
        guard let relyingParty = profile.passkeyRelyingParty else { throw .noRelyingParty(profile: profileName) }
        return PasskeyCeremony(relyingParty: relyingParty, authenticator: makeAuthenticator(), prompts: prompts)
    }
}
