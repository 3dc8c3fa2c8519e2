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
