// The signed-in user's devices (`cog-cred devices`): listed and forgotten
// with the access token, refreshed first when it is too old.

extension TokenManager {
    /// Every device of the user's (ListDevices, all pages), and the key of
    /// this machine's, if it is one of them.
    public func devices() throws -> (devices: [UserDevice], current: String?) {
        let access = try currentToken(.access).value
        let cognito = try makeCognito()
        var devices: [UserDevice] = []
        var page: String? = nil
        repeat {
            let token = page
            let answer = try devicesCall { () throws(CognitoError) in try cognito.listDevices(accessToken: access, paginationToken: token) }
            devices += answer.devices
            page = answer.next
        } while page != nil
        return (devices, try rememberedDevice()?.key)
    }

    /// Forgets a device (ForgetDevice): `key`, or this machine's. Forgetting
    /// this machine deletes its keyring item too, so the next sign-in is a
    /// new device's and asks for MFA. Returns the key forgotten.
    @discardableResult
    public func forgetDevice(_ key: String? = nil) throws -> String {
        let current = try rememberedDevice()
        guard let key = key ?? current?.key else { throw AuthError.noDevice(profile: profileName) }
        let access = try currentToken(.access).value
        let cognito = try makeCognito()
        try devicesCall { () throws(CognitoError) in try cognito.forgetDevice(accessToken: access, deviceKey: key) }
        if key == current?.key {
            // Under the refresh lock, like every change to the session's items.
            try lock.withLock(profile: profileName) { _ = try store.delete(.device, profile: profileName) }
        }
        return key
    }

    func devicesCall<T>(_ body: () throws(CognitoError) -> T) throws(AuthError) -> T {
        do {
            return try body()
        } catch {
            throw .cognito(error, operation: .devices(profile: profileName))
        }
    }
}
