// After a sign-in on a pool that tracks devices: this machine becomes one
// of the user's devices (ConfirmDevice), remembered or not as the pool and
// the user say (UpdateDeviceStatus), as amazon-cognito-identity-js does.

/// How a sign-in treats this machine as a device.
public struct DeviceOptions: Sendable, Equatable {
    /// ConfirmDevice's DeviceName (`--device-name`; the CLI's default is the host name).
    public var name: String
    /// `--remember-device` (true) or `--no-remember-device` (false); nil asks
    /// on a terminal, and without one does not remember.
    public var remember: Bool?

    public init(name: String = "cog-cred", remember: Bool? = nil) {
        self.name = name
        self.remember = remember
    }
}

/// What a sign-in made of this machine as the user's device.
public enum DeviceOutcome: Sendable, Equatable {
    /// A remembered device: this sign-in proved the device and skipped MFA.
    case signedInAsRemembered
    /// Newly confirmed and remembered (by the pool, or by the user's choice).
    case remembered(name: String)
    /// Confirmed, not remembered: MFA is still asked at each sign-in.
    case notRemembered(name: String)
    /// ConfirmDevice or UpdateDeviceStatus failed; the reason, as Cognito said it.
    case failed(String)
}

extension TokenManager {
    /// The device this sign-in's session is bound to (to be stored with its
    /// tokens) and what to tell the user. `used` is the device the sign-in
    /// offered; a result with NewDeviceMetadata is confirmed here. A failure
    /// costs only the remembering: the tokens are stored all the same.
    func deviceAfterSignIn(
        _ result: AuthenticationResult, used: RememberedDevice?, provedDevice: Bool, signInName: String, cognito: any CognitoClient,
        options: DeviceOptions, answers: any ChallengeAnswers
    ) -> (RememberedDevice?, DeviceOutcome?) {
        guard let metadata = result.newDevice else {
            guard let used else { return (nil, nil) }
            if provedDevice { return (used, .signedInAsRemembered) }
            // A device of the user's that is not remembered: `--remember-device` now remembers it.
            guard options.remember == true else { return (used, .notRemembered(name: options.name)) }
            do {
                try cognito.updateDeviceStatus(accessToken: result.accessToken, deviceKey: used.key, remembered: true)
                return (used, .remembered(name: options.name))
            } catch {
                return (used, .failed(error.summary))
            }
        }
        let username = IssuedToken(result.accessToken)?.claims.subjectName ?? signInName
        var device: RememberedDevice
        let verifier: DeviceVerifier
        do {
            let password = try DeviceVerifier.randomPassword()
            verifier = try DeviceVerifier(
                groupKey: metadata.deviceGroupKey, deviceKey: metadata.deviceKey, password: password,
                saltHex: try DeviceVerifier.randomSaltHex())
            device = RememberedDevice(
                key: metadata.deviceKey, groupKey: metadata.deviceGroupKey, password: password, username: username,
                signInName: signInName, confirmed: false)
        } catch {
            // The session is bound to the key all the same: refreshes send it.
            let unconfirmed = RememberedDevice(
                key: metadata.deviceKey, groupKey: metadata.deviceGroupKey, password: "", username: username, signInName: signInName,
                confirmed: false)
            return (unconfirmed, .failed(error.message))
        }
        do {
            let userChooses = try cognito.confirmDevice(
                accessToken: result.accessToken, deviceKey: device.key, verifier: verifier, name: options.name)
            device.confirmed = true
            guard userChooses else { return (device, .remembered(name: options.name)) }
            let remember = options.remember ?? answers.rememberDevice(name: options.name)
            try cognito.updateDeviceStatus(accessToken: result.accessToken, deviceKey: device.key, remembered: remember)
            return (device, remember ? .remembered(name: options.name) : .notRemembered(name: options.name))
        } catch {
            return (device, .failed(error.summary))
        }
    }
}
