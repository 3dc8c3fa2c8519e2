import CCurl
import CLinux
import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One of the proxy's event loops, on a thread of its own: a libmicrohttpd
/// daemon and a libcurl multi handle, both watched by one epoll (the first
/// loop also accepts, and hands each connection to the loops in turn). A
/// request the daemon takes is served here from its head to its last byte:
/// its transfer to the upstream runs in the multi, and while it waits, its
/// client's connection is suspended (cmhd_suspend), not a thread. So a loop
/// takes what is ready in batches, as nginx's workers do, where a thread
/// per connection made two context switches a request (bench/notes.md).
/// Other threads only `post` work to it and `poke` it.
final class ProxyLoop: @unchecked Sendable {
    private static let daemonTag = UInt64.max
    private static let wakeTag = UInt64.max - 1
    private static let listeningTag = UInt64.max - 2

    let proxy: TokenProxy
    private let multi: UnsafeMutableRawPointer
    private let epoll: Int32
    private let wake: Int32
    private var daemon: OpaquePointer?
    /// The listening socket, on the loop that accepts (-1 on the others,
    /// and once the proxy stops taking connections).
    private var listening: Int32 = -1
    /// Every loop, the accepting one's turn about for its connections.
    private var loops: [ProxyLoop] = []
    private var turn = 0
    /// Out of descriptors (EMFILE, ENFILE): the listening socket is left
    /// unwatched until then, instead of waking the loop at once, again and again.
    private var acceptAgain: ContinuousClock.Instant?
    /// When libcurl asked to be run for its timers (nil: not asked).
    private var curlDeadline: ContinuousClock.Instant?
    /// The sockets in the epoll for libcurl, and those of them libcurl
    /// watches now. A socket libcurl stops watching (a kept connection
    /// between two requests) stays in the epoll, so that the next request
    /// changes its events instead of adding it again: one epoll_ctl a
    /// request less. If it reports anything meanwhile (the upstream closed
    /// it), it is taken out then; once closed, the kernel drops it.
    private var registered: Set<Int32> = []
    private var watched: Set<Int32> = []
    /// A connection was resumed: the daemon runs before the loop waits.
    var resumed = false
    /// The requests whose connections are suspended.
    var suspended: [ObjectIdentifier: ProxyRequest] = [:]
    /// Easy handles not in use, kept configured: the multi keeps the
    /// upstream connections (its cache), so any handle reuses any of them.
    private var spare: [UpstreamLink] = []
    /// The transfers in the multi, by their easy handle.
    private var running: [UnsafeMutableRawPointer: UpstreamExchange] = [:]
    private var thread: pthread_t?
    /// Work handed to the loop by other threads (a token read), run on its own.
    private let posted = Mutex<[@Sendable () -> Void]>([])

    init?(proxy: TokenProxy) {
        guard let multi = ccurl_multi_init() else { return nil }
        self.proxy = proxy
        self.multi = multi
        epoll = clinux_epoll_new()
        wake = clinux_eventfd()
        guard epoll >= 0, wake >= 0, clinux_epoll_watch(epoll, wake, 1, 0, ProxyLoop.wakeTag, 0) == 0 else { return nil }
        let me = Unmanaged.passUnretained(self).toOpaque()
        let watching = ccurl_multi_watch(
            multi,
            { _, socket, what, context, _ in
                Unmanaged<ProxyLoop>.fromOpaque(context!).takeUnretainedValue().watch(socket, what)
                return 0
            },
            { _, milliseconds, context in
                let loop = Unmanaged<ProxyLoop>.fromOpaque(context!).takeUnretainedValue()
                loop.curlDeadline = milliseconds < 0 ? nil : .now + .milliseconds(milliseconds)
                return 0
            }, me)
        // The multi's own bound is 4 connections a transfer running: when
        // few run for a moment, it closed kept connections that the next
        // burst had to open again (about 60 a second under wrk, each a
        // connect for the proxy and an accept for the upstream). As many
        // as nginx keeps a worker (the reference's `keepalive 32`).
        guard watching == CURLM_OK, ccurl_multi_keep(multi, ProxyLoop.keptConnections) == CURLM_OK else { return nil }
    }

