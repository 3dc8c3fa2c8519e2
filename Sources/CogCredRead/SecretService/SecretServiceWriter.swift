/// The Secret Service calls that may meet a provider's prompt: creating,
/// replacing and deleting items, and unlocking. cog-cred-cli makes them
/// through libsecret (CogCredWrite's `LibsecretWriter`), which follows every
/// prompt a provider returns, as the providers expect of their clients
/// (KeePassXC answers CreateItem and Delete with a prompt even when its
/// database is open). The front never writes and has none: its reads go
/// over libdbus-1, and anything locked is handed to cog-cred-cli.
public protocol SecretServiceWriter: AnyObject, Sendable {
    /// Creates the item in the default collection (beside any with the same
    /// attributes, which the store then deletes; a provider that can is
    /// asked to update such an item in place instead); its path.
    func createItem(label: String, attributes: [(String, String)], secret: String, timeout: Int32) throws(SecretServiceError)
        -> String
    /// The items of the default collection whose attributes include these.
    func items(matching attributes: [(String, String)], timeout: Int32) throws(SecretServiceError)
        -> (unlocked: [String], locked: [String])
    func deleteItem(_ path: String, timeout: Int32) throws(SecretServiceError)
    /// Unlocks the default collection and its locked items that match
    /// `attributes`, through the provider's prompt, waiting at most
    /// `seconds`; true when nothing stays locked.
    func unlock(matching attributes: [(String, String)], waitingAtMost seconds: Int32) throws(SecretServiceError) -> Bool
    /// Connects and opens the session on another thread, so that the writes
    /// after a network call do not wait for them (libsecret's encrypted
    /// session costs a Diffie-Hellman exchange on both sides, about 5 ms).
    /// A failure here is met again, and reported, by the write.
    func prepare()
    /// Whether the provider's searches list a locked collection's items (as
    /// locked) rather than hide them, as far as this connection has learnt:
    /// then finding none means there are none.
    var listsLockedItems: Bool { get }
    /// Whether the default collection itself is locked now; nil when that
    /// cannot be told.
    func defaultCollectionLocked() -> Bool?
    /// Forgets the connection and session, for a daemon that restarted.
    func reset()
}
