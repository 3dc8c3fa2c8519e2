import CMicroHTTPD
import CogCredRead

#if canImport(Glibc)
import Glibc
#endif

/// One request through the proxy, from its target to its answer, as
/// libmicrohttpd calls on it: `step` once the headers are read, again with
/// each piece of the body, and a last time when the body is done; then
/// `finished`. It runs on its loop's thread, as does its transfer to the
/// upstream (UpstreamExchange); while it waits on that, its connection is
/// suspended, and the exchange's `changed` resumes it.
final class ProxyRequest: @unchecked Sendable {
    /// The request target as the client sent it: path and query, undecoded.
    let target: String
    let loop: ProxyLoop
    private var proxy: TokenProxy { loop.proxy }
    /// When it began, for --verbose's line (nil: no line is written).
    private let start: ContinuousClock.Instant?
    private var method = ""
    private var started = false
    /// The proxy answered itself: the upstream was sent nothing, and any
    /// body is dropped.
    private var answered = false
    private var status = 0
    private var exchange: UpstreamExchange?
    private var connection: OpaquePointer?
    /// What the suspended connection waits for; nil: it is not suspended.
    private var waiting: Wait?
    /// The answer was not there when the body was done: the next step suspends.
    private var askedAgain = false

    /// The request's headers, kept while it waits for its token.
    private var head: RequestHeaders.Read?
    /// The token read for it, or why there is none: taken at the next step.
    private var arrived: Result<String, ProxyAnswer>?

    enum Wait {
        /// The session's token (ProxyTokens reads it on a thread of its own).
        case token
        /// Room for the client's next piece of body.
        case room
        /// The upstream's answer (its head, and a small body whole).
        case answer
        /// More of the upstream's body.
        case body
    }

    /// Bytes of the response body handed to the server at a time.
    static let block = 64 << 10

    init(target: String, loop: ProxyLoop) {
        self.target = target
        self.loop = loop
        start = loop.proxy.log == nil ? nil : .now
        loop.proxy.began()
    }

    /// False closes the connection.
    func step(_ connection: OpaquePointer, method: UnsafePointer<CChar>, data: UnsafePointer<CChar>?, size: UnsafeMutablePointer<Int>) -> Bool {
        if !started {
            started = true
            self.method = String(cString: method)
            self.connection = connection
            return begin(connection)
        }
        if let arrived {
            // The step that began it, again, once the token came.
            self.arrived = nil
            return go(connection, with: arrived)
        }
        if size.pointee > 0 {
            guard let exchange, !answered, let data else {
                size.pointee = 0
                return true
            }
            // Taken, or offered again (the same bytes) once there is room.
            if exchange.feed(UnsafeRawBufferPointer(start: data, count: size.pointee)) {
                size.pointee = 0
            } else {
                suspend(until: .room)
            }
            return true
        }
        guard !answered else { return true }
        guard let exchange else { return false }
        exchange.finishUpload()
        guard exchange.answerReady else {
            // Not yet: the connection is left as it is for one turn of the
            // loop (libmicrohttpd asks this step again on its next run, at
            // once), and suspended only if the answer is not there then.
            // Under load it often is, and suspending costs two system
            // calls a request (the socket out of the daemon's epoll, and
            // back in on resuming).
            if askedAgain { suspend(until: .answer) } else { askedAgain = true }
            return true
        }
        return respond(connection, exchange.head())
    }

    /// The headers are read: refuse, or start the upstream's request.
    private func begin(_ connection: OpaquePointer) -> Bool {
        guard proxy.admitted(connection) else {
            return answer(connection, ProxyAnswer(status: 403, body: "cog-cred proxy serves only the user who started it\n"))
        }
        // A client that takes it for a forward proxy: nothing goes anywhere.
        guard method != "CONNECT", target.hasPrefix("/") else {
            return answer(
                connection,
                ProxyAnswer(status: 400, body: "cog-cred proxy sends every request to its one upstream: ask for a path (no absolute URL, no CONNECT)\n"))
        }
        let head = RequestHeaders.read(connection, dropping: proxy.dropped)
        if !proxy.settings.unixSocket, let refusal = head.fromAnotherSite {
            return answer(connection, ProxyAnswer(status: 403, body: "cog-cred proxy refuses \(refusal)\n"))
        }
        self.head = head
        if let token = proxy.tokens.held() { return go(connection, with: .success(token)) }
        // No token held: the connection waits while one is read, and this
        // step comes again (libmicrohttpd calls it anew once resumed).
        suspend(until: .token)
        let loop = self.loop
        proxy.tokens.read(unless: nil) { result in
            loop.post { self.tokenRead(result) }
        }
        return true
    }

