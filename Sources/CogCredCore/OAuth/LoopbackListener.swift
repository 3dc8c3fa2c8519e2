#if canImport(Glibc)
import Glibc
#endif

/// The redirect URI's end of a browser sign-in (RFC 8252 7.3): a TCP
/// listener on 127.0.0.1 at the redirect URI's port, which takes the
/// browser's request for the redirect path and answers it with a page.
public final class LoopbackListener {
    let fd: Int32
    public let port: UInt16
    /// The redirect URI's path, such as `/callback`.
    public let path: String

    /// Listens at `redirectURI` (`http://localhost:PORT/PATH` or
    /// `http://127.0.0.1:PORT/PATH`).
    public init(redirectURI: String) throws(LoopbackError) {
        guard let (port, path) = LoopbackListener.parse(redirectURI) else { throw .notLoopback(redirectURI) }
        self.port = port
        self.path = path
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .failed(String(cString: strerror(errno))) }
        var one: Int32 = 1
        // A listener of an earlier sign-in in TIME_WAIT must not block this one.
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            let code = errno
            close(fd)
            throw code == EADDRINUSE || code == EACCES ? .portTaken(port) : .failed(String(cString: strerror(code)))
        }
    }

    deinit { close(fd) }

    /// `http://localhost:8400/callback` → (8400, "/callback"); nil for
    /// anything but plain HTTP to localhost or 127.0.0.1 with a port.
    static func parse(_ uri: String) -> (UInt16, String)? {
        let lower = uri.lowercased()
        guard lower.hasPrefix("http://") else { return nil }
        let rest = uri.dropFirst(7)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let path = rest.dropFirst(authority.count).prefix { $0 != "?" && $0 != "#" }
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        let host = authority[..<colon].lowercased()
        guard host == "localhost" || host == "127.0.0.1", let port = UInt16(authority[authority.index(after: colon)...]), port > 0
        else { return nil }
        return (port, path.isEmpty ? "/" : String(path))
    }

    /// One request from the browser.
    public struct Request {
        let fd: Int32
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
            let reason = status == 200 ? "OK" : status == 404 ? "Not Found" : "Bad Request"
            let head =
                "HTTP/1.1 \(status) \(reason)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(page.utf8.count)\r\n"
                + "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
            writeAll(fd, head + page)
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

    /// The next request that reaches the listener, waiting at most
    /// `seconds`; nil when none came. A connection that sends no complete
    /// request head within 5 s (or a head over 8 KiB) is dropped.
    public func next(waitingAtMost seconds: Double) throws(LoopbackError) -> Request? {
        let deadline = Deadline(secondsFromNow: seconds)
        while true {
            let left = deadline.remaining
            guard left > 0 else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left, 3600) * 1000))
            if ready < 0 {
                if errno == EINTR { continue }
                throw .failed(String(cString: strerror(errno)))
            }
            if ready == 0 { return nil }
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { continue }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)  // no browser or helper started later inherits it
            if let target = LoopbackListener.readRequestTarget(connection) {
                let path = String(target.prefix { $0 != "?" })
                let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? ""
                return Request(fd: connection, path: path, query: query)
            }
            close(connection)
        }
    }

    /// The request line's target of a GET (`/callback?code=...`), reading
    /// the head with a 5 s limit; nil for anything else.
    static func readRequestTarget(_ fd: Int32) -> String? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        let until = Deadline(secondsFromNow: 5)
        while head.count < 8192 && !head.ends(with: Array("\r\n\r\n".utf8)) {
            let left = until.remaining
            guard left > 0 else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(left * 1000)) > 0 else { return nil }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            head.append(contentsOf: buffer[0..<n])
        }
        let line = head.prefix { $0 != UInt8(ascii: "\r") }
        let words = line.split(separator: UInt8(ascii: " "))
        guard words.count == 3, words[0].elementsEqual("GET".utf8) else { return nil }
        return String(decoding: words[1], as: UTF8.self)
    }
}

/// Why the redirect URI cannot be listened at.
public enum LoopbackError: CogCredFailure, Equatable {
    case notLoopback(String)
    case portTaken(UInt16)
    case failed(String)

    public var category: FailureCategory {
        switch self {
        case .notLoopback: return .configuration
        case .portTaken, .failed: return .temporary
        }
    }

    public var message: String {
        switch self {
        case .notLoopback(let uri):
            return "the redirect URI \(uri.oneLine(limit: 100)) is not http://localhost:PORT/PATH: browser sign-in listens on this machine (configure --redirect-uri)"
        case .portTaken(let port):
            return "port \(port) of the redirect URI is taken by another program: close it, or use another port with cog-cred configure --redirect-uri http://localhost:PORT/callback (and add that URL to the app client's callback URLs)"
        case .failed(let reason):
            return "cannot listen for the browser's answer: \(reason)"
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}
