/// git's credential helper protocol (gitcredentials(7), git-credential(1)),
/// as of git 2.46: key=value lines in, key=value lines out. Streams and
/// values only; choosing and refreshing the token is the caller's job.
public enum GitCredential {
    /// git's own limit for one line of the protocol.
    public static let maxLineLength = 65535

    /// What git sent: the attributes in order, plus the capabilities it announced.
    public struct Request: Sendable, Equatable {
        public var attributes: [(key: String, value: String)]

        public init(attributes: [(key: String, value: String)]) {
            self.attributes = attributes
        }

        public static func == (a: Request, b: Request) -> Bool {
            a.attributes.map { $0.key } == b.attributes.map { $0.key } && a.attributes.map { $0.value } == b.attributes.map { $0.value }
        }

        /// The last value of a key, as git itself reads repeated keys.
        public func value(_ key: String) -> String? {
            attributes.last(where: { $0.key == key })?.value
        }

        /// `capability[]=...` lines.
        public var capabilities: Set<String> {
            Set(attributes.filter { $0.key == "capability[]" }.map { $0.value })
        }

        /// protocol, host and path, from those keys or from `url=`.
        public var target: (scheme: String, host: String, path: String?)? {
            if let scheme = value("protocol"), let host = value("host") {
                return (scheme.lowercased(), host.lowercased(), value("path"))
            }
            guard let url = value("url"), let parsed = URLPattern(url) else { return nil }
            return (parsed.scheme, parsed.host, parsed.path.isEmpty ? nil : parsed.path)
        }
    }

    /// Malformed input: exit 65, nothing changed.
    public enum ParseError: CogCredFailure, Equatable {
        case nulByte(line: Int)
        case lineTooLong(line: Int)
        case missingEquals(line: Int)

        public var category: FailureCategory { .dataError }

        public var message: String {
            switch self {
            case .nulByte(let line): return "git credential input line \(line) contains a NUL byte"
            case .lineTooLong(let line): return "git credential input line \(line) is longer than \(GitCredential.maxLineLength) bytes"
            case .missingEquals(let line): return "git credential input line \(line) is not key=value"
            }
        }
    }

    /// Parses lines up to a blank line or the end. Unknown keys are kept
    /// (and ignored by callers), so newer git keeps working.
    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> Request {
        var attributes: [(key: String, value: String)] = []
        var lineNumber = 0
        var start = 0
        while start < bytes.count {
            lineNumber += 1
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            // A carriage return stays in its value, to be refused there
            // (Refusal.controlCharacter), never read as the end of a line.
            let line = bytes[start..<end]
            start = end + 1
            if line.count > maxLineLength { throw .lineTooLong(line: lineNumber) }
            if line.contains(0) { throw .nulByte(line: lineNumber) }
            if line.isEmpty { break }
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { throw .missingEquals(line: lineNumber) }
            attributes.append(
                (String(decoding: line[line.startIndex..<equals], as: UTF8.self),
                 String(decoding: line[(equals + 1)...], as: UTF8.self)))
        }
        return Request(attributes: attributes)
    }

    /// The answer to `get` for `request`: a Bearer credential when git
    /// announced the authtype capability, else username and password.
    public static func answer(_ request: Request, token: IssuedToken) -> String {
        answer(token: token, username: token.claims.subjectName ?? "cognito", bearer: request.capabilities.contains("authtype"))
    }

    /// The profile that answers `request`: the one named on the command
    /// line, else the one whose git URL patterns match; nil for a host no
    /// profile was set up for, so that a helper set globally never hands a
    /// Cognito token to a server it was not told about.
    public static func profile(for request: Request, named: String?, in config: ConfigFile) -> String? {
        if let named { return named }
        guard let target = request.target else { return nil }
        return config.profile(forGit: target.scheme, host: target.host, path: target.path)
    }

    /// What `get` answers a request with.
    public enum Lookup {
        /// No profile answers for the host: git asks its next helper, in
        /// silence (a helper set for every host is asked about every server).
        case none
        /// A profile answers, and may not have its token go there (said once).
        case declined(Refusal)
        case token(IssuedToken)
    }

