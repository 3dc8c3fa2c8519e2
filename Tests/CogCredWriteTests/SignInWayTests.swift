import Foundation
import Testing
import CogCredTestSupport
@testable import CogCredWrite

/// Which way `sign-in` goes: the command line's choices over the profile's.
@Suite struct SignInWayTests {
    func way(_ change: (inout Profile) -> Void = { _ in }, flow: AuthFlow? = nil, method: SignInMethod? = nil, browser: Bool = false)
        -> SignInWay
    {
        var profile = testProfile
        change(&profile)
        return makeManager(profile: profile, clock: FakeClock(0)).signInWay(flow: flow, method: method, browser: browser)
    }

    @Test func theProfilesFlowUnlessTheCommandLineNamesOne() {
        #expect(way() == .api(.srp, method: nil))
        #expect(way({ $0.authFlow = "password" }) == .api(.password, method: nil))
        #expect(way({ $0.authFlow = "password" }, flow: .custom) == .api(.custom, method: nil))
        #expect(way({ $0.authFlow = "browser" }) == .browser)
        #expect(way(browser: true) == .browser)
        #expect(way({ $0.authFlow = "browser" }, flow: .srp) == .api(.srp, method: nil))
    }

    @Test func aMethodAloneMeansTheChoiceFlow() {
        #expect(way(method: .emailOTP) == .api(.choice, method: .emailOTP))
        #expect(way({ $0.authFlow = "choice"; $0.method = "sms-otp" }) == .api(.choice, method: .smsOTP))
        #expect(way({ $0.authFlow = "choice"; $0.method = "sms-otp" }, method: .password) == .api(.choice, method: .password))
        // The profile's method is for the choice flow only.
        #expect(way({ $0.method = "sms-otp" }) == .api(.srp, method: nil))
    }

    @Test func aMachineProfileHasOneWay() {
        #expect(way({ $0.grant = Grant.clientCredentials.rawValue }, browser: true) == .clientCredentials)
    }

    @Test func onlyTheFlowsThatNeedAPasswordReadItFirst() {
        #expect(AuthFlow.allCases.filter(\.readsPasswordFirst) == [.srp, .password, .browser, .customSRP])
    }
}

/// The browser sign-in driven with the browser elsewhere: the person pastes
/// back where it ended.
@Suite struct BrowserSignInDrivingTests {
    let now: Int64 = 1_800_000_000
    let store = InMemoryTokenStore()

    final class Person: BrowserSignInPerson {
        var shown: [String] = []
        let paste: (String) -> String
        init(paste: @escaping (String) -> String) { self.paste = paste }

        func openBrowser(_ address: String) -> Bool { false }
        func show(authorizeURL: String, opened: Bool) { shown.append(authorizeURL) }
        func pastedCallback(authorizeURL: String) throws -> String {
            shown.append(authorizeURL)
            return paste(authorizeURL)
        }
        func pasteInstead(authorizeURL: String, waiting timeout: Int) throws -> String? {
            try pastedCallback(authorizeURL: authorizeURL)
        }
        func note(_ line: String) {}
    }

    /// The request's own state, read back from the address shown.
    static func state(_ url: String) -> String {
        let query = url.split(separator: "?").last.map(String.init) ?? ""
        return query.split(separator: "&").first { $0.hasPrefix("state=") }.map { String($0.dropFirst(6)) } ?? ""
    }

    func signIn(_ person: Person, _ mode: BrowserSignInMode = .elsewhere) throws -> RefreshedTokens {
        var profile = testProfile
        profile.domain = "https://auth.example"
        profile.scopes = ["email"]
        profile.redirectURI = "http://localhost:58411/callback"
        let result = AuthenticationResult(accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: nil, refreshToken: "r")
        return try makeManager(store: store, oauth: FakeOAuth([.success(result)]), profile: profile, clock: FakeClock(now))
            .signInWithBrowser(mode, issuers: { ["https://idp.example/pool"] }, person: person)
    }

    /// No browser here (over SSH): the paste flow at once, not a wait for a
    /// browser that cannot come.
    @Test func withoutABrowserHereThePasteFlowAtOnce() throws {
        let person = Person { "http://localhost:58411/callback?code=abc&state=\(Self.state($0))" }
        let tokens = try signIn(person, .here(timeout: 600))
        #expect(person.shown.count == 1 && person.shown[0].hasPrefix("https://auth.example/oauth2/authorize?"))
        #expect(tokens.access.claims.exp == now + 3600)
    }

    @Test func thePastedAddressOfThisRequestSignsIn() throws {
        let person = Person { "http://localhost:8400/callback?code=abc&state=\(Self.state($0))" }
        let tokens = try signIn(person)
        #expect(person.shown.count == 1 && person.shown[0].hasPrefix("https://auth.example/oauth2/authorize?"))
        #expect(tokens.access.claims.exp == now + 3600)
        #expect(try store.read(.refresh, profile: "default") == "r")
    }

    @Test func anotherRequestsAnswerOrNoneStoresNothing() throws {
        #expect(throws: AuthError.stateMismatch) {
            try signIn(Person { _ in "http://localhost:8400/callback?code=abc&state=another" })
        }
        #expect(throws: AuthorizationRequest.CallbackError.notACallback) { try signIn(Person { _ in "two words" }) }
        #expect(try store.read(.refresh, profile: "default") == nil)
    }
}
