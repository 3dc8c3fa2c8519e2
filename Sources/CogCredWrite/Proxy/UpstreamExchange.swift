import CCurl

/// A libcurl easy handle for transfers to the upstream, used by one at a
/// time and kept by its loop between them (ProxyLoop.link), configured
/// once with what every request shares.
final class UpstreamLink: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    /// The options every request on it shares are set (`UpstreamExchange.start`).
    var configured = false
    /// Where libcurl writes why a transfer failed (CURLOPT_ERRORBUFFER),
    /// emptied before each.
    let error: UnsafeMutablePointer<CChar>

    /// The request headers last given to libcurl (CURLOPT_HTTPHEADER), and
    /// what they were made of: a request that sends what the one before it
    /// sent (most do) uses them again, and the token's line is a kilobyte.
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var headersSent: SentHeaders?

    struct SentHeaders: Equatable {
        /// The client's ("Name: value"), the token's own header (nil:
        /// Authorization), the token, and whether a body goes.
        var client: [String]
        var tokenHeader: String?
        var token: String
        var body: Bool
    }

    init?() {
        guard let easy = ccurl_easy_init() else { return nil }
        self.easy = easy
        error = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        error[0] = 0
    }

    /// The list for `sent`, made anew only when it differs from the last.
    func headers(_ sent: SentHeaders) -> UnsafeMutablePointer<curl_slist>? {
        if sent == headersSent, let headerList { return headerList }
        headerList.map(ccurl_slist_free_all)
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for line in sent.client { list = ccurl_slist_append(list, line) }
        list = ccurl_slist_append(list, sent.tokenHeader.map { "\($0): \(sent.token)" } ?? "Authorization: Bearer \(sent.token)")
        // No 100-continue round trip for a body (the client's own was
        // answered), and no Accept of libcurl's when the client sent none.
        if sent.body { list = ccurl_slist_append(list, "Expect:") }
        list = ccurl_slist_append(list, "Accept:")
        headerList = list
        headersSent = list == nil ? nil : sent
        return list
    }

    deinit {
        ccurl_easy_cleanup(easy)
        headerList.map(ccurl_slist_free_all)
        error.deallocate()
    }
}

/// One request passed on to the upstream, as a transfer in its loop's
/// multi handle: the client's body is sent as the server hands it over
/// (`feed`), the upstream's taken as the server asks for more (`read`),
/// and no body is held whole: past `capacity` bytes waiting on either
/// side, the transfer pauses, or the client's side waits (`hasRoom`).
/// The response's status and headers are known (`outcome`) as soon as
/// they arrive, so a stream (server-sent events) reaches the client chunk
/// by chunk. Whatever changes what the request waits for is told to
/// `changed`, on the loop's thread.
///
/// A 401 to a request that is safe to send again (GET, HEAD or OPTIONS
/// with no body) is answered once: the token is replaced (a forced
/// refresh) and the request sent again; any other 401 goes back as it is.
/// Used on its loop's thread only (what another thread hands it is posted there).
final class UpstreamExchange: @unchecked Sendable {
    enum Body: Equatable {
        case none
        case length(Int64)
        case chunked
    }

    struct Head {
        var status: Int
        var headers: ResponseHeaders
        /// The body's length, when the upstream said it (Content-Length).
        var length: Int64?
    }

    enum Outcome {
        case head(Head)
        /// No token for the retry: the proxy's own answer.
        case answered(ProxyAnswer)
        /// No response: libcurl's words.
        case failed(String)
    }

    struct Request {
        var method: String
        var url: String
        /// The client's headers to send on ("Name: value"), without the token's.
        var headers: [String]
        var body: Body
        /// Where the token goes: NAME: TOKEN, else Authorization: Bearer TOKEN.
        var tokenHeader: String?
        var cleartext: Bool
        /// The upstream's CA certificates (nil: the system's).
        var caBundle: String?
    }

    /// Bytes waiting on either side before the transfer pauses.
    static let capacity = 256 << 10
    /// A body of up to this many bytes (its length known) is taken whole
    /// before the answer starts, and goes with its head, in one piece.
    static let whole: Int64 = 64 << 10

