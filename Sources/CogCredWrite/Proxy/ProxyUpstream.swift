import CogCredRead

/// Where `cog-cred proxy` sends every request: one origin, and a base path
/// each request's own path and query are appended to. Its rule is the
/// endpoints': https, or plain http to this machine only.
public struct ProxyUpstream: Sendable, Equatable {
    /// The URL requests are appended to: scheme, host, port and the base
    /// path without its trailing `/`.
    let base: String
    /// The URL as it may be shown (it holds no user name or password).
    public let shown: String
    /// Plain http (to this machine).
    let cleartext: Bool

    public enum Problem: Error, Sendable, Equatable {
        /// libcurl cannot read it (its words; the URL is not shown).
        case unreadable(String)
        /// Neither http nor https.
        case notHTTP(scheme: String)
        /// Plain http to another machine: every token would cross the network in the clear.
        case cleartextToAnotherHost
        /// A user name or password: the proxy sends its own Authorization.
        case userinfo
        /// A query or fragment, which no request's own could be added to.
        case queryOrFragment
    }

    public init(_ text: String) throws(Problem) {
        let url: LibcurlURL
        switch LibcurlURL.parse(text) {
        case .success(let parsed): url = parsed
        case .failure(let unreadable): throw .unreadable(unreadable.reason)
        }
        guard url.scheme == "https" || url.scheme == "http" else { throw .notHTTP(scheme: url.scheme) }
        guard !url.hasUserinfo else { throw .userinfo }
        guard url.shown == url.shownWithoutQuery, !text.contains("#") else { throw .queryOrFragment }
        guard url.scheme == "https" || isLoopbackHost(url.host) else { throw .cleartextToAnotherHost }
        var base = url.shownWithoutQuery
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        shown = url.shownWithoutQuery
        cleartext = url.scheme == "http"
    }

    /// The upstream's URL for a request's target (its path and query, as the
    /// client sent them: they start with `/`).
    func url(for target: String) -> String { base + target }
}
