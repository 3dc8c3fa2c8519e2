import Synchronization
import Testing
@testable import CogCredWrite

#if canImport(Glibc)
import Glibc
#endif

/// The proxy's parts that need no server: the upstream's rule, the token
/// held between requests, and the headers that go on.
@Suite struct ProxyTests {
    @Test func theUpstreamIsHttpsOrThisMachinesHttpAndItsPathPrefixesEachRequest() throws {
        let api = try ProxyUpstream("https://api.example.com/v1/")
        #expect(api.url(for: "/things?x=1") == "https://api.example.com/v1/things?x=1")
        #expect(try ProxyUpstream("https://api.example.com").url(for: "/a") == "https://api.example.com/a")
        #expect(try ProxyUpstream("http://127.0.0.1:8080/base").url(for: "/a") == "http://127.0.0.1:8080/base/a")
        #expect(try ProxyUpstream("http://[::1]:8080").cleartext)
        #expect(throws: ProxyUpstream.Problem.cleartextToAnotherHost) { try ProxyUpstream("http://192.0.2.1/") }
        #expect(throws: ProxyUpstream.Problem.userinfo) { try ProxyUpstream("https://bob:secret@api.example.com/") }
        #expect(throws: ProxyUpstream.Problem.queryOrFragment) { try ProxyUpstream("https://api.example.com/?a=1") }
        #expect(throws: ProxyUpstream.Problem.notHTTP(scheme: "ftp")) { try ProxyUpstream("ftp://example.com/") }
    }

    /// What `read` answers, waited for (it answers on a thread of its own).
    private func read(_ tokens: ProxyTokens, unless rejected: String? = nil) -> Result<String, ProxyAnswer> {
        let answer = Mutex<Result<String, ProxyAnswer>?>(nil)
        tokens.read(unless: rejected) { result in answer.withLock { $0 = result } }
        while true {
            if let result = answer.withLock({ $0 }) { return result }
            usleep(1000)
        }
    }

    @Test func theTokenIsHeldAtMostItsAgeAndReplacedOnceForMany() throws {
        let reads = Mutex<[Bool]>([])
        let next = Atomic(1)
        let tokens = ProxyTokens(maxAge: 3600) { forced in
            reads.withLock { $0.append(forced) }
            return .success("t\(next.add(1, ordering: .relaxed).oldValue)")
        }
        #expect(tokens.held() == nil)
        #expect(try read(tokens).get() == "t1")
        #expect(tokens.held() == "t1")
        #expect(try read(tokens).get() == "t1")
        // The upstream refused t1: one forced refresh; a second refusal of t1
        // (a request that had it too) takes the new one without another.
        #expect(tokens.held(unless: "t1") == nil)
        #expect(try read(tokens, unless: "t1").get() == "t2")
        #expect(try read(tokens, unless: "t1").get() == "t2")
        #expect(reads.withLock { $0 } == [false, true])
        // Held for no time: every request reads the session again, and a failure is not held.
        let failing = Atomic(false)
        let fresh = ProxyTokens(maxAge: 0) { _ in
            failing.load(ordering: .relaxed) ? .failure(ProxyAnswer(status: 401, body: "signed out\n")) : .success("t")
        }
        #expect(try read(fresh).get() == "t")
        failing.store(true, ordering: .relaxed)
        #expect(throws: ProxyAnswer(status: 401, body: "signed out\n")) { try read(fresh).get() }
        #expect(fresh.held() == nil)
    }

    @Test func manyWhoAskWhileTheSessionIsReadShareOneRead() {
        // The first read waits until all 16 have asked: one read answers them all.
        let asked = Atomic(0)
        let reads = Atomic(0)
        let tokens = ProxyTokens(maxAge: 3600) { _ in
            reads.add(1, ordering: .relaxed)
            while asked.load(ordering: .relaxed) < 16 { usleep(1000) }
            return .success("t")
        }
        let answered = Atomic(0)
        for _ in 0..<16 {
            tokens.read(unless: nil) { result in
                if case .success("t") = result { answered.add(1, ordering: .relaxed) }
            }
            asked.add(1, ordering: .relaxed)
        }
        while answered.load(ordering: .relaxed) < 16 { usleep(1000) }
        #expect(reads.load(ordering: .relaxed) == 1)
    }

    @Test func hopByHopHeadersAndThoseConnectionNamesStayBehind() {
        let headers = ResponseHeaders([
            ("Content-Type", "text/plain"), ("Connection", "keep-alive, X-Private"), ("X-Private", "1"), ("Keep-Alive", "timeout=5"),
            ("TRANSFER-ENCODING", "chunked"), ("content-length", "12"), ("Set-Cookie", "a=b"), ("Connection", "close"),
            ("Upgrade-Insecure", "1"),
        ])
        var kept: [String] = []
        headers.forwarded { kept.append("\(String(cString: $0)): \(String(cString: $1))") }
        #expect(kept == ["Content-Type: text/plain", "Set-Cookie: a=b", "Upgrade-Insecure: 1"])
        #expect(headers.all.map(\.lower) == ["content-type", "connection", "x-private", "keep-alive", "transfer-encoding", "content-length", "set-cookie", "connection", "upgrade-insecure"])
    }

    @Test func aRequestsHostIsThisMachineOnlyWhenItsNameOrAddressIs() {
        let here = ["localhost", "LOCALHOST:1", "127.0.0.1", "127.0.0.1:8080", "127.8.9.10:1", "[::1]", "[::1]:9", "[0:0:0:0:0:0:0:1]:9"]
        let elsewhere = [
            "", "evil.example", "evil.example:443", "127.0.0.1.evil.example", "localhost.example:80", "localhostx", "128.0.0.1:1",
            "[::2]:1", "[::1", "127.0.0.1\u{0}.evil.example", String(repeating: "1", count: 60), "0000:0000:0000:0000:0000:0000:0000:0001",
        ]
        for host in here { #expect(RequestHeaders.Read.isThisMachine(host: host), "\(host)") }
        for host in elsewhere { #expect(!RequestHeaders.Read.isThisMachine(host: host), "\(host)") }
    }

    @Test func aContentLengthIsDigitsOnly() {
        func length(_ text: String) -> Int64? { Array(text.utf8).withUnsafeBytes { RequestHeaders.length($0) } }
        #expect(length("12") == 12)
        #expect(length(" 7\t") == 7)
        #expect(length("0") == 0)
        #expect(length("9223372036854775807") == Int64.max)
        for bad in ["", " ", "+5", "-1", "1a", "1 2", "9223372036854775808", "0x10"] { #expect(length(bad) == nil, "\(bad)") }
    }
}
