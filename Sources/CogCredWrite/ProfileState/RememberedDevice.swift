#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// This machine as one of a user's devices in a pool that tracks devices:
/// the keyring item of kind `device`, bound like the tokens to the profile's
/// pool and app client. The device password exists only here (Cognito keeps
/// its verifier), so the item is as secret as a refresh token; none of it
/// goes to the config file, argv or logs.
public struct RememberedDevice: Sendable, Equatable, Codable {
    /// DeviceKey: sent with sign-ins and refreshes.
    public var key: String
    /// DeviceGroupKey: the device SRP's "pool name".
    public var groupKey: String
    /// The random device password the verifier was made of.
    public var password: String
    /// The name Cognito knows the user by (the access token's `username`),
    /// and the name signed in with (perhaps an alias): the device is offered
    /// only to a sign-in of the same user.
    public var username: String
    public var signInName: String
    /// The DeviceName it was confirmed with.
    public var name: String?
    /// ConfirmDevice accepted it. An unconfirmed device's key is still sent
    /// with refreshes (its session is bound to it), never with a sign-in.
    public var confirmed: Bool
    /// Made by a sign-in that asked no MFA: a later sign-in it proves is
    /// not told as one that skipped MFA. Nil in items from before (told).
    public var withoutMFA: Bool?

    enum CodingKeys: String, CodingKey {
        case key = "device_key"
        case groupKey = "device_group_key"
        case password = "device_password"
        case username
        case signInName = "sign_in_name"
        case name
        case confirmed
        case withoutMFA = "without_mfa"
    }

    /// Whether a sign-in as `name` is this device's user's.
    func belongs(to name: String) -> Bool { name == username || name == signInName }

    var json: String {
        // Encoding strings and a Bool cannot fail.
        String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self)
    }

    init(
        key: String, groupKey: String, password: String, username: String, signInName: String, name: String? = nil, confirmed: Bool,
        withoutMFA: Bool? = nil
    ) {
        self.key = key
        self.groupKey = groupKey
        self.password = password
        self.username = username
        self.signInName = signInName
        self.name = name
        self.confirmed = confirmed
        self.withoutMFA = withoutMFA
    }

    init?(json: String) {
        guard let device = try? JSONDecoder().decode(RememberedDevice.self, from: Data(json.utf8)), !device.key.isEmpty else {
            return nil
        }
        self = device
    }
}

/// Printed (a failed test, a debugger) without its password.
extension RememberedDevice: CustomStringConvertible, CustomReflectable {
    public var description: String { "RememberedDevice(\(key), \(username), \(confirmed ? "confirmed" : "unconfirmed"))" }
    public var customMirror: Mirror { Mirror(self, children: ["key": key, "username": username, "confirmed": confirmed]) }
}

extension StoredSession {
    /// The profile's device, bound to its pool and client; nil when there is
    /// none (or an item this version cannot read, which the next sign-in replaces).
    public func rememberedDevice() throws -> RememberedDevice? {
        try store.read(.device, profile: profileName, binding: profile.binding).flatMap(RememberedDevice.init(json:))
    }

    func storeDevice(_ device: RememberedDevice, username: String?) throws {
        let context = ItemContext(userPoolID: profile.userPoolID, clientID: profile.clientID, username: username)
        try store.write(.device, profile: profileName, secret: device.json, context: context)
    }

    /// Replaces (with `device`) or deletes (nil) the profile's device item,
    /// under the profile's lock and only while the stored device is still
    /// `key`, the one this command holds: a sign-in that ran meanwhile may
    /// have stored its own, which its refreshes need. Returns whether it did.
    @discardableResult
    func changeDevice(ifStill key: String, to device: RememberedDevice?) throws -> Bool {
        try lock.withLock(profile: profileName) {
            // A store that withholds a device's keys (an agent's) cannot say
            // whether another sign-in stored its own meanwhile: this one's is kept.
            let current = try store.read([.device], profile: profileName, binding: profile.binding)[.device]
            if current != .withheld { guard current?.value.flatMap(RememberedDevice.init(json:))?.key == key else { return false } }
            if let device {
                try storeDevice(device, username: device.username)
            } else {
                _ = try store.delete(.device, profile: profileName)
            }
            return true
        }
    }
}
