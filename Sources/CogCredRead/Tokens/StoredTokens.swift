/// A profile's stored tokens, read for handing out: one round of Secret
/// Service calls, each token checked against the profile and the freshness
/// policy. The read path of every command that hands out a token, in the
/// front binary and in cog-cred-cli alike, so the two cannot disagree.
///
/// Generic over the store and the clock rather than holding `any TokenStore`:
/// the front is also built as Embedded Swift, which has no existentials.
public struct StoredTokens<Store: TokenStore, Time: Clock>: Sendable {
    public let profileName: String
    public let binding: ItemBinding
    let store: Store
    let clock: Time

    public init(profileName: String, profile: Profile, store: Store, clock: Time) {
        self.profileName = profileName
        binding = profile.binding
        self.store = store
        self.clock = clock
    }

    /// The tokens of `kinds`, when every one is stored, bound to the
    /// profile's pool and client, well formed, and has more than the
    /// policy's margin left; nil when any of them needs a refresh (or a
    /// sign-in: the refresh finds that out). Throws when the stored session
    /// belongs to another pool or client.
    public func usable(_ kinds: [SecretKind], policy: RefreshPolicy) throws(StoredTokensError) -> [SecretKind: IssuedToken]? {
        let stored: [SecretKind: StoredSecret]
        do { stored = try store.read(kinds, profile: profileName, binding: binding) } catch { throw .store(error) }
        var tokens: [SecretKind: IssuedToken] = [:]
        for kind in kinds {
            switch stored[kind] ?? .absent {
            case .boundElsewhere(let unbound):
                throw .session(.boundElsewhere(profile: profileName, unbound: unbound))
            case .absent, .withheld:
                return nil
            case .found(let value):
                // Unreadable (written by something else): a refresh replaces it.
                guard let token = IssuedToken(value) else { return nil }
                guard token.claims.isIssued(to: binding, as: kind) else {
                    throw .session(.boundElsewhere(profile: profileName, unbound: false))
                }
                guard policy.isUsable(token.claims, now: clock.now()) else { return nil }
                tokens[kind] = token
            }
        }
        return tokens
    }
}

extension StoredTokens where Time == SystemClock {
    public init(profileName: String, profile: Profile, store: Store) {
        self.init(profileName: profileName, profile: profile, store: store, clock: SystemClock())
    }
}

/// Why stored tokens could not be read for handing out (typed: Embedded
/// Swift has no `any Error`).
public enum StoredTokensError: Error, Equatable {
    /// The Secret Service could not answer.
    case store(SecretServiceError)
    /// The stored session belongs to another pool or client.
    case session(StoredSessionError)
}

/// The stored session cannot be used for this profile as it is configured.
public enum StoredSessionError: CogCredFailure, Equatable {
    /// The items (or the tokens in them) were issued by another user pool or
    /// app client than the profile names now; `unbound` when they were saved
    /// by cog-cred 0.1, which did not record either.
    case boundElsewhere(profile: String, unbound: Bool)

    public var category: FailureCategory { .notAuthenticated }

    public var message: String {
        switch self {
        case .boundElsewhere(let profile, false):
            return "this profile now names another user pool or app client than the stored tokens: sign in again (cog-cred sign-in\(profileFlag(profile)))"
        case .boundElsewhere(let profile, true):
            return "the stored tokens were saved by cog-cred 0.1, which did not record their user pool and app client: sign in again (cog-cred sign-in\(profileFlag(profile)))"
        }
    }
}
