import Testing
@testable import CogCredWrite
@testable import CogCredRead

/// The route to a URL by libcurl's rules (its url.c `detect_proxy` and
/// noproxy.c), the proxy named without its credentials, and what a
/// proxy's refusal or absence is worth.
@Suite struct ProxySettingsTests {
    func route(_ url: String, _ environment: [String: String]) throws -> ProxyRoute {
        try ProxySettings(environment: environment).route(for: url)
    }

    @Test func eachSchemeTakesItsOwnVariableThenAllProxy() throws {
        let all = ["https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:2", "http_proxy": "http://plain:3",
                   "HTTP_PROXY": "http://cgi:4", "all_proxy": "http://all:5", "ALL_PROXY": "http://ALL:6"]
        #expect(try route("https://cognito-idp.us-east-1.amazonaws.com/", all).proxy?.variable == "https_proxy")
        #expect(try route("https://x/", all.filter { $0.key != "https_proxy" }).proxy?.shown == "http://upper:2")
        #expect(try route("http://127.0.0.1:5000/", all).proxy?.variable == "http_proxy")
        // HTTP_PROXY is never read (a CGI request's Proxy: header sets it).
        #expect(try route("http://127.0.0.1:5000/", all.filter { $0.key != "http_proxy" }).proxy?.variable == "all_proxy")
        #expect(try route("http://h/", ["HTTP_PROXY": "http://cgi:4"]) == .direct(exempted: nil))
        #expect(try route("https://x/", ["ALL_PROXY": "socks5h://s:1080"]).proxy?.shown == "socks5h://s:1080")
        // An empty variable counts as unset.
        #expect(try route("https://x/", ["https_proxy": "", "HTTPS_PROXY": "http://upper:2"]).proxy?.variable == "HTTPS_PROXY")
        #expect(try route("https://x/", [:]) == .direct(exempted: nil))
    }

