// Deleting a profile (`configure --delete`): its keyring items, then its
// place in the config.

extension ConfiguredProfiles {
    /// The keyring items first (the session's under the profile's refresh
    /// lock, so a refresh in flight cannot write tokens back; the device
    /// too, and the app client secret), then the config; a keyring that
    /// cannot be reached changes nothing. Returns how many items existed.
    public func delete(_ name: String) throws -> Int {
        var file = try config.load()
        guard let profile = file.profiles[name] else { throw file.notFound(name, path: config.path) }
        var removed = try items(name, profile).deleteItems(forgettingDevice: true)
        if try store.delete(.clientSecret, profile: name) { removed += 1 }
        file.profiles[name] = nil
        try config.save(file)
        refreshMemory.forget(profile: name)
        return removed
    }
}
