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
