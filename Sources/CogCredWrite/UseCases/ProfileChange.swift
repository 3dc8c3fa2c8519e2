/// What a profile's new settings leave behind in the keyring: items issued
/// for the old settings, which the new ones must not use (`configure`).
///
/// Every item is bound to its pool and client in the keyring, so one that
/// cannot be deleted now is still never handed out; deleting it is what
/// keeps the keyring from filling with dead sessions.
public struct ProfileChange: Equatable, Sendable {
    /// Another user pool, app client, endpoint, domain or grant: the
    /// session's tokens (and the AWS credentials got with them) go, and the
    /// user signs in again.
    public var endsSession: Bool
    /// The same session, but another identity pool, role or flow: only the
    /// AWS credentials and the identity ID go (an identity of another pool
    /// means nothing).
    public var dropsAWSCredentials: Bool
    /// The stored app client secret belongs to the old app client (or pool):
    /// it goes, unless a new secret is given with the change, where it would
    /// otherwise be sent to the new client's domain.
    public var dropsClientSecret: Bool

    public init(endsSession: Bool = false, dropsAWSCredentials: Bool = false, dropsClientSecret: Bool = false) {
        self.endsSession = endsSession
        self.dropsAWSCredentials = dropsAWSCredentials
        self.dropsClientSecret = dropsClientSecret
    }

    /// From `old` (nil: a new profile, nothing stored) to `new`;
    /// `newClientSecret` when the change stores a client secret of its own.
    public init(from old: Profile?, to new: Profile, newClientSecret: Bool) {
        guard let old else {
            self.init()
            return
        }
        let otherClient = old.userPoolID != new.userPoolID || old.clientID != new.clientID
        let endsSession =
            otherClient || old.endpointURL != new.endpointURL || old.domain != new.domain || old.effectiveGrant != new.effectiveGrant
        let otherCredentials =
            old.identityPoolID != new.identityPoolID || old.roleARN != new.roleARN || old.basicFlow != new.basicFlow
        self.init(
            endsSession: endsSession,
            dropsAWSCredentials: !endsSession && otherCredentials,
            dropsClientSecret: old.clientSecretInKeyring == true && otherClient && !newClientSecret)
    }
}

/// What a change does with the app client secret.
public enum ClientSecretEdit: Sendable, Equatable {
    /// Whatever is stored stays, unless the change drops it.
    case keep
    /// A new secret, stored with the change.
    case store(String)
    /// The stored secret goes (an app client without one).
    case remove
}

extension ConfiguredProfiles {
    /// Saves `profile` as `name` (replacing `old`, nil for a new profile)
    /// and carries out `change`: the items the old settings leave behind go
    /// first, then the config is written. Returns how many of the old
    /// session's items were deleted.
    public func save(_ name: String, _ profile: Profile, replacing old: Profile?, change: ProfileChange, clientSecret: ClientSecretEdit)
        throws -> Int
    {
        // The profile's items, under its lock: the old settings' when there were any.
        let session = items(name, old ?? profile)
        var profile = profile
        if change.dropsClientSecret { profile.clientSecretInKeyring = nil }
        switch clientSecret {
        case .store(let secret):
            // The secret goes to the keyring before the config says it is
            // there, so the config never points at a secret that was not
            // stored. An agent keeps items only for the profiles, pools and
            // clients its machine configures (AgentService): a profile new
            // to the file, or pointed at another pool or client, is saved
            // first without it, and put back as it was if the secret cannot
            // be stored, so a failure changes nothing.
            let savedFirst = old.map { $0.binding != profile.binding } ?? true
            if savedFirst {
                var first = profile
                first.clientSecretInKeyring = nil
                try write(name, first)
            }
            do {
                try store.write(
                    .clientSecret, profile: name, secret: secret,
                    context: ItemContext(userPoolID: profile.userPoolID, clientID: profile.clientID, username: nil))
            } catch {
                if savedFirst { try? write(name, old) }
                throw error
            }
            profile.clientSecretInKeyring = true
        case .remove:
            try store.delete(.clientSecret, profile: name)
            profile.clientSecretInKeyring = nil
        case .keep where change.dropsClientSecret:
            // Bound to the old client in the keyring, so never read for the
            // new one even if it cannot be deleted now.
            do {
                try store.delete(.clientSecret, profile: name)
            } catch {
                warn("cog-cred: warning: the old app client secret could not be deleted (\(error.message)); it will not be used")
            }
        case .keep: break
        }
        // Stored items are bound to their pool and client, so a keyring that
        // cannot be reached now (locked, absent) leaves items that are never
        // used: say so and go on.
        if change.dropsAWSCredentials {
            for kind in [SecretKind.awsCredentials, .identityID] { _ = try? store.delete(kind, profile: name) }
        }
        var tokensDeleted = 0
        if change.endsSession {
            do {
                tokensDeleted = try session.deleteItems(forgettingDevice: true)
            } catch let failure as SecretServiceError {
                warn("cog-cred: warning: the old tokens could not be deleted (\(failure.message)); they will not be used")
            }
        }
        try write(name, profile)
        // A new endpoint may offer what the old one lacked: learn it again.
        refreshMemory.forget(profile: name)
        return tokensDeleted
    }

    /// The config file with `profile` as `name` (nil: none), the others as they are now.
    func write(_ name: String, _ profile: Profile?) throws {
        var file = try config.load()
        file.profiles[name] = profile
        try config.save(file)
    }
}
