import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// The profiles, as kept in `config.json` under the config directory.
///
/// JSON so that a well-tested library (json-c) reads it and `jq` can too. No
/// secrets are ever written here: tokens and client secrets live in the
/// Secret Service.
public struct ConfigFile: Sendable, Equatable {
    public var profiles: [String: Profile]

    public init(profiles: [String: Profile] = [:]) {
        self.profiles = profiles
    }

    /// Parses the file's bytes and validates every profile in it.
    public static func decode(_ bytes: [UInt8], path: String) throws(ConfigError) -> ConfigFile {
        var file = ConfigFile()
        do throws(JSONShapeError) {
            guard let json = JSONValue.parse(bytes) else { throw JSONShapeError("malformed JSON") }
            let root = try JSONFields(json, path: [])
            for (name, value) in try root.object("profiles") {
                file.profiles[name] = try Profile(json: try JSONFields(value, path: ["profiles", name]))
            }
        } catch {
            throw .unreadable(path: path, reason: "not a valid cog-cred config (\(error.text))")
        }
        for (name, profile) in file.profiles {
            if let problem = ProfileValidation.profileNameProblem(name) {
                throw .unreadable(path: path, reason: "profile name '\(name.oneLine(limit: 64))' \(problem)")
            }
            do {
                try profile.validate()
            } catch {
                throw .unreadable(path: path, reason: "profile '\(name)': \(error.message)")
            }
        }
        return file
    }

    /// `name` is not here: the error names a configured profile a typo away.
    public func notFound(_ name: String, path: String) -> ConfigError {
        .profileNotFound(profile: name, path: path, nearest: NearMiss.closest(to: name, in: profiles.keys.sorted()))
    }

    /// The profile whose git URL patterns match, first by name for a stable choice.
    public func profile(forGit scheme: String, host: String, path: String?) -> String? {
        profiles.keys.sorted().first { name in
            (profiles[name]?.gitURLs ?? []).contains { URLPattern($0)?.matches(scheme: scheme, host: host, path: path) ?? false }
        }
    }

    /// The profile that maps a docker registry host.
    public func profile(forRegistry host: String) -> String? {
        profiles.keys.sorted().first { name in
            (profiles[name]?.dockerRegistries ?? []).contains { $0.lowercased() == host }
        }
    }

    /// The file's text: indented, keys sorted, a newline at the end.
    public func encoded() -> [UInt8] {
        let json = JSONValue.object(["profiles": .object(profiles.mapValues { $0.json })])
        return Array((json.prettyText + "\n").utf8)
    }
}

/// Reads and writes the config file at one path.
public struct ConfigStore: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The file's profiles; an absent file is an empty configuration.
    ///
    /// Like ssh with its config (StrictModes): a file that another user can
    /// write, or one in a directory another user can write (up to the home
    /// directory), could point cog-cred at an endpoint of their choosing, so
    /// it is refused rather than read. The file is opened without following
    /// a symbolic link and checked through the open descriptor, so what is
    /// checked is what is read.
    public func load() throws(ConfigError) -> ConfigFile {
        // O_NONBLOCK: a FIFO put in the file's place must not hang the open;
        // it is refused below as not a regular file.
        let fd = clinux_open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return ConfigFile()
            case ELOOP:
                throw .unsafePermissions(
                    path: path,
                    reason: "the config file \(path) is a symbolic link; cog-cred reads only a regular file (copy it there, or point XDG_CONFIG_HOME at the real directory)")
            case let code: throw .unreadable(path: path, reason: String(cString: strerror(code)))
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else { throw .unreadable(path: path, reason: "not a regular file") }
        if info.st_uid != getuid() {
            throw .unsafePermissions(path: path, reason: "the config file \(path) belongs to another user")
        }
        if info.st_mode & 0o022 != 0 {
            throw .unsafePermissions(path: path, reason: "the config file can be written by others; run: chmod go-w \(path)")
        }
        try checkDirectories()
        switch readAll(fd) {
        case .success(let bytes): return try ConfigFile.decode(bytes, path: path)
        case .failure(let error): throw .unreadable(path: path, reason: String(cString: strerror(error.code)))
        }
    }

    /// The directories above the file (`unsafeDirectory`).
    func checkDirectories() throws(ConfigError) {
        let parent = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if let unsafe = unsafeDirectory(from: parent) {
            throw .unsafePermissions(path: unsafe.directory, reason: unsafe.reason(holding: "the config"))
        }
    }

    /// The named profile, or `profileNotFound`.
    public func profile(_ name: String) throws(ConfigError) -> Profile {
        let file = try load()
        guard let profile = file.profiles[name] else { throw file.notFound(name, path: path) }
        return profile
    }

    /// Writes the whole file: a new file beside it, mode 0600, flushed, then
    /// renamed over the old one, so a crash leaves either the old or the new
    /// file and never half of one.
    public func save(_ file: ConfigFile) throws(ConfigError) {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !directory.isEmpty {
            if let problem = makeDirectories(directory, mode: 0o700) {
                throw .unwritable(path: path, reason: problem)
            }
        }
        if let problem = writeAtomically(file.encoded(), to: path, mode: 0o600) {
            throw .unwritable(path: path, reason: problem.reason)
        }
    }
}
