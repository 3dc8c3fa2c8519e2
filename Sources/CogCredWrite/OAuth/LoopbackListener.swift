#if canImport(Glibc)
import Glibc
#endif

/// The redirect URI's end of a browser sign-in (RFC 8252 7.3): TCP
/// listeners at the redirect URI's port, on 127.0.0.1 and, for `localhost`,
/// on ::1 as well (RFC 8252 8.3: a browser may try either, and a port left
/// free on one of them is another local user's to take). It takes requests
/// from this user's processes only, several at a time, so that no
/// connection can hold up the browser's.
public final class LoopbackListener {
    let sockets: [Int32]
    public let port: UInt16
    /// The redirect URI's host, `localhost` or `127.0.0.1`.
    public let host: String
    /// The redirect URI's path, such as `/callback`.
    public let path: String
    /// Connections accepted whose request has not come in whole yet.
    var waiting: [Connection] = []

    /// Listens at `redirectURI` (`http://localhost:PORT/PATH` or
    /// `http://127.0.0.1:PORT/PATH`).
    public init(redirectURI: String) throws(LoopbackError) {
        guard let (host, port, path) = LoopbackListener.parse(redirectURI) else { throw .notLoopback(redirectURI) }
        self.host = host
        self.port = port
        self.path = path
        var sockets: [Int32] = []
        do {
            sockets.append(try LoopbackListener.listen(family: AF_INET, port: port)!)
            if host == "localhost", let six = try LoopbackListener.listen(family: AF_INET6, port: port) { sockets.append(six) }
        } catch {
            for fd in sockets { close(fd) }
            throw error
        }
        self.sockets = sockets
    }

    deinit {
        for fd in sockets { close(fd) }
        for connection in waiting { close(connection.fd) }
    }