    /// Idle connections to the upstream a loop keeps.
    static let keptConnections = 32

    deinit {
        spare = []
        ccurl_multi_cleanup(multi)
        if epoll >= 0 { close(epoll) }
        if wake >= 0 { close(wake) }
    }

    /// Serves `daemon` (made with this loop as its callbacks' context).
    func serve(_ daemon: OpaquePointer) -> Bool {
        self.daemon = daemon
        return clinux_epoll_watch(epoll, cmhd_epoll_fd(daemon), 1, 0, ProxyLoop.daemonTag, 0) == 0
    }

    /// This loop accepts the connections of `fd` and hands them to each of `loops` in turn.
    func accept(on fd: Int32, for loops: [ProxyLoop]) -> Bool {
        listening = fd
        self.loops = loops
        // Non-blocking: the loop accepts until none waits.
        return clinux_set_blocking(fd, 0) == 0 && clinux_epoll_watch(epoll, fd, 1, 0, ProxyLoop.listeningTag, 0) == 0
    }

    /// Runs the loop on a thread of its own.
    func start() -> Bool {
        var thread = pthread_t()
        let me = Unmanaged.passRetained(self).toOpaque()
        guard pthread_create(&thread, nil, { context in
            let loop = Unmanaged<ProxyLoop>.fromOpaque(context!).takeRetainedValue()
            loop.run()
            return nil
        }, me) == 0 else {
            Unmanaged<ProxyLoop>.fromOpaque(me).release()
            return false
        }
        self.thread = thread
        return true
    }

    /// Runs `work` on the loop's thread, soon.
    func post(_ work: @escaping @Sendable () -> Void) {
        posted.withLock { $0.append(work) }
        poke()
    }

    /// Has the loop look at the proxy's state (stopping) and what was posted.
    func poke() {
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    /// Waits for the loop's thread to end (after the proxy finished).
    func join() {
        if let thread { pthread_join(thread, nil) }
        thread = nil
    }

    private func run() {
        var tags = [UInt64](repeating: 0, count: 64)
        var events = [UInt32](repeating: 0, count: 64)
        while !proxy.finishing {
            if proxy.quiescing && listening >= 0 {
                _ = clinux_epoll_forget(epoll, listening)
                listening = -1
            }
            let daemonWait = daemon.map { cmhd_timeout($0) } ?? -1
            if let again = acceptAgain, again <= .now, listening >= 0 {
                acceptAgain = nil
                _ = clinux_epoll_watch(epoll, listening, 1, 0, ProxyLoop.listeningTag, 0)
            }
            var wait = resumed ? 0 : daemonWait
            func until(_ deadline: ContinuousClock.Instant?) {
                guard let deadline else { return }
                let milliseconds = max(0, Int((deadline - .now) / .milliseconds(1)) + 1)
                wait = wait < 0 ? milliseconds : min(wait, milliseconds)
            }
            until(curlDeadline)
            until(acceptAgain)
            let count = clinux_epoll_wait(epoll, &tags, &events, 64, Int32(clamping: wait))
            var daemonReady = count == 0 || daemonWait == 0
            for i in 0..<max(Int(count), 0) {
                switch tags[i] {
                case ProxyLoop.daemonTag: daemonReady = true
                case ProxyLoop.listeningTag: acceptWaiting()
                case ProxyLoop.wakeTag:
                    var value: UInt64 = 0
                    _ = read(wake, &value, 8)
                    let work = posted.withLock { work in
                        defer { work = [] }
                        return work
                    }
                    for each in work { each() }
                default:
                    let socket = curl_socket_t(truncatingIfNeeded: tags[i])
                    guard watched.contains(socket) else {
                        registered.remove(socket)
                        _ = clinux_epoll_forget(epoll, socket)
                        continue
                    }
                    // The events come as libcurl's CURL_CSELECT bits (clinux_epoll_wait).
                    let what = Int32(events[i])
                    var left: Int32 = 0
                    _ = ccurl_multi_socket_action(multi, socket, what, &left)
                }
            }
            runCurl()
            if (daemonReady || resumed), let daemon {
                resumed = false
                cmhd_run(daemon)
                // What the daemon's handlers started (libcurl asks at once).
                runCurl()
            }
        }
        if let daemon {
            // libmicrohttpd stops only with no connection suspended: each
            // request still waiting gives up its transfer (a 502, or a
            // body cut short) and goes on to its end.
            for _ in 0..<4 where !suspended.isEmpty {
                for request in suspended.values { request.abandon() }
                cmhd_run(daemon)
                runCurl()
            }
            cmhd_stop(daemon)
        }
        daemon = nil
        loops = []  // the accepting loop held every loop, itself among them
    }

    /// Takes the connections waiting (a few dozen at a time: the socket
    /// stays readable for the rest) and gives each to the next loop.
    private func acceptWaiting() {
        for _ in 0..<32 {
            var address = sockaddr_storage()
            var length: UInt32 = 0
            let fd = clinux_accept_from(listening, &address, &length)
            guard fd >= 0 else {
                if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
                    _ = clinux_epoll_forget(epoll, listening)
                    acceptAgain = .now + .milliseconds(100)
                }
                return
            }
            let loop = loops.isEmpty ? self : loops[turn % loops.count]
            turn &+= 1
            if loop === self {
                add(fd, address, length)
            } else {
                let (address, length) = (address, length)
                loop.post { loop.add(fd, address, length) }
            }
        }
    }