    private func tokenRead(_ result: Result<String, ProxyAnswer>) {
        guard waiting == .token else { return }
        arrived = result
        resume()
    }

    /// With the token (or why there is none), the request goes to the upstream.
    private func go(_ connection: OpaquePointer, with arrival: Result<String, ProxyAnswer>) -> Bool {
        guard let head else { return false }
        self.head = nil
        let token: String
        switch arrival {
        case .success(let current): token = current
        case .failure(let refusal): return answer(connection, refusal)
        }
        guard let link = loop.link() else {
            return answer(connection, ProxyAnswer(status: 502, contentType: "application/json", body: #"{"error":"libcurl could not start"}"# + "\n"))
        }
        let settings = proxy.settings
        let request = UpstreamExchange.Request(
            method: method, url: settings.upstream.url(for: target), headers: head.forwarded, body: head.body(method: method),
            tokenHeader: settings.tokenHeader, cleartext: settings.upstream.cleartext, caBundle: settings.caBundle)
        exchange = UpstreamExchange(request, loop: loop, link: link, token: token, tokens: proxy.tokens) { [unowned self] in
            self.upstreamChanged()
        }
        return true
    }

    private func suspend(until wait: Wait) {
        guard waiting == nil, !abandoned, let connection else { return }
        waiting = wait
        loop.suspended[ObjectIdentifier(self)] = self
        cmhd_suspend(connection)
    }

    private func resume() {
        guard waiting != nil, let connection else { return }
        waiting = nil
        loop.suspended[ObjectIdentifier(self)] = nil
        cmhd_resume(connection)
        loop.resumed = true
    }

    /// The proxy is closing: the transfer stops, and the request goes on
    /// to its end (a 502, or its body cut short) without waiting again.
    private var abandoned = false
    func abandon() {
        abandoned = true
        exchange?.close()
        resume()
    }

    /// The exchange moved on: the connection goes on if what it waits for is there.
    private func upstreamChanged() {
        guard let waiting, let exchange else { return }
        let there: Bool
        switch waiting {
        case .token: there = false
        case .room: there = exchange.hasRoom
        case .answer: there = exchange.answerReady
        case .body: there = exchange.hasBody
        }
        if there { resume() }
    }

    private func answer(_ connection: OpaquePointer, _ answer: ProxyAnswer) -> Bool {
        answered = true
        status = answer.status
        let bytes = Array(answer.body.utf8)
        guard let response = bytes.withUnsafeBytes({ cmhd_response_from_copy($0.count, $0.baseAddress) }) else { return false }
        defer { cmhd_destroy(response) }
        _ = cmhd_add_header(response, "Content-Type", answer.contentType)
        return cmhd_queue(connection, UInt32(answer.status), response) != 0
    }

    private func respond(_ connection: OpaquePointer, _ outcome: UpstreamExchange.Outcome) -> Bool {
        switch outcome {
        case .answered(let refusal):
            return answer(connection, refusal)
        case .failed(let why):
            let body = JSONValue.object([
                "error": .string("the upstream \(proxy.settings.upstream.shown) could not be reached: \(why)")
            ])
            return answer(connection, ProxyAnswer(status: 502, contentType: "application/json", body: body.compactText + "\n"))
        case .head(let head):
            status = head.status
            let response: OpaquePointer?
            if head.status == 204 || head.status == 304 {
                response = cmhd_response_from_copy(0, nil)
            } else if let body = exchange!.wholeBody() {
                // A small body of a known length (most API answers) is sent
                // with its head, in one piece.
                response = body.withUnsafeBytes { cmhd_response_from_copy($0.count, $0.baseAddress) }
            } else {
                // The upstream's body, read by the server as it sends (it
                // calls back with the room it has); none there yet: the
                // connection waits for it, suspended.
                let context = Unmanaged.passRetained(self).toOpaque()
                response = cmhd_response_from_callback(
                    head.length.map { UInt64($0) } ?? UInt64.max, ProxyRequest.block,
                    { context, _, buffer, room in
                        Unmanaged<ProxyRequest>.fromOpaque(context!).takeUnretainedValue()
                            .body(into: UnsafeMutableRawBufferPointer(start: buffer, count: room))
                    }, context,
                    { context in Unmanaged<ProxyRequest>.fromOpaque(context!).release() })
                if response == nil { Unmanaged<ProxyRequest>.fromOpaque(context).release() }
            }
            guard let response else { return false }
            defer { cmhd_destroy(response) }
            head.headers.forwarded { _ = cmhd_add_header(response, $0, $1) }
            return cmhd_queue(connection, UInt32(head.status), response) != 0
        }
    }

    /// The server's content reader: bytes of the body, 0 when none is
    /// here yet (the connection waits, suspended), or its end:
    /// MHD_CONTENT_READER_END_OF_STREAM, or _END_WITH_ERROR (the
    /// connection is closed: the client sees a body cut short).
    private func body(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let exchange else { return -2 }
        let n = exchange.read(into: buffer)
        if n > 0 { return n }
        if exchange.result != nil { return exchange.completed ? -1 : -2 }
        suspend(until: .body)
        return 0
    }

    /// The server is done with the request (answered, or the client gone).
    func finished() {
        exchange?.close()
        if let log = proxy.log, let start {
            // The path, never the query (which may hold something secret),
            // nor an absolute URI's host.
            let path = target.hasPrefix("/") ? String(target.prefix { $0 != "?" }) : "(not a path)"
            log(method, path, status, seconds(since: start) * 1000)
        }
        proxy.ended()
    }
}

/// The headers a request and a response keep on the way through: not the
/// hop-by-hop ones (RFC 9110 7.6.1: Connection and those it names,
/// Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade), not the
/// client's Host (libcurl sends the upstream's) or credentials (the proxy
/// sends its own), and no length (each side frames its own body). Every
/// request runs through these: each is one pass, and builds no set unless
/// a Connection header names others.
enum RequestHeaders {
    /// A header with its name lowercased, to compare.
    typealias Header = (name: String, lower: String, value: String)

    static let hopByHop: [StaticString] = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
        "transfer-encoding", "upgrade",
    ]

    /// `name` is hop-by-hop (in any case).
    static func isHopByHop(_ name: UnsafeRawBufferPointer) -> Bool {
        hopByHop.contains { named(name, $0) }
    }

    /// `name` is `lower` (a lowercase name) in any case, compared as the
    /// bytes libcurl or the server hands over.
    static func named(_ name: UnsafeRawBufferPointer, _ lower: StaticString) -> Bool {
        named(name, UnsafeRawBufferPointer(start: lower.utf8Start, count: lower.utf8CodeUnitCount))
    }

    static func named(_ name: UnsafeRawBufferPointer, _ lower: UnsafeRawBufferPointer) -> Bool {
        guard name.count == lower.count else { return false }
        for i in 0..<name.count where (name[i] >= 65 && name[i] <= 90 ? name[i] | 0x20 : name[i]) != lower[i] { return false }
        return true
    }

    /// A Content-Length's value: digits, with spaces or tabs around them; nil: anything else.
    static func length(_ value: UnsafeRawBufferPointer) -> Int64? {
        func isBlank(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 }
        var (start, end) = (0, value.count)
        while start < end && isBlank(value[start]) { start += 1 }
        while end > start && isBlank(value[end - 1]) { end -= 1 }
        guard start < end else { return nil }
        var length: Int64 = 0
        for byte in value[start..<end] {
            guard byte >= 48 && byte <= 57 else { return nil }
            let (times, overflowed) = length.multipliedReportingOverflow(by: 10)
            let (sum, overflowedAgain) = times.addingReportingOverflow(Int64(byte - 48))
            guard !overflowed && !overflowedAgain else { return nil }
            length = sum
        }
        return length
    }

    struct Read {
        var forwarded: [String] = []
        var length: Int64?
        var chunked = false
        var host: String?
        var origin: String?
        var fetchSite: String?

        /// Why a request a web page sent is refused: a browser reaches
        /// 127.0.0.1 from any site's page, and the proxy would add the
        /// token. A Host that is not this machine's is a page's own name
        /// resolved to 127.0.0.1 (DNS rebinding, which would also let it
        /// read the answer); an Origin of another machine, or a fetch the
        /// browser marks cross-site, is a page's request (CSRF). nil: served.
        var fromAnotherSite: String? {
            if let host, !Self.isThisMachine(host: host) {
                return "a request addressed to another host (Host: \(host.oneLine(limit: 100))): use http://127.0.0.1:PORT or http://localhost:PORT"
            }
            if let origin, origin != "null", !(LibcurlURL.host(of: origin).map { Self.isThisMachine($0) } ?? false) {
                return "a request from a web page of another site (Origin: \(origin.oneLine(limit: 100)))"
            }
            if fetchSite?.lowercased() == "cross-site" { return "a request from a web page of another site (Sec-Fetch-Site: cross-site)" }
            return nil
        }

        /// A Host header's authority (host, or host:port, or [v6]:port) names this machine.
        static func isThisMachine(host authority: String) -> Bool {
            var authority = authority
            return authority.withUTF8 { authority in
                var host = UnsafeRawBufferPointer(authority)
                if host.first == UInt8(ascii: "[") {
                    guard let close = host.firstIndex(of: UInt8(ascii: "]")) else { return false }
                    host = UnsafeRawBufferPointer(rebasing: host[1..<close])
                } else if let colon = host.lastIndex(of: UInt8(ascii: ":")) {
                    host = UnsafeRawBufferPointer(rebasing: host[..<colon])
                }
                return isLoopbackHost(host)
            }
        }

        static func isThisMachine(_ host: String) -> Bool { isLoopbackHost(host) }

        func body(method: String) -> UpstreamExchange.Body {
            if chunked { return .chunked }
            guard let length, length > 0 || !["GET", "HEAD", "OPTIONS", "DELETE"].contains(method) else { return .none }
            return .length(length)
        }
    }

    /// The request's own headers that never go on, lowercased: the
    /// client's Host and credentials (the proxy sends the upstream's and
    /// its own, in Authorization or `tokenHeader`), a length (libcurl
    /// frames the body) and Expect (answered here).
    static func dropped(tokenHeader: String?) -> [[UInt8]] {
        (["authorization", "host", "content-length", "expect"] + (tokenHeader.map { [$0.lowercased()] } ?? [])).map { Array($0.utf8) }
    }

    /// The request's headers, as the server parsed them, without `dropped`'s.
    /// Names are compared as the bytes the server holds (for the length
    /// of the request): a String is made only of what is kept.
    static func read(_ connection: OpaquePointer, dropping dropped: [[UInt8]]) -> Read {
        typealias Pair = (name: UnsafePointer<CChar>, value: UnsafePointer<CChar>?)
        var pairs: [Pair] = []
        pairs.reserveCapacity(16)
        _ = withUnsafeMutablePointer(to: &pairs) { pairs in
            cmhd_headers(connection, { context, _, name, value in
                guard let context, let name else { return .YES }
                context.assumingMemoryBound(to: [Pair].self).pointee.append((name, value))
                return .YES
            }, pairs)
        }
        func bytes(_ text: UnsafePointer<CChar>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: text, count: strlen(text)) }
        func string(_ text: UnsafePointer<CChar>?) -> String { text.map { String(cString: $0) } ?? "" }
        var read = Read()
        let named =
            pairs.contains { Self.named(bytes($0.name), "connection") }
            ? connectionNamed(pairs.map { (String(cString: $0.name), String(cString: $0.name).lowercased(), string($0.value)) }) : []
        for pair in pairs {
            let name = bytes(pair.name)
            if Self.named(name, "content-length") {
                read.length = pair.value.flatMap { length(bytes($0)) }
            } else if Self.named(name, "transfer-encoding") {
                if string(pair.value).lowercased().contains("chunked") { read.chunked = true }
            } else if Self.named(name, "host") {
                read.host = string(pair.value)
            } else if Self.named(name, "origin") {
                read.origin = string(pair.value)
            } else if Self.named(name, "sec-fetch-site") {
                read.fetchSite = string(pair.value)
            }
            guard !isHopByHop(name), !dropped.contains(where: { lower in lower.withUnsafeBytes { Self.named(name, $0) } }) else { continue }
            let header = String(cString: pair.name)
            if !named.isEmpty && named.contains(header.lowercased()) { continue }
            read.forwarded.append("\(header): \(string(pair.value))")
        }
        return read
    }

    /// The headers a Connection header names, lowercased.
    static func connectionNamed(_ headers: [Header]) -> Set<String> {
        var named: Set<String> = []
        for header in headers where header.lower == "connection" {
            // What nearly every response says, and names no other header.
            let value = header.value.lowercased()
            if value == "keep-alive" || value == "close" { continue }
            for word in header.value.utf8.split(separator: UInt8(ascii: ",")) {
                // A list of tokens with optional whitespace (RFC 9110 5.6.1): spaces and tabs.
                let word = String(decoding: word.drop { $0 == 32 || $0 == 9 }.reversed().drop { $0 == 32 || $0 == 9 }.reversed(), as: UTF8.self).lowercased()
                if word != "keep-alive" && word != "close" { named.insert(word) }
            }
        }
        return named
    }
}
