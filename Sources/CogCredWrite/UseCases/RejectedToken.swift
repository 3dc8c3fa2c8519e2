// A token a server rejected (the git and docker helpers' `erase`): the
// next request for one refreshes.

extension TokenManager {
    /// Deletes the stored access token and keeps the refresh token, so the
    /// next token handed out is a new one. With `onlyIf`, only when the
    /// stored token is the one it names (git says which credential it
    /// rejected; a token refreshed since was never rejected). Returns
    /// whether one was deleted.
    @discardableResult
    public func forgetAccessToken(onlyIf rejected: ((String) -> Bool)? = nil) throws(SecretServiceError) -> Bool {
        if let rejected {
            guard let stored = try store.read(.access, profile: profileName), rejected(stored) else { return false }
        }
        return try store.delete(.access, profile: profileName)
    }
}