    @Test func theProxyIsShownWithoutItsUserOrPassword() throws {
        let proxy = try #require(try route("https://x/", ["HTTPS_PROXY": "http://us%40er:p%3Ass%40word@proxy.example:3128/"]).proxy)
        #expect(proxy.shown == "http://proxy.example:3128")
        #expect(proxy.setting == "http://us%40er:p%3Ass%40word@proxy.example:3128/")
        #expect(!proxy.shown.contains("us") || !proxy.shown.contains("word"))
        // libcurl's defaults: no scheme is http, its port 1080; https's 443.
        #expect(try route("https://x/", ["HTTPS_PROXY": "user:secret@proxy.example"]).proxy?.shown == "http://proxy.example:1080")
        #expect(try route("https://x/", ["HTTPS_PROXY": "HTTPS://proxy.example"]).proxy?.shown == "https://proxy.example:443")
        #expect(try route("https://x/", ["HTTPS_PROXY": "http://[::1]:8080"]).proxy?.shown == "http://[::1]:8080")
        #expect(ProxyRoute.through(try #require(try route("https://x/", ["HTTPS_PROXY": "http://u:p@h:1"]).proxy)).described
            == "through the proxy http://h:1 (from HTTPS_PROXY)")
    }

    @Test(arguments: ["ftp://proxy:21", "http://proxy:0", "http://proxy:99999", "http://:3128", "http://proxy:port", "http://[::1"])
    func aSettingLibcurlCannotUseIsRefusedNamingItsVariable(_ setting: String) {
        #expect(throws: ProxySettingError.self) { try route("https://x/", ["HTTPS_PROXY": "secret@" + setting]) }
        do {
            _ = try route("https://x/", ["HTTPS_PROXY": setting])
        } catch let error as ProxySettingError {
            #expect(error.variable == "HTTPS_PROXY")
            #expect(!error.problem.contains("secret"))
        } catch {
            Issue.record("\(error)")
        }
    }

    /// (NO_PROXY, host, exempted) from libcurl's own cases (tests/unit/unit1614.c).
    static let exemptions: [(String, String, Bool)] = [
        ("*", "anything.example", true),
        ("example.com", "example.com", true),
        ("example.com", "www.example.com", true),
        ("example.com", "nonexample.com", false),
        (".example.com", "www.example.com", true),
        (".example.com", "example.com", true),
        ("example.com.", "www.EXAMPLE.com.", true),
        ("foo, bar ,example.com", "example.com", true),
        ("foo bar\texample.com", "example.com", true),
        ("example.com", "example.com.evil", false),
        ("localhost", "127.0.0.1", false),
        ("127.0.0.1", "127.0.0.1", true),
        ("127.0.0.0/8", "127.1.2.3", true),
        ("10.0.0.0/8", "127.0.0.1", false),
        ("192.168.0.0/16,::1", "::1", true),
        ("::1", "127.0.0.1", false),
        ("fe80::/10", "fe80::1", true),
        ("fe80::/10", "fec0::1", false),
        ("127.0.0.1/33", "127.0.0.1", false),
        ("*.example.com", "www.example.com", false),
    ]

    @Test(arguments: exemptions.indices)
    func noProxyMatchesAsLibcurlDoes(_ index: Int) {
        let (list, host, exempted) = Self.exemptions[index]
        #expect(ProxySettings.exempts(list, host: host) == exempted, "NO_PROXY=\(list) host \(host)")
    }

    @Test func noProxyIsReadLowercaseFirstAndALoopbackAddressIsProxiedUnlessNamed() throws {
        let proxy = ["http_proxy": "http://p:1"]
        #expect(try route("http://127.0.0.1:5000/", proxy).proxy != nil)
        #expect(try route("http://127.0.0.1:5000/", proxy.merging(["NO_PROXY": "127.0.0.1"]) { $1 }) == .direct(exempted: "NO_PROXY"))
        #expect(try route("http://127.0.0.1:5000/", proxy.merging(["no_proxy": "other", "NO_PROXY": "127.0.0.1"]) { $1 }).proxy != nil)
        #expect(try route("http://[::1]:5000/", proxy.merging(["no_proxy": "::1"]) { $1 }) == .direct(exempted: "no_proxy"))
        #expect(ProxyRoute.direct(exempted: "no_proxy").described == "direct (no_proxy names the host)")
    }

    @Test func aRequestCarriesItsRouteAndABadSettingStopsItBeforeSending() throws {
        let transport = RecordingTransport()
        let connection = Connection(
            transport: transport, timeouts: Timeouts(connect: 1, request: 1, command: 5), deadline: Deadline(secondsFromNow: 5),
            proxies: ProxySettings(environment: ["HTTPS_PROXY": "http://u:p@proxy:3128"]))
        _ = try connection.post(allowsCleartext: false).send("https://cognito/", headers: [], body: .init(), repeatable: true)
        #expect(transport.requests.map(\.route)
            == [.through(Proxy(setting: "http://u:p@proxy:3128", shown: "http://proxy:3128", variable: "HTTPS_PROXY", givesCredentials: true))])

        let refused = Connection(
            transport: transport, timeouts: Timeouts(connect: 1, request: 1, command: 5), deadline: Deadline(secondsFromNow: 5),
            proxies: ProxySettings(environment: ["HTTPS_PROXY": "gopher://proxy"]))
        #expect(throws: CognitoError.self) { try refused.post(allowsCleartext: false).send("https://cognito/", headers: [], body: .init(), repeatable: true) }
        #expect(transport.requests.count == 1)
    }

    @Test func aProxysRefusalIsConfigurationAndNeverRetriedItsAbsenceIsTemporary() {
        let proxy = Proxy(setting: "http://u:p@proxy:3128", shown: "http://proxy:3128", variable: "HTTPS_PROXY", givesCredentials: true)
        let refusal = CognitoError.transport(TransportError(.proxyRefused, "CONNECT tunnel failed, response 407", nothingSent: true, proxy: proxy))
        #expect(!RetryingPost.retries(refusal, repeatable: true))
        #expect(!refusal.isTemporary)
        let (category, explanation) = AuthError.reading(refusal, .refresh(profile: "work"))
        #expect(category == .configuration)
        #expect(explanation.problem.hasPrefix("the proxy http://proxy:3128 (from HTTPS_PROXY) refused the user name and password HTTPS_PROXY gives"))
        #expect(!explanation.problem.contains("u:p"))
        let none = Proxy(setting: "http://proxy:3128", shown: "http://proxy:3128", variable: "HTTPS_PROXY")
        #expect(CognitoError.transport(TransportError(.proxyRefused, "407", nothingSent: true, proxy: none)).summary
            .hasPrefix("the proxy http://proxy:3128 (from HTTPS_PROXY) asks for a user name and password, and HTTPS_PROXY gives none"))

        let absent = CognitoError.transport(TransportError(.proxyUnreachable, "Failed to connect to proxy port 3128", nothingSent: true, proxy: proxy))
        #expect(RetryingPost.retries(absent, repeatable: false))
        #expect(AuthError.reading(absent, .refresh(profile: "work")).category == .temporary)
        #expect(absent.summary.hasPrefix("cannot reach the proxy http://proxy:3128 (from HTTPS_PROXY)"))

        // An agent's: its clients' shells may set no proxy at all.
        guard case .through(let agents)? = try? ProxySettings(environment: ["HTTPS_PROXY": "http://u:p@proxy:3128"], agents: true)
            .route(for: "https://cognito-idp.eu-west-1.amazonaws.com/")
        else { Issue.record("no proxy"); return }
        let theirs = CognitoError.transport(TransportError(.proxyRefused, "407", nothingSent: true, proxy: agents))
        let (_, said) = AuthError.reading(theirs, .refresh(profile: "work"))
        #expect(said.problem.hasPrefix("the agent's proxy http://proxy:3128 (its HTTPS_PROXY) refused the user name and password the agent's HTTPS_PROXY gives"))
        #expect(said.nextStep == .checkProxy(variable: "the agent's HTTPS_PROXY"))
    }
}

/// A transport that answers 200 `{}` and keeps what it was asked.
final class RecordingTransport: HTTPTransport, @unchecked Sendable {
    private(set) var requests: [HTTPRequest] = []
    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        requests.append(request)
        return HTTPResponse(status: 200, body: .init("{}".utf8))
    }
}