    let request: Request
    private let loop: ProxyLoop
    private var link: UpstreamLink?
    private let tokens: ProxyTokens
    /// Told of whatever may end the request's wait (on the loop's thread).
    private let changed: () -> Void
    private var token: String
    private var sending: Sending
    private var added = false
    /// How the transfer ended (after any retry); nil while it runs.
    private(set) var result: CURLcode?
    private(set) var outcome: Outcome?

    private var upload: [UInt8] = []
    private var uploadFinished = false
    private var readPaused = false
    private var received: [UInt8] = []
    private var writePaused = false

    init(_ request: Request, loop: ProxyLoop, link: UpstreamLink, token: String, tokens: ProxyTokens, changed: @escaping () -> Void) {
        self.request = request
        self.loop = loop
        self.link = link
        self.token = token
        self.tokens = tokens
        self.changed = changed
        sending = Sending(retry401: request.body == .none && UpstreamExchange.safeToRepeat(request.method))
        if request.body == .none { uploadFinished = true }
        start()
    }

    /// A request that changes nothing, so may go again after a 401.
    static func safeToRepeat(_ method: String) -> Bool {
        switch method {
        case "GET", "HEAD", "OPTIONS": true
        default: false
        }
    }

    /// Takes a piece of the client's body, unless `capacity` bytes wait
    /// already (false: offer it again once `hasRoom`). Once the upstream
    /// stopped reading, it is dropped.
    func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard result == nil else { return true }
        guard upload.count < UpstreamExchange.capacity else { return false }
        upload.append(contentsOf: bytes)
        resume(reading: true)
        return true
    }

    /// Another piece of the client's body would be taken.
    var hasRoom: Bool { result != nil || upload.count < UpstreamExchange.capacity }

    /// The client's body is all there.
    func finishUpload() {
        uploadFinished = true
        resume(reading: true)
    }

    /// The answer can start: its head is known (or why there is none),
    /// and a small body of a known length is here whole (or will not be).
    var answerReady: Bool {
        guard let outcome else { return result != nil }
        guard case .head(let head) = outcome, let length = wholeLength(head) else { return true }
        return result != nil || received.count > length
    }

    /// The length of the body to take whole before answering; nil: it streams.
    private func wholeLength(_ head: Head) -> Int? {
        guard request.method != "HEAD", head.status != 204, head.status != 304, let length = head.length,
            length <= UpstreamExchange.whole
        else { return nil }
        return Int(length)
    }

    /// The response's head, once `answerReady` (or why there is none).
    func head() -> Outcome {
        if outcome == nil { outcome = .failed(failure(result ?? CURLE_GOT_NOTHING)) }
        return outcome!
    }

    /// Up to `buffer.count` bytes of the response's body that are here
    /// (0: none yet, or its end: `result` says which, and `completed`
    /// whether it was whole).
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let n = min(buffer.count, received.count)
        guard n > 0 else { return 0 }
        received.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: n) }
        received.removeFirst(n)
        if received.count < UpstreamExchange.capacity / 2 { resume(reading: false) }
        return n
    }

    /// More of the body to `read`, or its end.
    var hasBody: Bool { !received.isEmpty || result != nil }

    /// The body came whole.
    var completed: Bool { result == CURLE_OK }

    /// All of a small body (`answerReady` waited for it), when it came
    /// whole; nil when the transfer failed or brought another length (the
    /// answer then streams, and ends as it ends).
    func wholeBody() -> [UInt8]? {
        guard case .head(let head) = outcome, let length = wholeLength(head), result == CURLE_OK, received.count == length else {
            return nil
        }
        defer { received = [] }
        return received
    }

    /// The client is gone or the answer sent: a transfer still running
    /// stops, and its handle goes back to the loop.
    func close() {
        if added {
            loop.remove(link!)
            added = false
        }
        if let link {
            loop.giveBack(link)
            self.link = nil
        }
        if result == nil { result = CURLE_ABORTED_BY_CALLBACK }
    }

    private func resume(reading: Bool) {
        guard added, let link else { return }
        if reading && readPaused {
            readPaused = false
            ccurl_easy_pause(link.easy, CURLPAUSE_CONT)
        } else if !reading && writePaused {
            writePaused = false
            ccurl_easy_pause(link.easy, CURLPAUSE_CONT)
        }
    }

    /// A sending ended (its loop says): done, or (a 401 to retry) sent
    /// again with another token.
    func ended(_ code: CURLcode) {
        if added, let link { loop.remove(link) }
        added = false
        guard sending.unauthorized else { return finish(code) }
        // Another token (read off the loop), then the same request again.
        let loop = self.loop
        tokens.read(unless: token) { fresh in
            loop.post { self.retry(with: fresh, after: code) }
        }
    }

    private func retry(with fresh: Result<String, ProxyAnswer>, after code: CURLcode) {
        guard result == nil, link != nil else { return }  // the client is gone
        switch fresh {
        case .success(let token):
            self.token = token
            sending = Sending(retry401: false)
            start()
            if !added { finish(result ?? CURLE_FAILED_INIT) }
        case .failure(let answer):
            if outcome == nil { outcome = .answered(answer) }
            finish(code)
        }
    }

    private func finish(_ code: CURLcode) {
        if result == nil { result = code }
        if outcome == nil { outcome = .failed(failure(code)) }
        changed()
    }

    private func failure(_ code: CURLcode) -> String {
        let said = link.map { String(cString: $0.error) } ?? ""
        return said.isEmpty ? String(cString: ccurl_easy_strerror(code)) : said
    }

    /// What one sending of the request gathers from libcurl's callbacks.
    struct Sending {
        /// A 401 is to be answered by a retry, not passed on.
        let retry401: Bool
        var status = 0
        var headers = ResponseHeaders()
        /// Content-Length, when said.
        var length: Int64?
        var unauthorized = false

        init(retry401: Bool) { self.retry401 = retry401 }
    }

    /// One header line (libcurl gives them one at a time, the status line
    /// first and an empty line last; 1xx heads come before the real one),
    /// read as bytes: it runs for every header of every response.
    private func header(_ line: UnsafeRawBufferPointer) {
        var end = line.count
        while end > 0 && (line[end - 1] == 10 || line[end - 1] == 13) { end -= 1 }
        let line = UnsafeRawBufferPointer(rebasing: line[0..<end])
        if line.count >= 5 && RequestHeaders.named(UnsafeRawBufferPointer(rebasing: line[..<5]), "http/") {
            // HTTP/1.1 200 OK: the three digits after the first space.
            let space = line.firstIndex(of: 32) ?? line.count
            var status = 0
            for byte in line.dropFirst(space + 1).prefix(3) where byte >= 48 && byte <= 57 { status = status * 10 + Int(byte - 48) }
            sending.status = status
            sending.headers = ResponseHeaders()
            sending.length = nil
        } else if line.isEmpty {
            guard sending.status >= 200 else { return }
            if sending.retry401 && sending.status == 401 {
                sending.unauthorized = true
                return
            }
            if outcome == nil { outcome = .head(Head(status: sending.status, headers: sending.headers, length: sending.length)) }
            changed()
        } else if let colon = line.firstIndex(of: 58) {
            var start = colon + 1
            while start < line.count && (line[start] == 32 || line[start] == 9) { start += 1 }
            let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
            let value = UnsafeRawBufferPointer(rebasing: line[start...])
            if RequestHeaders.named(name, "content-length") { sending.length = RequestHeaders.length(value) }
            sending.headers.append(name: name, value: value)
        }
    }

    /// Sets the easy handle up for a sending and adds it to the multi: what
    /// every request on the link shares once, then this one's own (its
    /// method options each set, so none is left from the one before).
    private func start() {
        guard let link else { return }
        let handle = link.easy
        var failed: CURLcode? = nil
        func set(_ result: CURLcode) { if result != CURLE_OK && failed == nil { failed = result } }
        let context = Unmanaged.passUnretained(self).toOpaque()
        if !link.configured {
            set(ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
            set(ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, request.cleartext ? "http" : "https"))
            set(ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
            // Straight to the upstream: the proxy variables are for Cognito.
            set(ccurl_setopt_string(handle, CURLOPT_PROXY, ""))
            // Nor their no_proxy, which libcurl would look up for every request.
            set(ccurl_setopt_string(handle, CURLOPT_NOPROXY, "*"))
            set(ccurl_setopt_cloexec_sockets(handle))
            set(ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, 10_000))
            set(ccurl_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1))
            // Bodies pass as they are: a compressed one is not decoded.
            set(ccurl_setopt_long(handle, CURLOPT_HTTP_CONTENT_DECODING, 0))
            if let path = request.caBundle { set(ccurl_setopt_string(handle, CURLOPT_CAINFO, path)) }
            set(ccurl_setopt_write_callback(handle, CURLOPT_READFUNCTION, UpstreamExchange.readBody))
            set(ccurl_setopt_write_callback(handle, CURLOPT_HEADERFUNCTION, UpstreamExchange.readHeader))
            set(ccurl_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION, UpstreamExchange.writeBody))
            set(ccurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, link.error))
            link.configured = failed == nil
        }
        set(ccurl_setopt_string(handle, CURLOPT_URL, request.url))
        link.error[0] = 0
        let headers = link.headers(
            .init(client: request.headers, tokenHeader: request.tokenHeader, token: token, body: request.body != .none))
        set(ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers))
        // HTTPGET clears NOBODY and UPLOAD; CUSTOMREQUEST is cleared by hand.
        set(ccurl_setopt_long(handle, CURLOPT_HTTPGET, 1))
        set(ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, nil))
        switch (request.method, request.body) {
        case ("GET", .none): break
        case ("HEAD", .none): set(ccurl_setopt_long(handle, CURLOPT_NOBODY, 1))
        case (let method, .none): set(ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method))
        case (let method, .length(let length)):
            set(ccurl_setopt_long(handle, CURLOPT_UPLOAD, 1))
            set(ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method))
            set(ccurl_setopt_long(handle, CURLOPT_INFILESIZE_LARGE, Int(length)))
        case (let method, .chunked):
            set(ccurl_setopt_long(handle, CURLOPT_UPLOAD, 1))
            set(ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method))
            set(ccurl_setopt_long(handle, CURLOPT_INFILESIZE_LARGE, -1))
        }
        set(ccurl_setopt_pointer(handle, CURLOPT_READDATA, context))
        set(ccurl_setopt_pointer(handle, CURLOPT_HEADERDATA, context))
        set(ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, context))
        if let failed {
            result = failed
            outcome = .failed("libcurl refused an option: \(String(cString: ccurl_easy_strerror(failed)))")
            return
        }
        added = loop.add(self, on: link)
        if !added {
            result = CURLE_FAILED_INIT
            outcome = .failed("libcurl could not start the request")
        }
    }

    /// libcurl's callbacks, each given the exchange as its context.
    private static let readBody: ccurl_write_callback = { buffer, size, count, context in
        guard let buffer, let context else { return 0 }
        let exchange = Unmanaged<UpstreamExchange>.fromOpaque(context).takeUnretainedValue()
        let n = min(size * count, exchange.upload.count)
        guard n > 0 else {
            if exchange.uploadFinished { return 0 }
            exchange.readPaused = true
            return Int(CURL_READFUNC_PAUSE)
        }
        exchange.upload.withUnsafeBytes { buffer.update(from: $0.baseAddress!.assumingMemoryBound(to: CChar.self), count: n) }
        exchange.upload.removeFirst(n)
        exchange.changed()
        return n
    }

    private static let readHeader: ccurl_write_callback = { data, size, count, context in
        guard let data, let context else { return 0 }
        let exchange = Unmanaged<UpstreamExchange>.fromOpaque(context).takeUnretainedValue()
        let n = size * count
        exchange.header(UnsafeRawBufferPointer(start: data, count: n))
        return n
    }

    private static let writeBody: ccurl_write_callback = { data, size, count, context in
        guard let data, let context else { return 0 }
        let exchange = Unmanaged<UpstreamExchange>.fromOpaque(context).takeUnretainedValue()
        let n = size * count
        // A 401 about to be retried: its body is nobody's.
        if exchange.sending.unauthorized { return n }
        if exchange.received.count >= UpstreamExchange.capacity {
            exchange.writePaused = true
            return Int(CURL_WRITEFUNC_PAUSE)
        }
        exchange.received.append(contentsOf: UnsafeRawBufferPointer(start: data, count: n))
        exchange.changed()
        return n
    }

    deinit {
        close()
    }
}