    /// What a store with the profiles' configuration at hand answers
    /// `request` with: the profile named (`--profile`), else the one whose
    /// git URLs match, held to the helper's rules (`refusal`) with its own
    /// git URLs; its token from `token`.
    public static func lookup<Failure: Error>(
        _ request: Request, named: String?, in config: ConfigFile, token: (String) throws(Failure) -> IssuedToken
    ) throws(Failure) -> Lookup {
        guard let profile = profile(for: request, named: named, in: config) else { return .none }
        if let refusal = refusal(of: request, profile: profile, patterns: config.profiles[profile]?.gitURLs) { return .declined(refusal) }
        return .token(try token(profile))
    }

    /// The answer to `get`. With the authtype capability: a Bearer
    /// credential that git must not store (ephemeral); otherwise
    /// username/password, with the token's own expiry so git's storage
    /// helpers drop it in time.
    public static func answer(token: IssuedToken, username: String, bearer: Bool) -> String {
        if bearer {
            return "capability[]=authtype\nauthtype=Bearer\ncredential=\(token.value)\nephemeral=true\n"
        }
        var text = "username=\(username)\npassword=\(token.value)\n"
        if let exp = token.claims.exp { text += "password_expiry_utc=\(exp)\n" }
        return text
    }

    /// The answer to the `capability` action.
    public static let capabilityAnswer = "version 0\ncapability authtype\n"

    /// Why `get` hands no token to what git asks about, though a profile
    /// answers for it: git then asks its next helper, and the reason is
    /// said on stderr, once. A token goes only to a host git named, over
    /// https (plain http only to this machine, as for Cognito's endpoint),
    /// in values that cannot smuggle another line past a helper that reads
    /// a carriage return as one (CVE-2024-52006), and within the profile's
    /// own `git-url` patterns when it has any.
    public enum Refusal: Sendable, Equatable {
        case noHost
        /// A value (`key`'s) holding a carriage return, line feed or NUL.
        case controlCharacter(key: String)
        /// A protocol other than https, to another machine.
        case notHTTPS(scheme: String, host: String)
        /// A server outside the profile's `git-url` patterns.
        case outsidePatterns(profile: String, scheme: String, host: String)

        /// Found in the values themselves, not in where they point.
        public var isInAValue: Bool {
            if case .controlCharacter = self { return true }
            return false
        }

        public var message: String {
            let why: String
            switch self {
            case .noHost:
                why = "git named no host"
            case .controlCharacter(let key):
                why = "git's \(key.printable) holds a carriage return, line feed or NUL"
            case .notHTTPS(let scheme, let host):
                why = "\(scheme.printable)://\(host.printable) is not https: a token goes over https only (plain http to this machine aside)"
            case .outsidePatterns(let profile, let scheme, let host):
                why = "\(scheme.printable)://\(host.printable) is outside profile \(profile)'s git URLs (cog-cred configure --profile \(profile) --git-url URL)"
            }
            return "cog-cred: no token for git: \(why); git asks its next helper"
        }
    }

    /// Why `request` may not be given a token, whatever the profile; nil: it may.
    public static func refusal(of request: Request) -> Refusal? {
        if let bad = request.attributes.first(where: { $0.value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 } }) {
            return .controlCharacter(key: bad.key)
        }
        guard let target = request.target, !target.host.allSatisfy({ $0 == " " || $0 == "\t" }) else { return .noHost }
        return carriesTokens(scheme: target.scheme, host: target.host) ? nil : .notHTTPS(scheme: target.scheme, host: target.host)
    }

    /// Whether a token may go to `scheme://host` (git's `host=`): over
    /// https, or plain http to this machine.
    public static func carriesTokens(scheme: String, host: String) -> Bool {
        scheme == "https" || (scheme == "http" && isLoopbackHost(hostName(host)))
    }

    /// Why `profile`, with `patterns` (its `git-url`s), may not answer
    /// `request`: a server outside them.
    public static func refusal(of request: Request, profile: String, patterns: [String]?) -> Refusal? {
        if let refusal = refusal(of: request) { return refusal }
        guard let patterns, !patterns.isEmpty, let target = request.target else { return nil }
        let matched = patterns.contains { URLPattern($0)?.matches(scheme: target.scheme, host: target.host, path: target.path) ?? false }
        return matched ? nil : .outsidePatterns(profile: profile, scheme: target.scheme, host: target.host)
    }

    /// `host` of git's `host=` (`name:port`, `[v6]:port`) without its port or brackets.
    static func hostName(_ host: String) -> String {
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") { return String(host[host.index(after: host.startIndex)..<close]) }
        if host.utf8.filter({ $0 == UInt8(ascii: ":") }).count == 1, let colon = host.firstIndex(of: ":") { return String(host[..<colon]) }
        return host
    }

    /// True when an `erase` names the credential we handed out.
    public static func erases(_ request: Request, token: String) -> Bool {
        request.value("password") == token || request.value("credential") == token
    }
}

