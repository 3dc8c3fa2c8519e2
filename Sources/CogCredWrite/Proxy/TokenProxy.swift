import CCurl
import CLinux
import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `cog-cred proxy`: a local HTTP/1.1 reverse proxy (libmicrohttpd) that
/// sends every request on to one upstream (libcurl) with a token of the
/// profile's session in it, for clients that cannot run a helper and for
/// processes that outlive a token.
///
/// - Only its own user (and root) is served: a loopback port is every
///   local user's to reach, so the uid on the other end of each connection
///   is asked of the kernel (sock_diag for TCP, SO_PEERCRED for a UNIX
///   socket), and anyone else gets 403 with nothing sent upstream. Others
///   hold at most `othersLimit` connections at once, each for 2 s of
///   silence: they cannot crowd out the user's own.
/// - It is a reverse proxy for one upstream: an absolute-URI request and
///   CONNECT (a client taking it for a forward proxy) are refused.
/// - Bounded for whoever reaches it: at most `connectionLimit` connections,
///   each closed after `idleSeconds` without traffic; bodies pass through
///   channels of a fixed size; no thread a connection or a request (an
///   event loop a processor, ProxyLoop), and the session read off them.
public final class TokenProxy: @unchecked Sendable {
    public struct Settings: Sendable {
        public var upstream: ProxyUpstream
        /// The header that carries the raw token instead of
        /// `Authorization: Bearer` (API Gateway's authorizer can read another).
        public var tokenHeader: String?
        /// A PEM file of CA certificates for the upstream's TLS
        /// (--ca-bundle); nil: the system's trust store.
        public var caBundle: String?
        /// The user served, besides root.
        public var user: uid_t
        /// A UNIX socket's peer is asked with SO_PEERCRED, a TCP one's of sock_diag.
        public var unixSocket: Bool
        public var connectionLimit: UInt32 = 256
        public var idleSeconds: UInt32 = 60
        /// Connections other users may hold at once (each gets its 403).
        public var othersLimit = 8
        public var othersIdleSeconds: UInt32 = 2

        public init(upstream: ProxyUpstream, tokenHeader: String?, caBundle: String?, user: uid_t, unixSocket: Bool) {
            self.upstream = upstream
            self.tokenHeader = tokenHeader
            self.caBundle = caBundle
            self.user = user
            self.unixSocket = unixSocket
        }
    }

    /// One line a request, when asked for (--verbose): method, path,
    /// status, milliseconds; never a query, a header or a token.
    public typealias Log = @Sendable (_ method: String, _ path: String, _ status: Int, _ milliseconds: Double) -> Void

    let settings: Settings
    let tokens: ProxyTokens
    let log: Log?
    /// The request headers that never go on (RequestHeaders.dropped).
    let dropped: [[UInt8]]
    private var loops: [ProxyLoop] = []
    private var listening: Int32 = -1
    /// Connections of other users open now.
    private let others = Atomic(0)
    private var mutex = pthread_mutex_t()
    private var idle = pthread_cond_t()
    private var inFlight = 0

