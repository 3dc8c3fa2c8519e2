// The signed-in user's devices (`cog-cred devices`): listed and forgotten
// with the access token, refreshed first when it is too old.

extension TokenManager {
    /// Every device of the user's (ListDevices, all pages), and the key of
    /// this machine's, if it is one of them.
    public func devices() throws -> (devices: [UserDevice], current: String?) {
        let access = try currentToken(.access).value
        let cognito: any CognitoDevices = try makeCognito()
        let devices = try everyPage { token in
            let page = try cognitoCall(.devices(profile: profileName)) { () throws(CognitoError) in try cognito.listDevices(accessToken: access, paginationToken: token) }
            return (page.devices, page.next)
        }
        return (devices, try stored.rememberedDevice()?.key)
    }

    /// At most this many pages (a service that kept answering with a next
    /// page would otherwise never let a list end).
    static let maxPages = 100

    /// Every item of a paged list: `page` answers one page (nil: the first)
    /// and the token of the next.
    func everyPage<Item>(_ page: (String?) throws -> ([Item], next: String?)) throws -> [Item] {
        var items: [Item] = []
        var next: String? = nil
        var pages = 0
        repeat {
            let answer = try page(next)
            items += answer.0
            next = answer.next
            pages += 1
        } while next != nil && pages < Self.maxPages
        return items
    }

    /// Forgets a device (ForgetDevice): `key`, or this machine's. Forgetting
    /// this machine deletes its keyring item too, so the next sign-in is a
    /// new device's and asks for MFA; one Cognito had forgotten already
    /// (elsewhere) only loses its item. Returns the key forgotten.
    @discardableResult
    public func forgetDevice(_ key: String? = nil) throws -> String {
        let current = try stored.rememberedDevice()?.key
        guard let key = key ?? current else { throw AuthError.noDevice(profile: profileName) }
        let access = try currentToken(.access).value
        let cognito: any CognitoDevices = try makeCognito()
        do {
            try cognito.forgetDevice(accessToken: access, deviceKey: key)
        } catch {
            // This machine's, forgotten elsewhere: only its item is left.
            let forgottenAlready = key == current && error.isNotFound
            if !forgottenAlready { throw AuthError.cognito(error, operation: .devices(profile: profileName)) }
        }
        if key == current {
            try stored.changeDevice(ifStill: key, to: nil)
        }
        return key
    }

    /// This machine as one of the user's devices, as stored (`devices` marks it).
    public func rememberedDevice() throws -> RememberedDevice? { try stored.rememberedDevice() }
}
