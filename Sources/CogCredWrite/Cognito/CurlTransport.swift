import CCurl
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// HTTPS through libcurl, the system's well-tested HTTP client.
///
/// Easy handles are kept for the transport's life (the command's, or the
/// agent's: Wiring keeps one transport) and reset before each request: a
/// request takes an idle one (the one the last request gave back, so a
/// command's requests, one after another, reuse its connections: a
/// sign-in's three to five to cognito-idp, `aws-credentials`' to
/// cognito-identity and STS pay one TCP and TLS set-up per host, as the AWS
/// SDKs' do), or makes one when every handle is busy. So requests made at
/// the same time (the agent's, one per client) never wait on each other:
/// one profile's endpoint that never answers holds its own request only.
/// The handles share DNS answers and TLS sessions (a `ccurl_share`), not
/// connections, which libcurl 7.88 cannot share between threads safely.
///
/// The trap of a kept connection: when one dies under a request before any
/// answer, libcurl sends the request again by itself on a new connection,
/// and the server may have acted on the first. A request that must not go
/// out twice (`HTTPRequest.repeatable` false: a code, a challenge's answer,
/// a device to confirm) is guarded twice:
/// - it reuses only a connection idle less than a second (`freshAge`),
///   so after a person's pause it goes on a new connection rather than on
///   one the server may be closing;
/// - through a proxy that forwards plain HTTP, it never reuses one: such
///   proxies may close a client's connection after each answer without
///   saying so (a CI run through tinyproxy met one), and a request sent as the close
///   comes in is one nobody can tell was read;
/// - libcurl's own second sending of it is stopped (`Sink.sendings`, the
///   PREREQFUNCTION libcurl calls before each): the command fails saying
///   the request may have arrived, and RetryingPost does not repeat it.
///
/// Kept connections stay this process's: their sockets are close-on-exec,
/// and `closeConnections()` lets go of the handles (with the socket pair
/// libcurl keeps beside each) before the process becomes another program.
public final class CurlTransport: HTTPTransport, Sendable {
    /// Handles no request is using, the last given back last.
    private let idle = Mutex<[HandleBox]>([])
    /// The DNS answers and TLS sessions the handles share, made with the
    /// first handle; nil until then, or when libcurl refused it (each
    /// handle then keeps its own).
    private let shared = Mutex<ShareBox?>(nil)

    /// Whole seconds a connection may have idled and still carry a request
    /// that must not go out twice (libcurl compares whole seconds: 0 is
    /// "idle less than a second"): the steps of a sign-in with no person in
    /// between are milliseconds apart; after a prompt, a fresh connection.
    static let freshAge = 0
    /// The same for repeatable requests (libcurl's own default is 118 s).
    static let keptAge = 30
    /// Idle handles kept, at most: as many as requests an agent commonly
    /// has in flight at once; one more is made when needed, and let go after.
    static let idleLimit = 8

    public init() {}

    deinit {
        closeConnections()
        shared.withLock { box in
            if let share = box?.share { ccurl_share_free(share) }
            box = nil
        }
    }

    /// Closes the kept connections and the idle handles; a later request
    /// makes a new one. For `exec`, before the process becomes its command.
    public func closeConnections() {
        let handles = idle.withLock { handles in
            defer { handles = [] }
            return handles
        }
        for box in handles { ccurl_easy_cleanup(box.handle) }
    }

    /// A handle or the share, which Swift cannot mark Sendable itself.
    private final class HandleBox: @unchecked Sendable {
        let handle: UnsafeMutableRawPointer
        init(_ handle: UnsafeMutableRawPointer) { self.handle = handle }
    }
    private final class ShareBox: @unchecked Sendable {
        let share: OpaquePointer
        init(_ share: OpaquePointer) { self.share = share }
    }

    /// The response body is collected here by the write callback.
    private final class Sink {
        var data = Data()
        /// Cognito answers are a few KiB; stop a runaway peer well before memory matters.
        let limit = 4 << 20
        var overflowed = false
        /// Set when an option could not be set; nothing was sent then.
        var refusedOption: String?
        /// The request may go out more than once (libcurl re-sends it when a
        /// reused connection dies before any answer).
        var repeatable = false
        /// How many times libcurl was about to send the request.
        var sendings = 0
        /// libcurl was stopped from sending it a second time.
        var resendStopped: Bool { !repeatable && sendings > 1 }
    }

