#if canImport(Glibc)
import Glibc
#endif

/// A forward proxy a request goes through: an HTTP proxy (CONNECT for
/// HTTPS, forwarding for plain HTTP), an HTTPS one, or SOCKS.
public struct Proxy: Sendable, Equatable {
    /// The setting as the user gave it, user name and password included:
    /// what libcurl is handed, and nothing else sees.
    let setting: String
    /// `scheme://host:port`, never a user name or password: how every
    /// message, trace and `status` names it.
    public let shown: String
    /// The environment variable it came from (`HTTPS_PROXY`, `all_proxy`…).
    public let variable: String
    /// The setting holds a user name (and password) for the proxy: what a
    /// refusal says was, or was not, given.
    public var givesCredentials = false
    /// The agent's, from the environment it started with: what its
    /// messages to a client (whose shell may set no proxy) say.
    public var agents = false

    /// "the proxy http://proxy.example:3128 (from HTTPS_PROXY)", or the
    /// agent's: "the agent's proxy … (its HTTPS_PROXY)".
    public var named: String { agents ? "the agent's proxy \(shown) (its \(variable))" : "the proxy \(shown) (from \(variable))" }

    /// Where it was set: "HTTPS_PROXY", or "the agent's HTTPS_PROXY".
    public var source: String { agents ? "the agent's \(variable)" : variable }

    /// An HTTP or HTTPS proxy, which takes a plain-HTTP request and sends
    /// it on itself; SOCKS only carries the connection.
    var forwards: Bool { !shown.lowercased().hasPrefix("socks") }
}

/// How one request reaches its URL.
public enum ProxyRoute: Sendable, Equatable {
    /// Straight to the host; `exempted` names the NO_PROXY variable that
    /// exempts it, when one does.
    case direct(exempted: String?)
    case through(Proxy)

    public var proxy: Proxy? {
        if case .through(let proxy) = self { return proxy }
        return nil
    }

    /// "through the proxy http://proxy.example:3128 (from HTTPS_PROXY)", or
    /// "direct" (with the variable that made it so): for the debug trace
    /// and `status`.
    public var described: String {
        switch self {
        case .through(let proxy): return "through \(proxy.named)"
        case .direct(let exempted?): return "direct (\(exempted) names the host)"
        case .direct(nil): return "direct"
        }
    }
}

/// A proxy variable whose value libcurl could not use.
public struct ProxySettingError: Error, Sendable, Equatable {
    public let variable: String
    public let problem: String
}

/// The environment's proxy variables, read by libcurl's rules (its
/// `detect_proxy` and `Curl_check_noproxy`), so that cog-cred goes where
/// curl would and can say where that is: cog-cred decides the route and
/// hands libcurl that proxy or none, and libcurl reads no variable itself.
///
/// - An `https://` URL takes `https_proxy`, then `HTTPS_PROXY`; a plain
///   `http://` one only `http_proxy` (libcurl never reads `HTTP_PROXY`,
///   which a CGI request's `Proxy:` header could set); then `all_proxy`,
///   then `ALL_PROXY`. An empty variable counts as unset.
/// - `no_proxy`, else `NO_PROXY`: `*`, or names and addresses separated by
///   commas or blanks. A name matches itself and its subdomains (a leading
///   or trailing dot aside, in any case); an address matches an address
///   or a CIDR range of its family; ports are not compared. A loopback
///   address is proxied too unless NO_PROXY names it, as in curl.
public struct ProxySettings: Sendable, Equatable {
    let variables: [String: String]
    /// The agent's own (Proxy.agents).
    let agents: Bool

    static let names = ["https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"]

    /// `agents`: the settings of an agent, which its clients' messages name as such.
    public init(environment: [String: String], agents: Bool = false) {
        variables = environment.filter { Self.names.contains($0.key) && !$0.value.isEmpty }
        self.agents = agents
    }

    /// No proxy at all, whatever the environment says.
    public static let none = ProxySettings(environment: [:])

