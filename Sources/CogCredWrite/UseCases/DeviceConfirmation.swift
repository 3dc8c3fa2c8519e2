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
    /// Newly confirmed and remembered (by the pool, or by the user's choice),
    /// or remembered now (`--remember-device`).
    case remembered(name: String)
    /// Confirmed, not remembered: MFA is still asked at each sign-in.
    case notRemembered(name: String)
    /// ConfirmDevice or UpdateDeviceStatus failed; the reason, as Cognito said it.
    case failed(String)
}

extension TokenManager {
    /// Why a confirmed device was not kept.
    static let deviceReplaced = "another sign-in of this profile stored its own device meanwhile; this one was not kept"

    /// This machine as the device of a sign-in's session, decided before
    /// its tokens are stored (and stored with them: a refresh needs it).
    enum SessionDevice {
        /// None: the profile's device item goes (it may be another user's).
        case none
        /// The device the sign-in offered, still the session's.
        case used(RememberedDevice)
        /// A new device with its password and verifier, stored unconfirmed
        /// until ConfirmDevice takes it.
        case new(RememberedDevice, DeviceVerifier)
        /// A new device whose verifier could not be made: its key is kept
        /// for refreshes, and the reason told.
        case unusable(RememberedDevice, reason: String)

        var stored: RememberedDevice? {
            switch self {
            case .none: return nil
            case .used(let device), .new(let device, _), .unusable(let device, _): return device
            }
        }
    }

    func sessionDevice(_ result: AuthenticationResult, used: RememberedDevice?, signInName: String, name: String) -> SessionDevice {
        let user = IssuedToken(result.accessToken)?.claims.subjectName ?? signInName
        guard let metadata = result.newDevice else {
            // Offered by the name typed; kept only if Cognito signed in its
            // user (an alias may have moved to another).
            guard let used, used.username == user else { return .none }
            return .used(used)
        }
        var device = RememberedDevice(
            key: metadata.deviceKey, groupKey: metadata.deviceGroupKey, password: "", username: user, signInName: signInName, name: name,
            confirmed: false)
        do {
            device.password = try DeviceVerifier.randomPassword()
            let verifier = try DeviceVerifier(
                groupKey: device.groupKey, deviceKey: device.key, password: device.password, saltHex: try DeviceVerifier.randomSaltHex())
            return .new(device, verifier)
        } catch {
            device.password = ""
            return .unusable(device, reason: error.message)
        }
    }

    /// After the tokens are stored, so that nothing here (a refusal, the
    /// person's answer, Ctrl-C) can cost the sign-in: ConfirmDevice for a
    /// new device, then remembered or not, as the pool and the user say.
    ///
    /// A remembered device only skips MFA, so a user the pool asks for none
    /// (no MFA challenge in this sign-in; when the device proved itself
    /// instead, none at the sign-in that made it) is not asked whether to
    /// remember it, and told nothing of it: the outcome is nil. Its device
    /// is still confirmed, as refreshes need, and remembered only when the
    /// pool or `remember` says so.
    func finishDevice(
        _ device: SessionDevice, accessToken: String, provedDevice: Bool, askedMFA: Bool, cognito: any CognitoDevices,
        options: DeviceOptions, answers: any ChallengeAnswers
    ) -> DeviceOutcome? {
        let hasMFA: Bool
        switch device {
        case .none: return nil
        // No call to ask (GetUser would cost every such sign-in a round
        // trip): the device says what its first sign-in found.
        case .used(let used) where provedDevice: hasMFA = used.withoutMFA != true
        default: hasMFA = askedMFA
        }
        let outcome = finishDevice(
            device, accessToken: accessToken, provedDevice: provedDevice, cognito: cognito, options: options, withoutMFA: !hasMFA,
            ask: hasMFA ? answers.rememberDevice(name:) : { _ in false })
        if hasMFA { return outcome }
        if case .failed(let reason) = outcome {
            warn("cog-cred: warning: this machine could not be made a device of the user's (\(reason))")
        }
        return nil
    }

    func finishDevice(
        _ device: SessionDevice, accessToken: String, provedDevice: Bool, cognito: any CognitoDevices, options: DeviceOptions,
        withoutMFA: Bool, ask: (String) -> Bool
    ) -> DeviceOutcome? {
        switch device {
        case .none: return nil
        case .unusable(_, let reason): return .failed(reason)
        case .used(let device):
            if provedDevice { return .signedInAsRemembered }
            let name = device.name ?? options.name
            // A device of the user's that is not remembered: `--remember-device` now remembers it.
            guard options.remember == true else { return .notRemembered(name: name) }
            do {
                try cognito.updateDeviceStatus(accessToken: accessToken, deviceKey: device.key, remembered: true)
                return .remembered(name: name)
            } catch {
                return .failed(error.summary)
            }
        case .new(var device, let verifier):
            let userChooses: Bool
            do {
                userChooses = try cognito.confirmDevice(accessToken: accessToken, deviceKey: device.key, verifier: verifier, name: options.name)
            } catch {
                return .failed(error.summary)
            }
            device.confirmed = true
            device.withoutMFA = withoutMFA ? true : nil
            do {
                // Stored unconfirmed with the tokens; a sign-in since then
                // has stored its own device, which stays.
                guard try stored.changeDevice(ifStill: device.key, to: device) else { return .failed(Self.deviceReplaced) }
            } catch {
                return .failed((error as? any CogCredFailure)?.message ?? "\(error)")
            }
            guard userChooses else { return .remembered(name: options.name) }
            let remember = options.remember ?? ask(options.name)
            do {
                try cognito.updateDeviceStatus(accessToken: accessToken, deviceKey: device.key, remembered: remember)
            } catch {
                return .failed(error.summary)
            }
            return remember ? .remembered(name: options.name) : .notRemembered(name: options.name)
        }
    }
}

// MARK: - A device Cognito refuses

extension TokenManager {
    /// Cognito refused the device this sign-in offered: it no longer exists,
    /// or its proof failed.
    struct DeviceRefused: Error {}

    /// One call of a sign-in; when it offered a device, Cognito's refusal
    /// of the device (at `challenge`) is told apart: `DeviceRefused`.
    func signInCall<T>(_ challenge: Challenge? = nil, offeringDevice: Bool = false, _ body: () throws(CognitoError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            if offeringDevice, Self.refusesDevice(error, answering: challenge) { throw DeviceRefused() }
            throw AuthError.cognito(error, operation: .signIn)
        }
    }

    /// Whether `error`, to a sign-in that offered a device, says the device
    /// is gone (Cognito's "Device does not exist.") or failed its proof. A
    /// wrong client secret or a spent session is no fault of the device's.
    static func refusesDevice(_ error: CognitoError, answering challenge: Challenge?) -> Bool {
        switch error.reason {
        case .notFound(.device)?: return true
        case .refused(.secretHash)?, .refused(.challengeSession)?: return false
        case .refused?, .notFound?: return challenge?.provesDevice == true
        default: return false
        }
    }
}
