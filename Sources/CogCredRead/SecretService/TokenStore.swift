/// Which of a profile's secrets an item holds. The raw value is the `kind`
/// attribute in the Secret Service, part of the storage contract.
public enum SecretKind: String, Sendable, CaseIterable {
    case access
    case id
    case refresh
    /// The app client's secret, for clients that have one. Configuration
    /// rather than session: sign-out leaves it.
    case clientSecret = "client-secret"
    /// The user's identity in the profile's Cognito identity pool.
    case identityID = "identity-id"
    /// Temporary AWS credentials from the identity pool (`AWSCredentials`, as JSON).
    case awsCredentials = "aws-credentials"
    /// This machine as one of the user's devices: its keys and its device
    /// password (`RememberedDevice`, as JSON). Outlives sign-out, as a
    /// remembered device does in Amazon's SDKs.
    case device

    /// Words for labels and messages.
    public var displayName: String {
        switch self {
        case .access: return "access token"
        case .id: return "ID token"
        case .refresh: return "refresh token"
        case .clientSecret: return "client secret"
        case .identityID: return "identity id"
        case .awsCredentials: return "AWS credentials"
        case .device: return "remembered device"
        }
    }
}

/// The user pool and app client a profile's items were issued by. Stored as
/// item attributes (`user-pool-id`, `client-id`), so that items of a profile
/// that now names another pool or client are never handed out or refreshed with.
public struct ItemBinding: Sendable, Equatable {
    public var userPoolID: String
    public var clientID: String

    public init(userPoolID: String, clientID: String) {
        self.userPoolID = userPoolID
        self.clientID = clientID
    }
}

/// Non-secret facts stored with an item: the binding as attributes, the
/// username in the label so a person browsing the keyring can tell items
/// apart. Never a secret: attributes and labels are not encrypted.
public struct ItemContext: Sendable, Equatable {
    public var userPoolID: String
    public var clientID: String
    public var username: String?

    public init(userPoolID: String, clientID: String, username: String?) {
        self.userPoolID = userPoolID
        self.clientID = clientID
        self.username = username
    }

    public var binding: ItemBinding { ItemBinding(userPoolID: userPoolID, clientID: clientID) }
}

/// What a store holds of one kind for a profile.
public enum StoredSecret: Sendable, Equatable {
    case found(String)
    case absent
    /// An item exists, but for another user pool or app client than asked
    /// for; `unbound` when it carries no binding at all (saved by cog-cred
    /// 0.1, which did not bind items).
    case boundElsewhere(unbound: Bool)
    /// The store never hands this kind out (an agent's refresh token,
    /// client secret and devices: AgentProtocol.readable), so whether it
    /// holds one is not said.
    case withheld

    public var value: String? {
        if case .found(let value) = self { return value }
        return nil
    }
}

/// Where a profile's tokens are kept. A store that cannot answer throws.
public protocol TokenStore: Sendable {
    /// What is stored of each of `kinds` for `profile`, asked together. With
    /// a `binding`, only items bound to that pool and client are `found`.
    func read(_ kinds: [SecretKind], profile: String, binding: ItemBinding?) throws(SecretServiceError)
        -> [SecretKind: StoredSecret]
    /// Stores `secret` bound to the context's pool and client, replacing
    /// whatever the profile had of that kind.
    func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError)
    /// The same write with more time for each call, for a secret that exists
    /// nowhere else (a rotated refresh token) when a first write failed.
    /// No default: a conformer whose own version had another signature would
    /// silently get the default instead (it happened: SecretServiceStore's
    /// retries were skipped).
    func writePatiently(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError)
    /// Removes the profile's items of that kind, whatever they are bound to;
    /// true if one existed.
    @discardableResult
    func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool
    /// Called before a call to Cognito whose answer will be stored: the store
    /// may get ready for the writes (open its session) while Cognito answers.
    func prepareWrites()
}

extension TokenStore {
    /// The secret of one kind, bound to `binding` when one is given; nil when there is none.
    public func read(_ kind: SecretKind, profile: String, binding: ItemBinding? = nil) throws(SecretServiceError) -> String? {
        try read([kind], profile: profile, binding: binding)[kind]?.value
    }
}
