import CCurl

/// A URL as libcurl reads it: parsed by its URL API (curl_url), with the
/// flags libcurl itself reads a request's URL and a proxy setting with
/// (a scheme guessed when there is none, any scheme). So where a URL's user
/// name and password end is what libcurl sends, not a guess: a `"`, `'`,
/// `\` or `<` in a password is part of it, and a `#`, `?` or `/` in one makes
/// a URL libcurl refuses, which is then never shown (its setting is named
/// instead).
///
/// Every URL cog-cred prints (status, errors, notes, the debug trace, the
/// browser's address) is `shown`: rebuilt by libcurl without its user name,
/// password and login options. What is sent is left as it is.
public struct LibcurlURL: Sendable, Equatable {
    /// Lowercase; `http` when the text has none (libcurl's guess).
    public let scheme: String
    /// Without an IPv6 address's brackets.
    public let host: String
    /// The port written in the URL, if any.
    public let port: Int?
    /// The URL carries a user name (and perhaps a password).
    public let hasUserinfo: Bool
    /// The user name, password and login options, as written and decoded:
    /// what no message may hold (`scrubbing`).
    let secrets: [String]
    /// The URL without its userinfo.
    public let shown: String
    /// The same without a query or fragment, which could carry something secret too.
    public let shownWithoutQuery: String

    /// Why libcurl cannot read a text as a URL, in libcurl's words (which
    /// never quote the text).
    public struct Unreadable: Error, Sendable, Equatable {
        public let reason: String
    }

    /// `text` as libcurl reads it.
    public static func parse(_ text: String) -> Result<LibcurlURL, Unreadable> {
        guard ccurl_load() != 0 else { return .failure(Unreadable(reason: "libcurl cannot be loaded")) }
        guard let handle = ccurl_url() else { return .failure(Unreadable(reason: "out of memory")) }
        defer { ccurl_url_cleanup(handle) }
        // libcurl's own flags for CURLOPT_URL and CURLOPT_PROXY (url.c).
        let read = ccurl_url_set(handle, CURLUPART_URL, text, UInt32(CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME))
        guard read == CURLUE_OK else { return .failure(Unreadable(reason: String(cString: ccurl_url_strerror(read)))) }

        func part(_ which: CURLUPart, decoded: Bool = false) -> String? {
            var value: UnsafeMutablePointer<CChar>? = nil
            guard ccurl_url_get(handle, which, &value, decoded ? UInt32(CURLU_URLDECODE) : 0) == CURLUE_OK, let value else { return nil }
            defer { ccurl_free(value) }
            return String(cString: value)
        }
        let login = [CURLUPART_USER, CURLUPART_PASSWORD, CURLUPART_OPTIONS]
        let secrets = login.flatMap { [part($0), part($0, decoded: true)] }.compactMap { $0 }.filter { !$0.isEmpty }
        var host = part(CURLUPART_HOST) ?? ""
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let hasUserinfo = part(CURLUPART_USER) != nil

        for which in login { _ = ccurl_url_set(handle, which, nil, 0) }
        guard let shown = part(CURLUPART_URL) else { return .failure(Unreadable(reason: "it cannot be rebuilt")) }
        _ = ccurl_url_set(handle, CURLUPART_QUERY, nil, 0)
        _ = ccurl_url_set(handle, CURLUPART_FRAGMENT, nil, 0)
        return .success(
            LibcurlURL(
                scheme: (part(CURLUPART_SCHEME) ?? "http").lowercased(), host: host, port: part(CURLUPART_PORT).flatMap { Int($0) },
                hasUserinfo: hasUserinfo, secrets: secrets, shown: shown,
                shownWithoutQuery: part(CURLUPART_URL) ?? shown))
    }

    /// The host libcurl connects to for `url`, without user info, port or
    /// an IPv6 address's brackets; nil when libcurl cannot read it. A URL
    /// with no `@` holds no user info, and its host is what lies between
    /// `://` and the first `/`, `?` or `#` (libcurl's own end of a host):
    /// read here without waiting for libcurl to load, which a command
    /// starts on a thread so that it is ready by the first request (a
    /// refresh resolves its endpoint before it reads the keyring).
    public static func host(of url: String) -> String? {
        guard !url.contains("@"), let scheme = url.firstRange(of: "://") else { return try? parse(url).get().host }
        let authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        let host = authority.prefix { $0 != ":" }
        return host.isEmpty ? nil : String(host)
    }

    /// `text`, a URL, as a person may see it (without query and fragment
    /// unless `query`); when libcurl cannot read it, words that say so and
    /// show none of it.
    public static func shown(_ text: String, query: Bool = true) -> String {
        switch parse(text) {
        case .success(let url): return query ? url.shown : url.shownWithoutQuery
        case .failure: return "(a URL libcurl cannot read, not shown)"
        }
    }

    /// `message` (libcurl's, which may echo a host or a setting), unless
    /// it holds any of the user names, passwords or options of `urls`, or
    /// one of them cannot be read (so what it holds is not known): then
    /// `instead`, which holds none.
    static func scrubbing(_ message: String, of urls: [String], instead: @autoclosure () -> String) -> String {
        for url in urls {
            guard case .success(let parsed) = parse(url), !parsed.secrets.contains(where: { message.contains($0) }) else { return instead() }
        }
        return message
    }
}
