/// Which of a profile's secrets an item holds. The raw value is the `kind`
/// attribute in the Secret Service, part of the storage contract.
public enum SecretKind: String, Sendable, CaseIterable {
    case access
    case id
    case refresh
    /// The app client's secret, for clients that have one. Configuration
    /// rather than session: sign-out leaves it.
    case clientSecret = "client-secret"

    /// Words for labels and messages.
    public var displayName: String {
        switch self {
        case .access: return "access token"
        case .id: return "ID token"
        case .refresh: return "refresh token"
        case .clientSecret: return "client secret"
        }
    }
}

/// Non-secret facts stored beside a token as attributes, so a person browsing
/// the keyring can tell items apart. Never a secret: attributes are not encrypted.
public struct ItemContext: Sendable, Equatable {
    public var userPoolID: String
    public var clientID: String
    public var username: String?

    public init(userPoolID: String, clientID: String, username: String?) {
        self.userPoolID = userPoolID
        self.clientID = clientID
        self.username = username
    }
}

/// Where a profile's tokens are kept. "Not found" is nil; a store that cannot
/// answer throws.
public protocol TokenStore: Sendable {
    func read(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> String?
    func write(_ kind: SecretKind, profile: String, secret: String, context: ItemContext) throws(SecretServiceError)
    /// Removes the item; true if one existed.
    @discardableResult
    func delete(_ kind: SecretKind, profile: String) throws(SecretServiceError) -> Bool
}