    /// A listening socket on the loopback address of `family`; nil for
    /// IPv6 on a machine without it (no ::1: then nobody can listen there).
    static func listen(family: Int32, port: UInt16) throws(LoopbackError) -> Int32? {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        if fd < 0 && family == AF_INET6 && errno == EAFNOSUPPORT { return nil }
        guard fd >= 0 else { throw .failed(String(cString: strerror(errno))) }
        var one: Int32 = 1
        // A listener of an earlier sign-in in TIME_WAIT must not block this one.
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 {
            // ::1 only: 127.0.0.1 has a socket of its own.
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = LoopbackListener.withLoopbackAddress(family: family, port: port) { bind(fd, $0, $1) }
        guard bound == 0, Glibc.listen(fd, 16) == 0 else {
            let code = errno
            close(fd)
            if family == AF_INET6 && code == EADDRNOTAVAIL { return nil }
            throw code == EADDRINUSE || code == EACCES ? .portTaken(port) : .failed(String(cString: strerror(code)))
        }
        return fd
    }

    /// Calls `body` with 127.0.0.1:`port` (AF_INET) or [::1]:`port` (AF_INET6)
    /// as a socket address and its length.
    static func withLoopbackAddress<R>(family: Int32, port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        func call<A>(_ address: inout A) -> R {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<A>.size)) }
            }
        }
        if family == AF_INET6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = in6addr_loopback
            return call(&address)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return call(&address)
    }

    /// `http://localhost:8400/callback` → ("localhost", 8400, "/callback");
    /// nil for anything but plain HTTP to localhost or 127.0.0.1 with a port.
    static func parse(_ uri: String) -> (String, UInt16, String)? {
        let lower = uri.lowercased()
        guard lower.hasPrefix("http://") else { return nil }
        let rest = uri.dropFirst(7)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let path = rest.dropFirst(authority.count).prefix { $0 != "?" && $0 != "#" }
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        let host = authority[..<colon].lowercased()
        guard host == "localhost" || host == "127.0.0.1", let port = UInt16(authority[authority.index(after: colon)...]), port > 0
        else { return nil }
        return (host, port, path.isEmpty ? "/" : String(path))
    }

    /// One request from the browser.
    public struct Request {
        let fd: Int32
        /// The uid of the process that sent it, when the kernel says.
        let owner: UInt32?
        /// The request target's path and query, as sent.
        public let path: String
        public let query: String

        /// Answers with an HTML page and closes the connection.
        public func respond(status: Int, title: String, message: String) {
            let page = """
                <!doctype html><html><head><meta charset="utf-8"><title>cog-cred: \(Self.escape(title))</title></head>\
                <body style="font-family:sans-serif;margin:3em"><h1>\(Self.escape(title))</h1>\
                <p>\(Self.escape(message))</p></body></html>
                """
            answer(status: status, headers: "Content-Type: text/html; charset=utf-8\r\n", body: page)
        }

        /// Sends the browser on to `location` (302) and closes the connection.
        public func redirect(to location: String) {
            // The address carries the request's state: no Referer from the page it leads to.
            answer(status: 302, headers: "Location: \(location)\r\nReferrer-Policy: no-referrer\r\n", body: "")
        }

        func answer(status: Int, headers: String, body: String) {
            let reasons = [200: "OK", 302: "Found", 403: "Forbidden", 404: "Not Found"]
            let head =
                "HTTP/1.1 \(status) \(reasons[status] ?? "Bad Request")\r\n\(headers)Content-Length: \(body.utf8.count)\r\n"
                + "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
            writeAll(fd, head + body)
            close(fd)
        }

        /// Text from the request (an error description) goes into the page
        /// only escaped.
        static func escape(_ text: String) -> String {
            var out = ""
            for character in text {
                switch character {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                case "\"": out += "&quot;"
                case "'": out += "&#39;"
                default: out.append(character)
                }
            }
            return out
        }
    }

    /// A connection accepted, and what it has sent so far.
    struct Connection {
        let fd: Int32
        /// The uid of the process at the other end, when the kernel says.
        let owner: UInt32?
        let until: Deadline
        var head: [UInt8] = []
    }

    /// At most this many connections wait for their request at once; a new
    /// one pushes out the oldest.
    static let connectionsAtOnce = 32
    /// Seconds a connection has to send its request head (at most 8 KiB).
    static let secondsPerRequest = 5.0

    /// The next request from one of this user's processes, waiting at most
    /// `seconds`; nil when none came. A request from another user's process
    /// gets a 403 page and is reported to `refused` with its uid (nil: not
    /// known) and path. Connections are read side by side, each for at most
    /// 5 s and never past the time left, so a connection that sends nothing
    /// holds up no other.
    public func next(waitingAtMost seconds: Double, refused: (UInt32?, String) -> Void = { _, _ in }) throws(LoopbackError)
        -> Request?
    {
        let deadline = Deadline(secondsFromNow: seconds)
        while true {
            waiting.removeAll { connection in
                guard connection.until.remaining <= 0 else { return false }
                close(connection.fd)
                return true
            }
            let left = waiting.reduce(deadline.remaining) { min($0, $1.until.remaining) }
            guard deadline.remaining > 0 else { return nil }
            var pollers = (sockets + waiting.map(\.fd)).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&pollers, nfds_t(pollers.count), Int32((min(left, 3600) * 1000).rounded(.up)))
            if ready < 0 {
                if errno == EINTR { continue }
                throw .failed(String(cString: strerror(errno)))
            }
            for (index, poller) in pollers.enumerated().reversed() where poller.revents != 0 {
                if index < sockets.count {
                    accept(from: poller.fd, deadline: deadline)
                    continue
                }
                guard let request = read(waitingAt: index - sockets.count) else { continue }
                guard request.owner == getuid() else {
                    refused(request.owner, request.path)
                    request.respond(
                        status: 403, title: "Not your sign-in",
                        message: "This address belongs to another user's sign-in. Nothing was taken from this request.")
                    continue
                }
                return request
            }
        }
    }

    func accept(from listener: Int32, deadline: Deadline) {
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else { return }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // no browser or helper started later inherits it
        // Asked at once, while the peer's socket is surely open.
        let owner = LoopbackPeer.ownerUID(of: fd)
        if waiting.count >= LoopbackListener.connectionsAtOnce { close(waiting.removeFirst().fd) }
        waiting.append(
            Connection(fd: fd, owner: owner, until: Deadline(secondsFromNow: min(LoopbackListener.secondsPerRequest, deadline.remaining))))
    }

    /// Reads what waiting connection `index` has sent; the request once its
    /// head is whole. A connection that closes, sends more than 8 KiB of
    /// head or anything but a GET is dropped.
    func read(waitingAt index: Int) -> Request? {
        var buffer = [UInt8](repeating: 0, count: 2048)
        let fd = waiting[index].fd
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n < 0 && (errno == EINTR || errno == EAGAIN) { return nil }
        if n > 0 { waiting[index].head.append(contentsOf: buffer[0..<n]) }
        let head = waiting[index].head
        let whole = head.ends(with: Array("\r\n\r\n".utf8))
        guard n <= 0 || whole || head.count >= 8192 else { return nil }
        let connection = waiting.remove(at: index)
        guard whole, let target = LoopbackListener.requestTarget(head) else {
            close(fd)
            return nil
        }
        let path = String(target.prefix { $0 != "?" })
        let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? ""
        return Request(fd: fd, owner: connection.owner, path: path, query: query)
    }

    /// The request line's target of a GET (`/callback?code=...`); nil for anything else.
    static func requestTarget(_ head: [UInt8]) -> String? {
        let line = head.prefix { $0 != UInt8(ascii: "\r") }
        let words = line.split(separator: UInt8(ascii: " "))
        guard words.count == 3, words[0].elementsEqual("GET".utf8) else { return nil }
        return String(decoding: words[1], as: UTF8.self)
    }
}

/// Why the redirect URI cannot be listened at.
public enum LoopbackError: ExplainedFailure, Equatable {
    case notLoopback(String)
    case portTaken(UInt16)
    case failed(String)

    public var category: FailureCategory {
        switch self {
        case .notLoopback: return .configuration
        case .portTaken, .failed: return .temporary
        }
    }

    public var explanation: Explanation {
        switch self {
        case .notLoopback(let uri):
            return Explanation(
                "the redirect URI \(LibcurlURL.shown(uri).oneLine(limit: 100)) is not http://localhost:PORT/PATH: browser sign-in listens on this machine",
                nextStep: .setLoopbackRedirectURI)
        case .portTaken(let port):
            return Explanation("port \(port) of the redirect URI is taken by another program", nextStep: .chooseAnotherPort)
        case .failed(let reason):
            return Explanation("cannot listen for the browser's answer: \(reason)")
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}
