import Foundation
import Glibc
import Synchronization
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

@Suite struct AuthorizationRequestTests {
    let request = AuthorizationRequest(
        domain: "https://my-app.auth.us-east-1.amazoncognito.com/", clientID: "client123",
        redirectURI: "http://localhost:8400/callback", scopes: ["openid", "email", "orders/read"], identityProvider: "Corporate IdP",
        state: "st4te", nonce: "n0nce", verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")

    @Test func theAddressCarriesEveryParameterEncoded() throws {
        // RFC 7636 appendix B's example verifier and challenge.
        #expect(request.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let url = try #require(URLComponents(string: request.url))
        #expect(url.scheme == "https" && url.host == "my-app.auth.us-east-1.amazoncognito.com" && url.path == "/oauth2/authorize")
        let items = Dictionary(uniqueKeysWithValues: (url.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(items == [
            "response_type": "code", "client_id": "client123", "redirect_uri": "http://localhost:8400/callback",
            "scope": "openid email orders/read", "state": "st4te", "nonce": "n0nce",
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "S256",
            "identity_provider": "Corporate IdP",
        ])
        #expect(!request.url.contains(request.verifier))
    }

    @Test func freshSecretsEachTime() {
        let a = AuthorizationRequest(domain: "https://d", clientID: "c", redirectURI: "http://localhost:1/", scopes: [], identityProvider: nil)
        let b = AuthorizationRequest(domain: "https://d", clientID: "c", redirectURI: "http://localhost:1/", scopes: [], identityProvider: nil)
        #expect(a.state != b.state && a.nonce != b.nonce && a.verifier != b.verifier)
        #expect(a.verifier.count == 43 && a.verifier.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }

    @Test func aCallbackCountsOnlyWithThisRequestsState() throws {
        #expect(try request.callback(query: "code=abc%2Bdef&state=st4te") == .code("abc+def"))
        #expect(try request.callback(query: "error=access_denied&error_description=User+cancelled&state=st4te")
            == .refused(error: "access_denied", description: "User cancelled"))
        #expect(throws: AuthorizationRequest.CallbackError.stateMismatch) { try request.callback(query: "code=abc&state=other") }
        #expect(throws: AuthorizationRequest.CallbackError.stateMismatch) { try request.callback(query: "code=abc") }
        #expect(throws: AuthorizationRequest.CallbackError.notACallback) { try request.callback(query: "") }
        #expect(throws: AuthorizationRequest.CallbackError.notACallback) { try request.callback(query: "state=st4te") }
    }

    @Test func aPastedAddressIsCheckedAndABareCodeTaken() throws {
        #expect(try request.pasted(" http://localhost:8400/callback?code=xyz&state=st4te#frag \n") == .code("xyz"))
        #expect(throws: AuthorizationRequest.CallbackError.stateMismatch) {
            try request.pasted("http://localhost:8400/callback?code=xyz&state=evil")
        }
        #expect(try request.pasted("0f1e2d3c-aaaa") == .code("0f1e2d3c-aaaa"))
        #expect(throws: AuthorizationRequest.CallbackError.notACallback) { try request.pasted("two words") }
        #expect(throws: AuthorizationRequest.CallbackError.notACallback) { try request.pasted("") }
    }

    @Test func percentDecodingIsStrict() {
        #expect(AuthorizationRequest.percentDecode("a%20b+c%2") == "a b c%2")
        #expect(AuthorizationRequest.percentDecode("%+f%zz") == "% f%zz")  // no hex after %: kept as it is
        #expect(AuthorizationRequest.percentDecode("%C3%A9") == "é")
    }
}

@Suite struct LoopbackListenerTests {
    func freePort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    /// A connection to the port on 127.0.0.1 (or ::1); -1 when refused.
    func connection(_ port: UInt16, six: Bool = false) -> Int32 {
        let fd = socket(six ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = LoopbackListener.withLoopbackAddress(family: six ? AF_INET6 : AF_INET, port: port) { connect(fd, $0, $1) }
        guard connected == 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    /// Sends `text` to the port and returns the whole answer.
    func exchange(_ port: UInt16, _ text: String, six: Bool = false) -> String {
        let fd = connection(port, six: six)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        writeAll(fd, text)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// `exchange` on a thread of its own; the answer once it is in.
    func exchangeAside(_ port: UInt16, _ text: String, six: Bool = false) -> () -> String {
        let answer = Mutex<String?>(nil)
        Thread { answer.withLock { $0 = exchange(port, text, six: six) } }.start()
        return {
            while answer.withLock({ $0 == nil }) { usleep(1000) }
            return answer.withLock { $0! }
        }
    }

    @Test func takesTheBrowsersRequestAndAnswersWithAnEscapedPage() throws {
        let port = freePort()
        let listener = try LoopbackListener(redirectURI: "http://localhost:\(port)/callback")
        #expect(listener.path == "/callback")
        let answer = Mutex<String>("")
        let client = Thread {
            answer.withLock { $0 = exchange(port, "GET /callback?code=c&state=s HTTP/1.1\r\nHost: localhost\r\n\r\n") }
        }
        client.start()
        let request = try #require(try listener.next(waitingAtMost: 10))
        #expect(request.path == "/callback" && request.query == "code=c&state=s")
        request.respond(status: 200, title: "Signed in", message: "<script>alert(1)</script>")
        while answer.withLock({ $0.isEmpty }) { usleep(1000) }
        let page = answer.withLock { $0 }
        #expect(page.hasPrefix("HTTP/1.1 200 OK\r\n") && page.contains("Cache-Control: no-store"))
        #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && !page.contains("<script>"))
    }

    @Test func aTakenPortIsNamedAndNothingIsAWait() throws {
        let port = freePort()
        let first = try LoopbackListener(redirectURI: "http://127.0.0.1:\(port)/cb")
        #expect(throws: LoopbackError.portTaken(port)) { try LoopbackListener(redirectURI: "http://localhost:\(port)/cb") }
        #expect(LoopbackError.portTaken(port).message.contains("port \(port)"))
        #expect(try first.next(waitingAtMost: 0.05) == nil)
        #expect(throws: LoopbackError.self) { try LoopbackListener(redirectURI: "https://localhost:\(port)/cb") }
        #expect(throws: LoopbackError.self) { try LoopbackListener(redirectURI: "http://example.com:\(port)/cb") }
    }

    @Test func localhostIsHeldOnIPv6TooAndEitherTakenAddressIsNamed() throws {
        let port = freePort()
        let listener = try LoopbackListener(redirectURI: "http://localhost:\(port)/callback")
        // A browser trying ::1 first reaches cog-cred, not whoever else listens there.
        let answer = exchangeAside(port, "GET /callback?code=six HTTP/1.1\r\nHost: localhost\r\n\r\n", six: true)
        let request = try #require(try listener.next(waitingAtMost: 10))
        #expect(request.query == "code=six")
        request.respond(status: 200, title: "Signed in", message: "")
        #expect(answer().hasPrefix("HTTP/1.1 200 OK"))

        // Another program on [::1]:PORT alone: localhost is refused at once, 127.0.0.1 is not concerned.
        let other = freePort()
        let squatter = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(squatter) }
        var one: Int32 = 1
        setsockopt(squatter, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = LoopbackListener.withLoopbackAddress(family: AF_INET6, port: other) { bind(squatter, $0, $1) }
        #expect(bound == 0 && listen(squatter, 1) == 0)
        #expect(throws: LoopbackError.portTaken(other)) { try LoopbackListener(redirectURI: "http://localhost:\(other)/cb") }
        _ = try LoopbackListener(redirectURI: "http://127.0.0.1:\(other)/cb")
    }

    @Test func aConnectionThatSendsNothingHoldsUpNoOther() throws {
        let port = freePort()
        let listener = try LoopbackListener(redirectURI: "http://localhost:\(port)/callback")
        var idle: [Int32] = []
        for _ in 0..<4 { idle.append(connection(port)) }
        defer { for fd in idle { close(fd) } }
        let answer = exchangeAside(port, "GET /callback?code=c HTTP/1.1\r\n\r\n")
        // Each idle connection may take 5 s; the browser's request is read beside them.
        let request = try #require(try listener.next(waitingAtMost: 4))
        #expect(request.query == "code=c")
        request.respond(status: 200, title: "Signed in", message: "")
        #expect(answer().hasPrefix("HTTP/1.1 200 OK"))
    }

    @Test func theKernelsTableNamesThisProcessAsThePeer() throws {
        let port = freePort()
        let listener = try LoopbackListener(redirectURI: "http://localhost:\(port)/callback")
        for six in [false, true] {
            // Closed once, below: a second close could take another test's
            // descriptor of the same number (the tests run side by side).
            let client = connection(port, six: six)
            var poller = pollfd(fd: listener.sockets[six ? 1 : 0], events: Int16(POLLIN), revents: 0)
            #expect(poll(&poller, 1, 10_000) == 1)
            let accepted = accept(listener.sockets[six ? 1 : 0], nil, nil)
            defer { close(accepted) }
            #expect(LoopbackPeer.ownerUID(of: accepted) == getuid())
            // The peer gone (its socket closed): no owner to name, so not this user.
            close(client)
            #expect(LoopbackPeer.ownerUID(of: accepted) == nil)
        }
    }
}

@Suite struct LoopbackSignInTests {
    let helper = LoopbackListenerTests()

    static func get(_ path: String) -> String { "GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n" }

    @Test func theStartAddressLeadsToTheAuthorizeURLOnceAndOnlyTheRightStateEndsTheWait() throws {
        let port = helper.freePort()
        let request = AuthorizationRequest(
            domain: "https://login.example.com", clientID: "client123", redirectURI: "http://localhost:\(port)/callback",
            scopes: ["openid"], identityProvider: nil, state: "st4te")
        let signIn = try LoopbackSignIn(request)
        #expect(signIn.startAddress.hasPrefix("http://localhost:\(port)/start/") && !signIn.startAddress.contains("st4te"))
        let target = String(signIn.startAddress.dropFirst("http://localhost:\(port)".count))
        // One after another, each once the one before is answered: the wait goes on through the first two.
        let pages = Mutex<[String]?>(nil)
        Thread {
            let sent = [target, "/callback?code=planted&state=other", "/callback?code=good&state=st4te"].map {
                helper.exchange(port, LoopbackSignInTests.get($0))
            }
            pages.withLock { $0 = sent }
        }.start()
        var notes: [String] = []
        let callback = try signIn.answer(within: 10) { notes.append($0) }
        #expect(callback == .code("good"))
        while pages.withLock({ $0 == nil }) { usleep(1000) }
        let answered = pages.withLock { $0! }
        #expect(answered[0].hasPrefix("HTTP/1.1 302 Found\r\n") && answered[0].contains("Location: \(request.url)\r\n"))
        #expect(answered[1].hasPrefix("HTTP/1.1 400 ") && answered[1].contains("another sign-in"))
        #expect(answered[2].contains("Signed in"))
        #expect(notes.count == 1 && notes[0].contains("belongs to another sign-in"))
        // Once only: a second visit finds nothing there.
        let again = helper.exchangeAside(port, LoopbackSignInTests.get(target))
        #expect(try signIn.answer(within: 1) { _ in } == nil)
        #expect(again().hasPrefix("HTTP/1.1 404 "))
    }
}