    /// A connection for the daemon (which closes it if it refuses it).
    private func add(_ fd: Int32, _ address: sockaddr_storage, _ length: UInt32) {
        guard let daemon, !proxy.finishing else {
            close(fd)
            return
        }
        var address = address
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { cmhd_add_connection(daemon, fd, $0, length) }
        }
    }

    /// libcurl's timers that are due, then the transfers that ended.
    private func runCurl() {
        var turns = 0
        while let deadline = curlDeadline, deadline <= .now, turns < 16 {
            curlDeadline = nil
            var left: Int32 = 0
            _ = ccurl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &left)
            turns += 1
        }
        var code = CURLE_OK
        while let easy = ccurl_multi_finished(multi, &code) {
            running[easy]?.ended(code)
        }
    }

    private func watch(_ socket: curl_socket_t, _ what: Int32) {
        if what == CURL_POLL_REMOVE {
            watched.remove(socket)
            return
        }
        let readable: Int32 = what & CURL_POLL_IN != 0 ? 1 : 0
        let writable: Int32 = what & CURL_POLL_OUT != 0 ? 1 : 0
        if clinux_epoll_watch(epoll, socket, readable, writable, UInt64(socket), registered.contains(socket) ? 1 : 0) == 0 {
            registered.insert(socket)
            watched.insert(socket)
        }
    }

    /// An easy handle for a transfer.
    func link() -> UpstreamLink? { spare.popLast() ?? UpstreamLink() }

    /// Starts `exchange`'s transfer on `link`; false when libcurl would not.
    func add(_ exchange: UpstreamExchange, on link: UpstreamLink) -> Bool {
        guard ccurl_multi_add(multi, link.easy) == CURLM_OK else { return false }
        running[link.easy] = exchange
        return true
    }

    /// Takes the transfer on `link` out of the multi (ended, or its client gone).
    func remove(_ link: UpstreamLink) {
        ccurl_multi_remove(multi, link.easy)
        running[link.easy] = nil
    }

    /// `link` is free for another transfer.
    func giveBack(_ link: UpstreamLink) { spare.append(link) }
}
