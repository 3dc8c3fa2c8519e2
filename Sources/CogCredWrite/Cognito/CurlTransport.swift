import CCurl
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// HTTPS through libcurl, the system's well-tested HTTP client.
///
/// One easy handle for the transport's life (the command's: Wiring keeps
/// one), reset before each request: its connection cache and TLS sessions
/// stay, so a command's requests pay one TCP and TLS set-up per host (a
/// sign-in's three to five to cognito-idp; `aws-credentials`' to
/// cognito-identity and STS), as the AWS SDKs' do.
///
/// The trap of a kept connection: when one dies under a request before any
/// answer, libcurl sends the request again by itself on a new connection,
/// and the server may have acted on the first. A request that must not go
/// out twice (`HTTPRequest.repeatable` false: a code, a challenge's answer,
/// a device to confirm) is guarded twice:
/// - it reuses only a connection idle less than a second (`freshAge`),
///   so after a person's pause it goes on a new connection rather than on
///   one the server may be closing;
/// - libcurl's own second sending of it is stopped (`Sink.sendings`, the
///   PREREQFUNCTION libcurl calls before each): the command fails saying
///   the request may have arrived, and RetryingPost does not repeat it.
///
/// Kept connections stay this process's: their sockets are close-on-exec,
/// and `closeConnections()` lets go of the handle (with the socket pair
/// libcurl keeps beside it) before the process becomes another program.
public final class CurlTransport: HTTPTransport, Sendable {
    /// curl's handle, or nil before the first request. Requests take turns.
    private let kept = Mutex<HandleBox?>(nil)

    /// Whole seconds a connection may have idled and still carry a request
    /// that must not go out twice (libcurl compares whole seconds: 0 is
    /// "idle less than a second"): the steps of a sign-in with no person in
    /// between are milliseconds apart; after a prompt, a fresh connection.
    static let freshAge = 0
    /// The same for repeatable requests (libcurl's own default is 118 s).
    static let keptAge = 30

    public init() {}

    deinit { closeConnections() }

    /// Closes the kept connections and the handle; a later request makes a
    /// new one. For `exec`, before the process becomes its command.
    public func closeConnections() {
        kept.withLock { box in
            if let handle = box?.handle { ccurl_easy_cleanup(handle) }
            box = nil
        }
    }

    /// The handle, which Swift cannot mark Sendable itself.
    private final class HandleBox: @unchecked Sendable {
        let handle: UnsafeMutableRawPointer
        init(_ handle: UnsafeMutableRawPointer) { self.handle = handle }
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
        return try kept.withLock { (box: inout HandleBox?) throws(TransportError) -> HTTPResponse in
            if let box {
                ccurl_easy_reset(box.handle)
            } else {
                guard let handle = ccurl_easy_init() else { throw TransportError(.other, "libcurl could not start") }
                box = HandleBox(handle)
            }
            return try perform(request, on: box!.handle)
        }
    }

    private func perform(_ request: HTTPRequest, on handle: UnsafeMutableRawPointer) throws(TransportError) -> HTTPResponse {

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
                set("CONNECTTIMEOUT_MS", ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(request.connectTimeout * 1000))))
                set("TIMEOUT_MS", ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, max(1, Int(request.totalTimeout * 1000))))
                set("ERRORBUFFER", ccurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorPointer.baseAddress))
                if let caBundle = request.caBundle { set("CAINFO", ccurl_setopt_string(handle, CURLOPT_CAINFO, caBundle)) }
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
            // And without a URL's credentials, which libcurl echoes when it
            // cannot read a proxy setting.
            let said = detail.isEmpty ? String(cString: ccurl_easy_strerror(code)) : detail
            let text = withoutURLCredentials(said.replacing(#/ after \d+ (?:ms|milliseconds)/#, with: ""))
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