    public init(_ settings: Settings, tokens: ProxyTokens, log: Log?) {
        self.settings = settings
        self.tokens = tokens
        self.log = log
        dropped = RequestHeaders.dropped(tokenHeader: settings.tokenHeader)
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&idle, nil)
    }

    public enum StartFailure: Error, Sendable, Equatable {
        case libraryMissing(String)
        case libcurlMissing(String)
        case cannotStart
    }

    /// An event loop per processor, up to 4: the first accepts from the
    /// listening socket and hands each connection to the loops in turn,
    /// and each serves its connections to their end. The processors are
    /// those the proxy may run on (taskset, a container's cpuset), not all
    /// the machine's: loops beyond them would only take turns on one.
    static var loopCount: Int {
        let usable = Int(clinux_cpus_usable())
        return min(max(usable > 0 ? usable : sysconf(Int32(_SC_NPROCESSORS_ONLN)), 1), 4)
    }

    /// Serves on `listening`, a socket listening already, until `stop`.
    public func start(listening fd: Int32) throws(StartFailure) {
        guard cmhd_load() != 0 else {
            throw .libraryMissing(cmhd_load_failure().map { String(cString: $0) } ?? "unknown")
        }
        guard ccurl_load() != 0 else { throw .libcurlMissing(ccurl_load_failure().map { String(cString: $0) } ?? "unknown") }
        _ = TokenProxy.curlReady
        listening = fd
        let count = TokenProxy.loopCount
        let limit = (settings.connectionLimit + UInt32(count) - 1) / UInt32(count)
        for _ in 0..<count {
            guard let loop = ProxyLoop(proxy: self), let daemon = startDaemon(limit: limit, loop: loop) else { throw .cannotStart }
            guard loop.serve(daemon) else {
                cmhd_stop(daemon)
                throw .cannotStart
            }
            loops.append(loop)
        }
        guard loops[0].accept(on: fd, for: loops) else { throw .cannotStart }
        for (started, loop) in loops.enumerated() where !loop.start() {
            loops = Array(loops[..<started])
            stop(grace: 0)
            throw .cannotStart
        }
    }

    /// A daemon whose callbacks have `loop` as their context.
    private func startDaemon(limit: UInt32, loop: ProxyLoop) -> OpaquePointer? {
        cmhd_start(
            limit, settings.idleSeconds,
            { context, address, length in
                // Before anything is read: another user's connection is
                // taken only while few of them are open.
                let loop = Unmanaged<ProxyLoop>.fromOpaque(context!).takeUnretainedValue()
                return loop.proxy.accepts(address, length) ? .YES : .NO
            }, Unmanaged.passUnretained(loop).toOpaque(),
            { context, target, _ in
                // Each request's own object, made with its target as sent.
                let loop = Unmanaged<ProxyLoop>.fromOpaque(context!).takeUnretainedValue()
                return Unmanaged.passRetained(ProxyRequest(target: String(cString: target!), loop: loop)).toOpaque()
            }, Unmanaged.passUnretained(loop).toOpaque(),
            { _, connection, _, method, _, data, size, request in
                guard let connection, let method, let size, let pointer = request?.pointee else { return .NO }
                let request = Unmanaged<ProxyRequest>.fromOpaque(pointer).takeUnretainedValue()
                return request.step(connection, method: method, data: data, size: size) ? .YES : .NO
            }, nil,
            { _, _, request, _ in
                guard let pointer = request?.pointee else { return }
                request?.pointee = nil
                Unmanaged<ProxyRequest>.fromOpaque(pointer).takeRetainedValue().finished()
            }, nil,
            { context, connection, socketContext, event in
                // Whether the connection's peer is served, kept for its requests.
                guard let context, let connection, let socketContext else { return }
                let proxy = Unmanaged<ProxyLoop>.fromOpaque(context).takeUnretainedValue().proxy
                if event.rawValue == 0 {  // MHD_CONNECTION_NOTIFY_STARTED
                    let admitted = proxy.peerServed(connection)
                    if !admitted {
                        proxy.others.add(1, ordering: .relaxed)
                        cmhd_set_timeout(connection, proxy.settings.othersIdleSeconds)
                    }
                    // Any non-nil pointer: served.
                    socketContext.pointee = admitted ? UnsafeMutableRawPointer(bitPattern: 1) : nil
                } else if socketContext.pointee == nil {
                    proxy.others.subtract(1, ordering: .relaxed)
                }
            }, Unmanaged.passUnretained(loop).toOpaque())
    }

    private let quiesce = Atomic(false)
    private let finish = Atomic(false)
    /// The loops stop taking connections.
    var quiescing: Bool { quiesce.load(ordering: .relaxed) }
    /// The loops close every connection and end.
    var finishing: Bool { finish.load(ordering: .relaxed) }

    /// Stops taking connections, lets the requests in flight finish for up
    /// to `grace` seconds, then closes everything.
    public func stop(grace: Double) {
        quiesce.store(true, ordering: .relaxed)
        for loop in loops { loop.poke() }
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let whole = grace.rounded(.down)
        deadline.tv_sec += Int(whole)
        deadline.tv_nsec += Int((grace - whole) * 1e9)
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        pthread_mutex_lock(&mutex)
        while inFlight > 0 && pthread_cond_timedwait(&idle, &mutex, &deadline) == 0 {}
        pthread_mutex_unlock(&mutex)
        finish.store(true, ordering: .relaxed)
        for loop in loops { loop.poke() }
        for loop in loops { loop.join() }
        loops = []
    }

    func began() {
        pthread_mutex_lock(&mutex)
        inFlight += 1
        pthread_mutex_unlock(&mutex)
    }

    func ended() {
        pthread_mutex_lock(&mutex)
        inFlight -= 1
        if inFlight == 0 { pthread_cond_broadcast(&idle) }
        pthread_mutex_unlock(&mutex)
    }

    /// Whether a connection from `address` is taken: always from the user
    /// served (or over a UNIX socket, 0600), from others while few are open.
    func accepts(_ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Bool {
        guard !settings.unixSocket, let address else { return true }
        var uid: UInt32 = 0
        let known = clinux_tcp_client_uid(address, length, listening, &uid) == 0
        if known && (uid == settings.user || uid == 0) { return true }
        return others.load(ordering: .relaxed) < settings.othersLimit
    }

    /// The user at the other end of `connection` is served (as found when it opened).
    func admitted(_ connection: OpaquePointer) -> Bool { cmhd_connection_context(connection) != nil }

    /// Whether the user at the other end of `connection` is served.
    func peerServed(_ connection: OpaquePointer) -> Bool {
        let fd = cmhd_connection_fd(connection)
        var uid: UInt32 = 0
        var pid: Int32 = 0
        var found = false
        if settings.unixSocket {
            found = clinux_peer(fd, &uid, &pid) == 0
        } else if let owner = LoopbackPeer.ownerUID(of: fd) {
            (found, uid) = (true, owner)
        }
        // A peer the kernel cannot name (another network namespace, a socket gone) is nobody served.
        return found && (uid == settings.user || uid == 0)
    }

    /// libcurl's global set-up, once (curl_global_init is not thread-safe).
    private static let curlReady: Void = { ccurl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()
}
