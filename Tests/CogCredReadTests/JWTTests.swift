import Foundation
import Testing
import CogCredTestSupport
@testable import CogCredRead

@Suite struct JWTTests {
    @Test func decodesCognitoAccessTokenClaims() throws {
        let token = TestJWT.make([
            "exp": 1_800_000_000, "iat": 1_799_996_400, "username": "alice", "token_use": "access",
            "client_id": "abc", "auth_time": 1_799_996_400, "iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_X",
        ])
        let claims = try JWT.claims(of: token)
        #expect(claims.exp == 1_800_000_000)
        #expect(claims.iat == 1_799_996_400)
        #expect(claims.username == "alice")
        #expect(claims.tokenUse == "access")
        #expect(claims.clientID == "abc")
        #expect(claims.subjectName == "alice")
    }

    @Test func readsCognitoUsernameFromIDToken() throws {
        let claims = try JWT.claims(of: TestJWT.make(["exp": 10, "cognito:username": "bob", "email": "b@example.com"]))
        #expect(claims.subjectName == "bob")
        #expect(claims.email == "b@example.com")
    }

    @Test func acceptsFractionalAndIgnoresWronglyTypedTimes() throws {
        let claims = try JWT.claims(of: TestJWT.make(["exp": 1_800_000_000.75, "iat": "yesterday"]))
        #expect(claims.exp == 1_800_000_000)
        #expect(claims.iat == nil)
    }

    @Test(arguments: [
        ("abc", JWTError.notThreeParts),
        ("a.b.c.d", JWTError.notThreeParts),
        ("a.b", JWTError.notThreeParts),
        ("...", JWTError.notThreeParts),
        ("eyJhbGciOiJIUzI1NiJ9..sig", JWTError.badJSON),  // an empty payload
        ("eyJhbGciOiJIUzI1NiJ9.!!!.sig", JWTError.badBase64),
        ("eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.sig", JWTError.badJSON),  // "not json"
        ("eyJhbGciOiJIUzI1NiJ9.WzFd.sig", JWTError.badJSON),  // "[1]": an array, not claims
    ])
    func rejectsMalformedTokens(token: String, expected: JWTError) {
        #expect(throws: expected) { try JWT.claims(of: token) }
    }

    @Test func decodesBase64URLWithAndWithoutPadding() {
        #expect(JWT.base64URLDecode("_-8"[...].utf8) == [0xFF, 0xEF])
        #expect(JWT.base64URLDecode("YQ"[...].utf8) == Array("a".utf8))
        #expect(JWT.base64URLDecode("YQ=="[...].utf8) == Array("a".utf8))
        #expect(JWT.base64URLDecode("Y"[...].utf8) == nil)
        #expect(JWT.base64URLDecode(""[...].utf8) == [])
        let long = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let encoded = Data(long).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(JWT.base64URLDecode(encoded[...].utf8) == long)
    }

    /// Only the URL alphabet: the standard one's + and /, white space (which
    /// glibc's b64_pton would skip) and padding inside are refused.
    @Test func refusesWhatIsNotBase64URL() {
        for bad in ["+/8", "YQ+", "Y Q", "YQ\n", "Y=Q", "YQ=x"] {
            #expect(JWT.base64URLDecode(bad[...].utf8) == nil, "\(bad.debugDescription)")
        }
    }
}

@Suite struct RefreshPolicyTests {
    @Test func marginIsTenPercentOfLifetimeButAtLeastOneMinute() {
        let policy = RefreshPolicy()
        #expect(policy.margin(for: JWTClaims(exp: 3600, iat: 0)) == 360)
        #expect(policy.margin(for: JWTClaims(exp: 300, iat: 0)) == 60)
        #expect(policy.margin(for: JWTClaims(exp: 86_400, iat: 0)) == 8640)
        #expect(policy.margin(for: JWTClaims(exp: 3600, iat: nil)) == 60)
    }

    @Test func minTTLReplacesTheMargin() {
        #expect(RefreshPolicy(minTTL: 5).margin(for: JWTClaims(exp: 3600, iat: 0)) == 5)
        #expect(RefreshPolicy(minTTL: 0).isUsable(JWTClaims(exp: 100, iat: 0), now: 99))
        #expect(!RefreshPolicy(minTTL: 0).isUsable(JWTClaims(exp: 100, iat: 0), now: 100))
    }

    @Test func usableOnlyWithMoreThanTheMarginLeft() {
        let claims = JWTClaims(exp: 3600, iat: 0)
        let policy = RefreshPolicy()
        #expect(policy.isUsable(claims, now: 3239))
        #expect(!policy.isUsable(claims, now: 3240))
        #expect(!policy.isUsable(claims, now: 4000))
        #expect(!policy.isUsable(JWTClaims(exp: nil, iat: 0), now: 0))
    }
}

@Suite struct FormattingTests {
    @Test func formatsRFC3339InUTC() {
        #expect(rfc3339(0) == "1970-01-01T00:00:00Z")
        #expect(rfc3339(1_795_813_500) == "2026-11-27T21:05:00Z")
    }

    @Test func formatsHumanDurations() {
        #expect(humanDuration(59) == "in 59s")
        #expect(humanDuration(3599) == "in 59m 59s")
        #expect(humanDuration(7260) == "in 2h 1m")
        #expect(humanDuration(-90) == "1m 30s ago")
    }

    @Test func collapsesServerMessagesToOneBoundedLine() {
        #expect("a\n\tb  c\r\n".oneLine() == "a b c")
        #expect(String(repeating: "x", count: 500).oneLine(limit: 10) == "xxxxxxxxxx…")
        #expect("a\u{9B}31m\u{202E}b\u{7F}".oneLine() == "a31mb")
    }

    /// Escape sequences (ESC, the 8-bit CSI), DEL and bidirectional
    /// overrides go; newlines, tabs and every other character stay.
    /// The lists a person reads (help texts, errors) are made from the
    /// enums' cases, never typed again.
    @Test func listsAreSpokenFromTheirCases() {
        #expect([String]().spoken() == "" && ["a"].spoken() == "a" && ["a", "b"].spoken("and") == "a and b")
        #expect(AuthFlow.names.spoken() == "srp, password, browser, choice, custom or custom-srp")
        #expect(SignInMethod.names.spoken() == "email-otp, sms-otp, password, srp or passkey")
    }

    @Test func printableTextCannotDriveTheTerminal() {
        #expect("x\u{1B}]0;title\u{07}\u{1B}[2Jy".printable == "x]0;title[2Jy")
        #expect("\u{9B}31m\u{85}\u{202E}\u{2066}\u{200F}\u{061C}z\r".printable == "31mz")
        #expect("line one\n\tline two: é ✓ 日本".printable == "line one\n\tline two: é ✓ 日本")
    }
}
