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

    @Test func theTokenIsHeldAtMostItsAgeAndReplacedOnceForMany() throws {
        let reads = Mutex<[Bool]>([])
        let next = Atomic(1)
        let tokens = ProxyTokens(maxAge: 3600) { forced in
            reads.withLock { $0.append(forced) }
            return .success("t\(next.add(1, ordering: .relaxed).oldValue)")
        }
        #expect(try tokens.current().get() == "t1")
        #expect(try tokens.current().get() == "t1")
        // The upstream refused t1: one forced refresh; a second refusal of t1
        // (a request that had it too) takes the new one without another.
        #expect(try tokens.replacing("t1").get() == "t2")
        #expect(try tokens.replacing("t1").get() == "t2")
        #expect(reads.withLock { $0 } == [false, true])
        // Held for no time: every request reads the session again, and a failure is not held.
        let failing = Atomic(false)
        let fresh = ProxyTokens(maxAge: 0) { _ in
            failing.load(ordering: .relaxed) ? .failure(ProxyAnswer(status: 401, body: "signed out\n")) : .success("t")
        }
        #expect(try fresh.current().get() == "t")
        failing.store(true, ordering: .relaxed)
        #expect(throws: ProxyAnswer(status: 401, body: "signed out\n")) { try fresh.current().get() }
    }

    @Test func hopByHopHeadersAndThoseConnectionNamesStayBehind() {
        let kept = RequestHeaders.forwardedResponse([
            ("Content-Type", "text/plain"), ("Connection", "keep-alive, X-Private"), ("X-Private", "1"), ("Keep-Alive", "timeout=5"),
            ("Transfer-Encoding", "chunked"), ("Content-Length", "12"), ("Set-Cookie", "a=b"), ("Connection", "close"),
        ].map { ($0.0, $0.0.lowercased(), $0.1) })
        #expect(kept.map(\.0) == ["Content-Type", "Set-Cookie"])
    }
}