/// A configured URL pattern such as `https://git.example.com/` or
/// `https://git.example.com:8443/team/`: scheme and host must match; a path
/// prefix is compared only when git sends a path (credential.useHttpPath).
public struct URLPattern: Sendable, Equatable {
    public var scheme: String
    public var host: String
    public var path: String

    public init?(_ text: String) {
        guard let schemeEnd = text.firstByteRange(of: "://") else { return nil }
        scheme = text[..<schemeEnd.lowerBound].lowercased()
        let rest = text[schemeEnd.upperBound...]
        let hostEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var hostPart = rest[..<hostEnd]
        // user@host: the user is not part of what identifies the server.
        if let at = hostPart.lastIndex(of: "@") { hostPart = hostPart[hostPart.index(after: at)...] }
        host = hostPart.lowercased()
        path = String(rest[hostEnd...].drop(while: { $0 == "/" }))
        if scheme.isEmpty || host.isEmpty { return nil }
    }

    public func matches(scheme: String, host: String, path: String?) -> Bool {
        guard scheme == self.scheme, host == self.host else { return false }
        guard let path, !self.path.isEmpty else { return true }
        let prefix = self.path.hasSuffix("/") ? self.path : self.path + "/"
        return path == self.path || (path + "/").hasPrefix(prefix)
    }
}

/// What git's helper protocol needs of cog-cred, as docker-credential-helpers'
/// `Helper` is what its protocol needs of a keychain: the request's bytes,
/// the profile that answers it, that profile's access token, and forgetting
/// it. `Failure` is the store's own (none for the front, which hands the
/// request over instead of failing).
public protocol GitCredentialStore {
    associatedtype Failure: Error
    /// Standard input, read by the actions that take a request.
    func input() throws(Failure) -> [UInt8]
    /// Malformed input, as this store fails on it.
    func malformed(_ error: GitCredential.ParseError) -> Failure
    /// What `get` answers `request` with: the access token of the profile
    /// that answers it (`GitCredential.lookup`, where the configuration is
    /// at hand; an agent's own), nothing, or why not.
    func token(for request: GitCredential.Request) throws(Failure) -> GitCredential.Lookup
    /// Says why no token is handed out (stderr, once).
    func decline(_ refusal: GitCredential.Refusal)
    /// The profile an `erase` of `request` is for; nil: none.
    func profile(for request: GitCredential.Request) throws(Failure) -> String?
    /// Forgets the access token of `profile` if `isIt` says it is the one.
    func forgetAccessToken(profile: String, onlyIf isIt: @escaping (String) -> Bool) throws(Failure)
}

extension GitCredential {
    /// The actions git runs a helper with.
    public enum Action: String, CaseIterable, Sendable {
        case get, store, erase, capability
    }

    /// One action of the protocol over `store`: the text for standard
    /// output. An action this version does not know prints nothing, so that
    /// newer git keeps working.
    public static func handle<Store: GitCredentialStore>(_ action: String, _ store: Store) throws(Store.Failure) -> String {
        guard let action = Action(rawValue: action) else { return "" }
        if action == .capability { return capabilityAnswer }
        let bytes = try store.input()
        let request: Request
        do throws(ParseError) {
            request = try parse(bytes)
        } catch {
            throw store.malformed(error)
        }
        switch action {
        case .get:
            switch try store.token(for: request) {
            case .none: return ""
            case .declined(let refusal):
                store.decline(refusal)
                return ""
            case .token(let token): return answer(request, token: token)
            }
        case .erase:
            // The server rejected our token: the next get refreshes.
            guard let profile = try store.profile(for: request) else { return "" }
            try store.forgetAccessToken(profile: profile, onlyIf: { erases(request, token: $0) })
            return ""
        case .store, .capability:
            // Tokens live in the Secret Service already; nothing to keep.
            return ""
        }
    }
}