    /// Starts loading libcurl on a thread (CCurl.h says why), so that it is
    /// ready, or nearly, by the first request.
    public static func preload() {
        ccurl_load_in_background()
    }

    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        guard ccurl_load() != 0 else {
            let why = ccurl_load_failure().map { String(cString: $0) } ?? "unknown"
            throw TransportError(.other, "libcurl cannot be loaded (\(why)); install libcurl4", nothingSent: true)
        }
        CurlTransport.globalInit
        let box: HandleBox
        if let kept = idle.withLock({ $0.popLast() }) {
            ccurl_easy_reset(kept.handle)
            box = kept
        } else {
            guard let handle = ccurl_easy_init() else { throw TransportError(.other, "libcurl could not start") }
            box = HandleBox(handle)
        }
        defer {
            let surplus = idle.withLock { handles -> HandleBox? in
                guard handles.count < CurlTransport.idleLimit else { return box }
                handles.append(box)
                return nil
            }
            if let surplus { ccurl_easy_cleanup(surplus.handle) }
        }
        return try perform(request, on: box.handle, sharing: share())
    }

    /// The share, made once; nil when libcurl refused to make it.
    private func share() -> OpaquePointer? {
        shared.withLock { box in
            if box == nil, let share = ccurl_share_new() { box = ShareBox(share) }
            return box?.share
        }
    }

    private func perform(_ request: HTTPRequest, on handle: UnsafeMutableRawPointer, sharing share: OpaquePointer?) throws(TransportError)
        -> HTTPResponse
    {
        var headerList: UnsafeMutablePointer<curl_slist>? = nil
        for (name, value) in request.headers {
            headerList = ccurl_slist_append(headerList, "\(name): \(value)")
        }
        // libcurl adds "Expect: 100-continue" for larger bodies; Cognito does not need the extra round trip.
        headerList = ccurl_slist_append(headerList, "Expect:")
        defer { ccurl_slist_free_all(headerList) }

        let sink = Sink()
        sink.repeatable = request.repeatable
        let context = Unmanaged.passUnretained(sink).toOpaque()
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

        let code: CURLcode = withExtendedLifetime(sink) {
            errorBuffer.withUnsafeMutableBufferPointer { errorPointer in
                // Every option must take: one an older libcurl ignores (the
                // protocol limit, say) must stop the request, not weaken it.
                var refused: (option: String, code: CURLcode)? = nil
                func set(_ name: String, _ result: CURLcode) {
                    if result != CURLE_OK && refused == nil { refused = (name, result) }
                }
                set("URL", ccurl_setopt_string(handle, CURLOPT_URL, request.url))
                set("NOSIGNAL", ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
                if let share { set("SHARE", ccurl_setopt_share(handle, share)) }
                if request.method == "GET" {
                    set("HTTPGET", ccurl_setopt_long(handle, CURLOPT_HTTPGET, 1))
                } else {
                    set("POST", ccurl_setopt_long(handle, CURLOPT_POST, 1))
                    set("POSTFIELDSIZE", ccurl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, request.body.count))
                    request.body.withUnsafeBytes { raw in
                        // COPYPOSTFIELDS copies, so the buffer need not outlive this call.
                        let fields = UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!)
                        set("COPYPOSTFIELDS", ccurl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, fields))
                    }
                }
                set("HTTPHEADER", ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList))
                set("USERAGENT", ccurl_setopt_string(handle, CURLOPT_USERAGENT, "cog-cred/\(cogCredVersion)"))
                // HTTPS only, unless the endpoint was allowed plain HTTP
                // (Endpoint.resolve); no redirects: a credential request must
                // not wander.
                set("PROTOCOLS_STR", ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, request.allowsCleartext ? "http,https" : "https"))
                set("FOLLOWLOCATION", ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
                // The route ProxySettings chose, by libcurl's own rules: its
                // proxy, or "" for none, which stops libcurl reading the
                // variables again (NO_PROXY is applied already).
                set("PROXY", ccurl_setopt_string(handle, CURLOPT_PROXY, request.route.proxy?.setting ?? ""))
                set("NOPROXY", ccurl_setopt_string(handle, CURLOPT_NOPROXY, ""))
                set("OPENSOCKETFUNCTION", ccurl_setopt_cloexec_sockets(handle))
                set("MAXAGE_CONN", ccurl_setopt_long(handle, CURLOPT_MAXAGE_CONN, request.repeatable ? CurlTransport.keptAge : CurlTransport.freshAge))
                let forwarded = request.route.proxy?.forwards == true && Endpoint.isPlainHTTP(request.url)
                set("FRESH_CONNECT", ccurl_setopt_long(handle, CURLOPT_FRESH_CONNECT, !request.repeatable && forwarded ? 1 : 0))
                set("CONNECTTIMEOUT_MS", ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(request.connectTimeout * 1000))))
                set("TIMEOUT_MS", ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, max(1, Int(request.totalTimeout * 1000))))
                set("ERRORBUFFER", ccurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorPointer.baseAddress))
                if let caBundle = request.caBundle.path { set("CAINFO", ccurl_setopt_string(handle, CURLOPT_CAINFO, caBundle)) }
                set("WRITEDATA", ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, context))
                set("WRITEFUNCTION", ccurl_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                    guard let data, let context else { return 0 }
                    let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
                    let n = size * count
                    if sink.data.count + n > sink.limit {
                        sink.overflowed = true
                        return 0  // tells libcurl to abort the transfer
                    }
                    data.withMemoryRebound(to: UInt8.self, capacity: n) { sink.data.append($0, count: n) }
                    return n
                })
                set("PREREQDATA", ccurl_setopt_pointer(handle, CURLOPT_PREREQDATA, context))
                set("PREREQFUNCTION", ccurl_setopt_prereq_callback(handle) { context, _, _, _, _ in
                    guard let context else { return CURL_PREREQFUNC_ABORT }
                    let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
                    sink.sendings += 1
                    return sink.resendStopped ? CURL_PREREQFUNC_ABORT : CURL_PREREQFUNC_OK
                })
                if let refused {
                    sink.refusedOption = "libcurl refused CURLOPT_\(refused.option): \(String(cString: ccurl_easy_strerror(refused.code)))"
                    return refused.code
                }
                return ccurl_easy_perform(handle)
            }
        }

        guard code == CURLE_OK else {
            if let refused = sink.refusedOption { throw TransportError(.other, refused, nothingSent: true) }
            let detail = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            // Without curl's "after 5001 milliseconds": one attempt's time,
            // which the error of a retried request would understate
            // (TransportError.gaveUp says the whole wait).
            // And libcurl's message only when it holds no user name or
            // password of the URL or the proxy, which it could echo: else
            // its words for the code alone.
            let generic = String(cString: ccurl_easy_strerror(code))
            let said = LibcurlURL.scrubbing(
                detail.isEmpty ? generic : detail, of: [request.url] + (request.route.proxy.map { [$0.setting] } ?? []), instead: generic)
            let text = said.replacing(#/ after \d+ (?:ms|milliseconds)/#, with: "")
            if sink.overflowed { throw TransportError(.other, "the response was larger than \(sink.limit) bytes") }
            // Nothing was sent only when libcurl never got to send it: a
            // refusal after a sending is libcurl's own reconnect, once a kept
            // connection died under the request, and the server may have
            // acted on what it had read.
            let nothingSent = sink.sendings == 0
            let reconnectFailed = !nothingSent && [CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY].contains(code)
            if sink.resendStopped || (!request.repeatable && reconnectFailed) {
                throw TransportError(.connectionFailed, "the connection closed before any answer; the request may have arrived, so it is not sent again")
            }
            let proxy = request.route.proxy
            let kind = proxy == nil ? CurlTransport.kind(of: code) : CurlTransport.proxyKind(of: code, on: handle)
            throw TransportError(kind, text, nothingSent: nothingSent, proxy: proxy)
        }
        var status = 0
        ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        // A proxy forwarding plain HTTP answers 407 itself; the services never do.
        if status == 407, let proxy = request.route.proxy {
            throw TransportError(.proxyRefused, "the proxy answered 407 Proxy Authentication Required", nothingSent: true, proxy: proxy)
        }
        return HTTPResponse(status: status, body: sink.data)
    }

    /// A failure through a proxy: the proxy's refusal (a CONNECT answered
    /// 407 or 401; a SOCKS server rejecting the user), the proxy out of reach
    /// (libcurl connects to nothing else), or what lies beyond it.
    static func proxyKind(of code: CURLcode, on handle: UnsafeMutableRawPointer) -> TransportError.Kind {
        var connectStatus = 0
        ccurl_getinfo_long(handle, CURLINFO_HTTP_CONNECTCODE, &connectStatus)
        var socksError = 0
        ccurl_getinfo_long(handle, CURLINFO_PROXY_ERROR, &socksError)
        let refusals = [CURLPX_USER_REJECTED, CURLPX_NO_AUTH].map { Int($0.rawValue) }
        // A CONNECT's answer is the proxy's own, never the service's; some
        // proxies (tinyproxy) answer wrong credentials with 401, not 407.
        if connectStatus == 407 || connectStatus == 401 || (code == CURLE_PROXY && refusals.contains(socksError)) { return .proxyRefused }
        if code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_PROXY { return .proxyUnreachable }
        return kind(of: code)
    }

    static func kind(of code: CURLcode) -> TransportError.Kind {
        switch code {
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY,
            CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_PROXY:
            return .connectionFailed
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_CERTPROBLEM, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE:
            return .tls
        default:
            return .other
        }
    }

    /// curl_global_init is not thread-safe; a lazy global runs it exactly once.
    private static let globalInit: Void = {
        ccurl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()
}
