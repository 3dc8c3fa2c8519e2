/// A profile's items in a store, read and written with no service reached:
/// what is stored (`status`), storing what Cognito returned (SaveTokens),
/// this machine as a device (RememberedDevice), a rejected token forgotten
/// (RejectedToken) and the items deleted, each change under the profile's
/// lock. Both a LocalSession's and a sign-in's: a sign-in through an agent
/// writes its tokens into the agent's store with it.
public struct StoredSession: SessionItems {
    public let profileName: String
    public let profile: Profile
    let store: any TokenStore
    let clock: any Clock
    let lock: any RefreshLock
    /// Where warnings for the person go (stderr in the executable).
    let warn: @Sendable (String) -> Void

    public init(
        profileName: String, profile: Profile, store: any TokenStore, clock: any Clock = SystemClock(), lock: any RefreshLock,
        warn: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.profileName = profileName
        self.profile = profile
        self.store = store
        self.clock = clock
        self.lock = lock
        self.warn = warn
    }

    public func deleteItems(forgettingDevice: Bool) throws -> Int {
        try lock.withLock(profile: profileName) { try deleteItemsHoldingLock(forgettingDevice: forgettingDevice) }
    }

    func deleteItemsHoldingLock(forgettingDevice: Bool) throws -> Int {
        try Self.deleteItems(of: profileName, in: store, forgettingDevice: forgettingDevice)
    }

    /// The session's items of `name`, whatever pool or client they are bound
    /// to: the AWS credentials and identity of the identity pool with the
    /// session they came from, then access, ID and refresh (so an
    /// interrupted sign-out can be run again); the device only when asked.
    static func deleteItems(of name: String, in store: any TokenStore, forgettingDevice: Bool) throws -> Int {
        var removed = 0
        let kinds: [SecretKind] = [.awsCredentials, .identityID, .access, .id, .refresh] + (forgettingDevice ? [.device] : [])
        for kind in kinds where try store.delete(kind, profile: name) {
            removed += 1
        }
        return removed
    }
}
