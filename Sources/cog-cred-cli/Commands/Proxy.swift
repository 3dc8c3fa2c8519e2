import ArgumentParser
import CLinux
import CogCredWrite

#if canImport(Glibc)
import Glibc
#endif

/// `cog-cred proxy`: a local reverse proxy that adds a fresh token to every
/// request, for clients that cannot run a helper and processes that outlive
/// a token (docs/proxy.md).
struct Proxy: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        abstract: "Serve a local HTTP proxy to one upstream that adds a fresh token to every request.",
        discussion: """
            For API clients, browsers, package managers and long-running services that cannot \
            run a helper, or outlive a token: point them at the proxy, and each request goes on \
            to --upstream (its path and query appended to the upstream's path) with \
            Authorization: Bearer TOKEN, the client's own Authorization replaced. --id-token \
            sends the ID token; --header NAME puts the raw token in that header instead, with no \
            Authorization. Bodies stream both ways; keep-alive both ways.

            The token comes from the profile's session (or the agent COG_CRED_AGENT names), held \
            at most a second between requests: a sign-out, a lock or a changed profile reaches \
            the proxy within a second; an expired token is refreshed once for all the requests \
            waiting on it. An upstream's 401 to a GET, HEAD or OPTIONS without a body gets one \
            forced refresh and one retry; any other 401 goes back to the client. No token: 401 \
            (not signed in, naming cog-cred sign-in), 503 (the keyring locked) or 502 (the \
            refresh failed), and nothing is sent upstream.

            Its first line on stdout is the address clients use (http://127.0.0.1:PORT, or \
            the socket's path), printed once it listens. It serves until SIGTERM or SIGINT, lets \
            the requests in flight finish (up to 5 s), and exits 0. --listen takes loopback \
            addresses only (127.0.0.1 or ::1; default 127.0.0.1 on a free port); --socket PATH \
            serves on a UNIX socket, mode 0600. Only your own processes (and root's) are \
            served: the kernel names the user on the other end of each connection, and any \
            other user gets 403. The upstream must be https, or http to this machine (78). \
            --verbose prints one line a request on stderr: method, path, status, milliseconds.
            """)
    static let examples = [
        "cog-cred proxy --upstream https://api.example.com/v1",
        "cog-cred proxy --upstream https://abc123.execute-api.us-east-1.amazonaws.com/prod --listen 127.0.0.1:8080",
        "cog-cred proxy --upstream https://api.example.com --socket $XDG_RUNTIME_DIR/api.sock --id-token",
    ]

    @OptionGroup var profileOptions: ProfileOptions

    @Option(help: ArgumentHelp("Where every request goes: https://, or http:// to this machine; its path prefixes each request's.", valueName: "url"))
    var upstream: String

    @Option(help: ArgumentHelp("The loopback address and port to listen on (127.0.0.1:PORT or [::1]:PORT; default 127.0.0.1 on a free port).", valueName: "host:port"))
    var listen: String?

    @Option(help: ArgumentHelp("Serve on a UNIX socket at this path instead (mode 0600).", valueName: "path"), completion: .file())
    var socket: String?

    @Flag(help: "Send the ID token instead of the access token.")
    var idToken = false

    @Option(help: ArgumentHelp("Put the raw token in this header instead of Authorization: Bearer.", valueName: "name"))
    var header: String?

    @Option(help: ArgumentHelp("A PEM file of CA certificates for the upstream's TLS (default: the system's).", valueName: "file"), completion: .file())
    var caBundle: String?

    @Flag(help: "One line a request on stderr: method, path, status, milliseconds.")
    var verbose = false

    /// Where it listens, as given.
    enum Place {
        case tcp(address: String, port: Int)
        case unix(String)
    }

    func validate() throws {
        if listen != nil && socket != nil { throw ValidationError("--listen and --socket cannot be used together") }
        _ = try place()
        if let header, header.isEmpty || !header.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }) {
            throw ValidationError("--header takes a header name, such as X-Api-Token")
        }
        if let caBundle, access(caBundle, R_OK) != 0 { throw ValidationError("--ca-bundle: cannot read \(caBundle.printable)") }
    }

    /// --listen's address (loopback only) and port, or --socket's path.
    func place() throws -> Place {
        if let socket { return .unix(socket) }
        guard let listen else { return .tcp(address: "127.0.0.1", port: 0) }
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("--listen takes HOST:PORT, such as 127.0.0.1:8080")
        }
        var host = String(listen[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" { host = "127.0.0.1" }
        // A loopback port is every local user's already; any other address
        // is every machine's that can reach this one.
        guard host == "::1" || (host.hasPrefix("127.") && isLoopbackHost(host)) else {
            throw ValidationError("--listen takes a loopback address only (127.0.0.1 or ::1), not '\(host.printable)': the proxy hands out your tokens")
        }
        return .tcp(address: host, port: port)
    }

    func run() throws {
        let wiring = Wiring(profileOptions, promptingToUnlock: false)
        let name = try wiring.profileName()
        let upstream: ProxyUpstream
        do {
            upstream = try ProxyUpstream(self.upstream)
        } catch {
            throw ConfigError.invalidValue("--upstream", Proxy.wording(error))
        }
        // A profile that is not configured (here or in the agent) is said
        // now, not at every request.
        _ = try wiring.tokenManager()
        let choice: TokenChoice = idToken ? .id : .access
        let tokens = ProxyTokens { forceRefresh in
            // The configuration and the session read afresh each time (at
            // most once a second): a changed profile counts at once.
            do {
                let manager = try Wiring(profileOptions, promptingToUnlock: false).tokenManager()
                if forceRefresh { try manager.refresh() }
                return .success(try manager.currentToken(choice, policy: RefreshPolicy()).value)
            } catch {
                return .failure(Proxy.answer(for: error, profile: name))
            }
        }
        let place = try place()
        let listening: Int32
        var address: String
        switch place {
        case .tcp(let host, let port):
            var bound: Int32 = 0
            listening = clinux_tcp_listen(host, Int32(port), &bound)
            address = host.contains(":") ? "http://[\(host)]:\(bound)" : "http://\(host):\(bound)"
            guard listening >= 0 else { throw Proxy.cannotListen("\(host):\(port)") }
        case .unix(let path):
            // The agent's rule: a directory only you can write, a socket
            // left by a proxy that is gone replaced, one that answers kept.
            switch AgentSocket.listen(path, madeDirectory: nil, for: .proxy) {
            case .success(let socket): listening = socket.fd
            case .failure(.unusable(let reason)): throw InputError(reason, category: .usage)
            case .failure(.tooLong(let path, let capacity)):
                throw InputError("the socket path \(path) is longer than a socket's \(capacity) bytes; choose a shorter one with --socket", category: .usage)
            case .failure(.taken(let reason)), .failure(.failed(let reason)): throw InputError(reason, category: .programUnavailable)
            }
            address = path
        }
        let settings = TokenProxy.Settings(
            upstream: upstream, tokenHeader: header, caBundle: caBundle,
            user: getuid(), unixSocket: socket != nil)
        var log: TokenProxy.Log? = nil
        if verbose {
            log = { method, path, status, milliseconds in
                Output.note("\(method.printable) \(path.oneLine(limit: 200)) \(status) \((milliseconds * 10).rounded() / 10) ms")
            }
        }
        // TERM and INT are waited for below, never delivered to a thread:
        // blocked before any thread starts, which inherits the mask.
        var stopping = sigset_t()
        sigemptyset(&stopping)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&stopping, signal) }
        pthread_sigmask(SIG_BLOCK, &stopping, nil)
        let proxy = TokenProxy(settings, tokens: tokens, log: log)
        do {
            try proxy.start(listening: listening)
        } catch {
            close(listening)
            if socket != nil { unlink(socket!) }
            throw Proxy.startFailure(error)
        }
        Output.data(address)
        Output.note("cog-cred: proxy for profile '\(name)' to \(upstream.shown) at \(address); Ctrl-C or SIGTERM stops it")
        var received: Int32 = 0
        sigwait(&stopping, &received)
        proxy.stop(grace: 5)
        close(listening)
        if let socket { unlink(socket) }
    }

    /// What a request gets when no token can be had: 401 when the session
    /// is not there (signed out, expired, revoked), 503 when the keyring is
    /// locked, 502 when a refresh failed.
    static func answer(for error: any Error, profile: String) -> ProxyAnswer {
        let failure = error as? any CogCredFailure
        let line = failure.map { ErrorWording.line($0) } ?? "\(error)"
        if failure?.category == .notAuthenticated {
            // The problem in the failure's words, and the one step out of it,
            // for this profile. An agent's failure is its whole line, worded
            // there with its step already.
            guard let explained = failure as? any ExplainedFailure else {
                return ProxyAnswer(status: 401, body: "cog-cred proxy has no token: \(line)\n")
            }
            return ProxyAnswer(
                status: 401, body: "cog-cred proxy has no token: \(explained.explanation.problem); sign in: cog-cred sign-in -p \(profile)\n")
        }
        let locked = (error as? SecretServiceError).map { $0 == .locked || $0 == .unlockDeclined } ?? false
        let body = JSONValue.object(["error": .string(line), "profile": .string(profile)])
        return ProxyAnswer(status: locked ? 503 : 502, contentType: "application/json", body: body.compactText + "\n")
    }

    static func wording(_ problem: ProxyUpstream.Problem) -> String {
        switch problem {
        case .unreadable(let why): return "libcurl cannot read it as a URL (\(why)); it is not shown, as it may hold a password"
        case .notHTTP(let scheme): return "'\(scheme.printable)' is not http or https"
        case .cleartextToAnotherHost: return "plain http to another machine would send every token in the clear: use https://"
        case .userinfo: return "a user name or password in it is not sent: the proxy sends its own Authorization"
        case .queryOrFragment: return "it may hold a path, but no query or fragment"
        }
    }

    static func cannotListen(_ place: String) -> InputError {
        InputError("cannot listen on \(place.printable): \(String(cString: strerror(clinux_errno())))", category: .programUnavailable)
    }

    static func startFailure(_ failure: TokenProxy.StartFailure) -> InputError {
        switch failure {
        case .libraryMissing(let why): return InputError("libmicrohttpd cannot be loaded (\(why)); install libmicrohttpd12", category: .programUnavailable)
        case .libcurlMissing(let why): return InputError("libcurl cannot be loaded (\(why)); install libcurl4", category: .programUnavailable)
        case .cannotStart: return InputError("the proxy's server could not start", category: .programUnavailable)
        }
    }
}
