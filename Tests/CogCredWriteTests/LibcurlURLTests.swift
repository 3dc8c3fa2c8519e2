import Testing
@testable import CogCredWrite

/// URLs as libcurl reads them: the user name and password end where
/// libcurl's parser says, and a URL it cannot read is never shown.
@Suite struct LibcurlURLTests {
    @Test(arguments: [
        ("https://alice:s3cret@cognito.example.com/", "https://cognito.example.com/"),
        ("http://alice@127.0.0.1:5000/pool?x=a@b", "http://127.0.0.1:5000/pool?x=a@b"),
        ("http://al%40ice:p%40ss@[::1]:9/", "http://[::1]:9/"),
        ("https://cognito-idp.us-east-1.amazonaws.com/", "https://cognito-idp.us-east-1.amazonaws.com/"),
        // What the old guess took for the end of a URL is inside libcurl's password.
        ("https://bob:hun\"ter2@127.0.0.1:1/", "https://127.0.0.1:1/"),
        ("https://bob:hun'ter2@127.0.0.1:1/", "https://127.0.0.1:1/"),
        ("https://bob:hun\\ter2@127.0.0.1:1/", "https://127.0.0.1:1/"),
        ("https://bob:hun<ter>2@127.0.0.1:1/", "https://127.0.0.1:1/"),
    ])
    func theUserinfoGoesAsLibcurlReadsIt(url: String, shown: String) throws {
        let parsed = try LibcurlURL.parse(url).get()
        #expect(parsed.shown == shown)
        #expect(LibcurlURL.shown(url) == shown)
    }

    @Test func withoutQueryTheFragmentGoesToo() throws {
        let parsed = try LibcurlURL.parse("https://u:p@auth.example.com/oauth2/authorize?state=s3cret#frag").get()
        #expect(parsed.shownWithoutQuery == "https://auth.example.com/oauth2/authorize")
        #expect(parsed.shown == "https://auth.example.com/oauth2/authorize?state=s3cret#frag")
        #expect(parsed.hasUserinfo)
        #expect(try !LibcurlURL.parse("https://auth.example.com/").get().hasUserinfo)
    }

    /// `#`, `?` and `/` end libcurl's authority: with one in the password
    /// the URL is one libcurl refuses, and nothing of it is shown.
    @Test(arguments: ["#", "?", "/", " ", "@"])
    func aPasswordLibcurlCannotReadIsNeverShown(_ character: String) {
        let url = "https://bob:hun\(character)ter2@127.0.0.1:1/"
        guard case .failure(let unreadable) = LibcurlURL.parse(url) else {
            Issue.record("libcurl read \(url)")
            return
        }
        #expect(!unreadable.reason.contains("bob") && !unreadable.reason.contains("hun") && !unreadable.reason.contains("ter2"))
        let shown = LibcurlURL.shown(url)
        #expect(!shown.contains("bob") && !shown.contains("hun") && !shown.contains("ter2"))
    }

    @Test func aProxySettingWithoutASchemeIsReadAsLibcurlReadsIt() throws {
        let guessed = try LibcurlURL.parse("bob:secret@proxy.example:3128").get()
        #expect((guessed.scheme, guessed.host, guessed.port, guessed.hasUserinfo) == ("http", "proxy.example", 3128, true))
        // The first "://" is inside the password: libcurl reads no scheme,
        // and cannot read the rest.
        guard case .failure(let unreadable) = LibcurlURL.parse("bob:hun://ter2@127.0.0.1:1") else {
            Issue.record("libcurl read it")
            return
        }
        #expect(!unreadable.reason.contains("hun") && !unreadable.reason.contains("bob"))
    }

    /// Read without libcurl where there is no user info, the host is the one libcurl reads.
    @Test(arguments: [
        "http://127.0.0.1:5000/", "https://cognito-idp.us-east-1.amazonaws.com/", "http://[::1]:9/x?y#z", "http://localhost",
        "HTTP://LOCALHOST:80/", "https://host.example?q=1", "https://host.example#f", "http://[fe80::1]/",
    ])
    func theHostWithoutUserinfoIsLibcurls(_ url: String) throws {
        #expect(LibcurlURL.host(of: url) == (try LibcurlURL.parse(url).get().host))
    }

    @Test func libcurlsMessageIsKeptOnlyWithoutAUserNameOrPassword() {
        let urls = ["http://Endp0int-User:Endp0int-Secret@127.0.0.1:1/"]
        #expect(LibcurlURL.scrubbing("Failed to connect to 127.0.0.1 port 1", of: urls, instead: "generic") == "Failed to connect to 127.0.0.1 port 1")
        #expect(LibcurlURL.scrubbing("Could not resolve host: Endp0int-Secret", of: urls, instead: "generic") == "generic")
        // Decoded too: libcurl sends the password decoded.
        #expect(LibcurlURL.scrubbing("said p@ss", of: ["http://u:p%40ss@h/"], instead: "generic") == "generic")
        // A URL that cannot be read: what it holds is not known.
        #expect(LibcurlURL.scrubbing("anything", of: ["http://u:p#x@h/"], instead: "generic") == "generic")
    }
}
