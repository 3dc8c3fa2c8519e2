/// The docker-credential-helpers protocol: the action as the argument, the
/// server URL (or a JSON credential) on stdin, JSON or a message on stdout.
public enum DockerCredential {
    /// The protocol's own words for "not mine", which docker recognises.
    public static let notFound = "credentials not found in native keychain"

    /// `registry.example.com`, `https://registry.example.com/v2/` and
    /// `registry.example.com:5000` all name a registry by host[:port].
    public static func registryHost(_ serverURL: String) -> String {
        var text = serverURL.trimmingWhitespace().lowercased()
        if let scheme = text.firstByteRange(of: "://") { text = String(text[scheme.upperBound...]) }
        if let slash = text.firstIndex(of: "/") { text = String(text[..<slash]) }
        return text
    }

    /// The answer to `get`: the access token as the secret.
    public static func answer(serverURL: String, token: IssuedToken) -> String {
        Credential(serverURL: serverURL, username: token.claims.subjectName ?? "cognito", secret: token.value).json.compactText
    }

    /// The answer to `list`: every mapped registry and whose it is.
    public static func list(_ config: ConfigFile) -> String {
        var registries: [String: String] = [:]
        for (name, profile) in config.profiles {
            let who = profile.username ?? name
            for host in profile.dockerRegistries ?? [] { registries[host] = who }
        }
        return JSONValue.object(registries.mapValues { .string($0) }).compactText
    }

    /// The server URL `get` and `erase` are given on standard input.
    public static func serverURL(_ input: [UInt8]) -> String {
        String(decoding: input, as: UTF8.self).trimmingWhitespace()
    }

    /// `{"ServerURL", "Username", "Secret"}`, as `get` prints and `store` reads it.
    public struct Credential: Sendable, Equatable {
        public var serverURL: String
        public var username: String
        public var secret: String

        public init(serverURL: String, username: String, secret: String) {
            self.serverURL = serverURL
            self.username = username
            self.secret = secret
        }

        /// What `store` was given, if it is such an object.
        public init?(_ bytes: [UInt8]) {
            guard let json = JSONValue.parse(bytes), let fields = try? JSONFields(json, path: []),
                let serverURL = try? fields.string("ServerURL"), let username = try? fields.string("Username"),
                let secret = try? fields.string("Secret")
            else { return nil }
            self.init(serverURL: serverURL, username: username, secret: secret)
        }

        var json: JSONValue {
            .object(["ServerURL": .string(serverURL), "Username": .string(username), "Secret": .string(secret)])
        }
    }
}

/// What the docker helper protocol needs of cog-cred (docker-credential-helpers'
/// `Helper`): the request's bytes, the profile mapped to a registry, its
/// access token, forgetting it, and the config to list. `Failure` is the
/// store's own (none for the front, which hands the request over instead).
public protocol DockerCredentialStore {
    associatedtype Failure: Error
    /// Standard input, at most `limit` bytes.
    func input(limit: Int) throws(Failure) -> [UInt8]
    /// A refusal the protocol answers on stdout with exit status 1, as this store fails with it.
    func refused(_ refusal: DockerCredential.Refusal) -> Failure
    /// The profile that answers for the registry of `serverURL`; nil: none.
    func profile(forServerURL serverURL: String) throws(Failure) -> String?
    /// A fresh access token of the profile that answers for the registry
    /// of `serverURL` (where the configuration is at hand: that profile's
    /// `accessToken`; an agent's own); nil: none does.
    func token(forServerURL serverURL: String) throws(Failure) -> IssuedToken?
    /// Forgets the access token of `profile`: the next get refreshes.
    func forgetAccessToken(profile: String) throws(Failure)
    /// The profiles, for `list`.
    func config() throws(Failure) -> ConfigFile
    /// `version`'s answer.
    func version() throws(Failure) -> String
}

extension DockerCredential {
    /// The actions docker runs a helper with.
    public enum Action: String, CaseIterable, Sendable {
        case get, store, erase, list, version
    }

    /// What the protocol refuses, with a message on stdout and exit status 1.
    public enum Refusal: Sendable, Equatable {
        /// No profile maps the registry: the protocol's "credentials not found".
        case notFound
        /// `store` was not given `{"ServerURL", "Username", "Secret"}`.
        case notACredential
        /// `store` for a registry no profile maps: cog-cred keeps only its own tokens.
        case registryNotMapped
        case unknownAction(String)
    }

    /// One action of the protocol over `store`: the text for standard output.
    public static func handle<Store: DockerCredentialStore>(_ action: String, _ store: Store) throws(Store.Failure) -> String {
        guard let action = Action(rawValue: action) else { throw store.refused(.unknownAction(action)) }
        switch action {
        case .get, .erase:
            let serverURL = serverURL(try store.input(limit: 65536))
            if action == .get {
                guard let token = try store.token(forServerURL: serverURL) else { throw store.refused(.notFound) }
                return answer(serverURL: serverURL, token: token) + "\n"
            }
            guard let profile = try store.profile(forServerURL: serverURL) else { throw store.refused(.notFound) }
            try store.forgetAccessToken(profile: profile)
            return ""
        case .store:
            // Only checked: the tokens are Cognito's, never the ones docker was given.
            guard let credential = Credential(try store.input(limit: 1 << 20)) else { throw store.refused(.notACredential) }
            guard try store.profile(forServerURL: credential.serverURL) != nil else { throw store.refused(.registryNotMapped) }
            return ""
        case .list:
            return list(try store.config()) + "\n"
        case .version:
            return try store.version() + "\n"
        }
    }
}