    /// The route to `url` (`http://` or `https://`).
    public func route(for url: String) throws(ProxySettingError) -> ProxyRoute {
        let https = url.lowercased().hasPrefix("https://")
        let candidates = (https ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy"]) + ["all_proxy", "ALL_PROXY"]
        guard let variable = candidates.first(where: { variables[$0] != nil }), let setting = variables[variable] else {
            return .direct(exempted: nil)
        }
        if let (exemptions, list) = ["no_proxy", "NO_PROXY"].lazy.compactMap({ name in self.variables[name].map { (name, $0) } }).first,
            let host = LibcurlURL.host(of: url), ProxySettings.exempts(list, host: host)
        {
            return .direct(exempted: exemptions)
        }
        var proxy = try ProxySettings.proxy(setting, from: variable)
        proxy.agents = agents
        return .through(proxy)
    }

    /// Proxy URL schemes libcurl speaks, with its default port for each
    /// (1080 for an HTTP proxy too: CURL_DEFAULT_PROXY_PORT).
    static let schemes: [String: Int] = [
        "http": 1080, "https": 443, "socks4": 1080, "socks4a": 1080, "socks5": 1080, "socks5h": 1080,
    ]

    /// `[scheme://][user[:password]@]host[:port][/]`, read by libcurl's own
    /// parser (LibcurlURL). A setting it cannot read is never echoed: its
    /// variable is named, with libcurl's reason.
    static func proxy(_ setting: String, from variable: String) throws(ProxySettingError) -> Proxy {
        func refused(_ problem: String) -> ProxySettingError { ProxySettingError(variable: variable, problem: problem) }
        let url: LibcurlURL
        switch LibcurlURL.parse(setting) {
        case .success(let parsed): url = parsed
        case .failure(let unreadable): throw refused("libcurl cannot read it as a proxy URL (\(unreadable.reason))")
        }
        guard let defaultPort = schemes[url.scheme] else {
            throw refused("its scheme is not one libcurl speaks to a proxy (\(schemes.keys.sorted().joined(separator: ", ")))")
        }
        guard !url.host.isEmpty else { throw refused("no proxy host in it") }
        if let port = url.port, !(1...65535).contains(port) { throw refused("the port is not a number from 1 to 65535") }
        let shownHost = url.host.contains(":") ? "[\(url.host)]" : url.host
        return Proxy(setting: setting, shown: "\(url.scheme)://\(shownHost):\(url.port ?? defaultPort)", variable: variable, givesCredentials: url.hasUserinfo)
    }

    /// Whether the NO_PROXY `list` names `host` (a name, or an address
    /// without brackets), by libcurl's rules.
    static func exempts(_ list: String, host: String) -> Bool {
        if list == "*" { return true }
        let family: Int32? = [AF_INET, AF_INET6].first { address($0, host) != nil }
        var name = host.lowercased()
        if family == nil && name.hasSuffix(".") { name.removeLast() }
        for entry in list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            if let family {
                if matches(address: host, family: family, entry: String(entry)) { return true }
                continue
            }
            var token = entry.lowercased()
            if token.hasSuffix(".") { token.removeLast() }
            if token.hasPrefix(".") { token.removeFirst() }
            if token.isEmpty { continue }
            if name == token || name.hasSuffix("." + token) { return true }
        }
        return false
    }

    /// `host` is `entry`, an address of its family, or within `entry`'s CIDR range.
    static func matches(address host: String, family: Int32, entry: String) -> Bool {
        let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let width = family == AF_INET ? 32 : 128
        var bits = width
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...width).contains(given) else { return false }
            bits = given
        }
        guard let a = address(family, host), let b = address(family, String(parts[0])) else { return false }
        for index in 0..<a.count {
            let taken = min(8, max(0, bits - index * 8))
            let mask = taken == 0 ? UInt8(0) : UInt8(truncatingIfNeeded: 0xFF << (8 - taken))
            if a[index] & mask != b[index] & mask { return false }
        }
        return true
    }

    /// The address's bytes, when `text` is an address of `family`.
    static func address(_ family: Int32, _ text: String) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: family == AF_INET ? 4 : 16)
        let read = bytes.withUnsafeMutableBytes { inet_pton(family, text, $0.baseAddress) }
        return read == 1 ? bytes : nil
    }
}
