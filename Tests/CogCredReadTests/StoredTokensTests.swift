import Testing
import CogCredTestSupport
@testable import CogCredRead

/// The read path shared by both binaries: what is stored is handed out only
/// when it belongs to the profile as configured now, is well formed and fresh.
@Suite struct StoredTokensTests {
    let now: Int64 = 1_800_000_000

    func reader(_ store: InMemoryTokenStore, profile: Profile = testProfile) -> StoredTokens<InMemoryTokenStore, FakeClock> {
        StoredTokens(profileName: "default", profile: profile, store: store, clock: FakeClock(now))
    }

    @Test func freshBoundTokensAreHandedOut() throws {
        let store = InMemoryTokenStore()
        let access = TestJWT.access(iat: now, lifetime: 3600)
        try store.write(.access, profile: "default", secret: access, context: context)
        #expect(try reader(store).usable([.access], policy: RefreshPolicy())?[.access]?.value == access)
    }

    @Test func itemsOfAnotherPoolOrClientAreRefused() throws {
        let store = InMemoryTokenStore()
        let access = TestJWT.access(iat: now, lifetime: 3600)
        try store.write(.access, profile: "default", secret: access, context: context)
        for other in [Profile(userPoolID: "us-east-1_Other", clientID: "client123"), Profile(userPoolID: "us-east-1_Test", clientID: "other")] {
            #expect(throws: StoredTokensError.session(.boundElsewhere(profile: "default", unbound: false))) {
                try reader(store, profile: other).usable([.access], policy: RefreshPolicy())
            }
        }
    }

    @Test func itemsSavedWithoutABindingAreRefusedWithTheirOwnMessage() throws {
        let store = InMemoryTokenStore()
        store.writeUnbound(.access, profile: "default", secret: TestJWT.access(iat: now, lifetime: 3600))
        #expect(throws: StoredTokensError.session(.boundElsewhere(profile: "default", unbound: true))) {
            try reader(store).usable([.access], policy: RefreshPolicy())
        }
        #expect(StoredSessionError.boundElsewhere(profile: "default", unbound: true).message.contains("0.1"))
    }

    @Test func aTokenWhoseClaimsNameAnotherPoolIsRefusedEvenUnderTheRightAttributes() throws {
        // Another program replaced the secret of our item with another pool's token.
        let store = InMemoryTokenStore()
        let foreign = TestJWT.make([
            "exp": now + 3600, "iat": now, "token_use": "access", "client_id": testProfile.clientID,
            "iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Other",
        ])
        try store.write(.access, profile: "default", secret: foreign, context: context)
        #expect(throws: StoredTokensError.session(.boundElsewhere(profile: "default", unbound: false))) { try reader(store).usable([.access], policy: RefreshPolicy()) }
        let wrongAudience = TestJWT.make([
            "exp": now + 3600, "iat": now, "token_use": "id", "aud": "someone-else",
            "iss": "https://cognito-idp.us-east-1.amazonaws.com/\(testProfile.userPoolID)",
        ])
        try store.write(.id, profile: "default", secret: wrongAudience, context: context)
        #expect(throws: StoredTokensError.session(.boundElsewhere(profile: "default", unbound: false))) { try reader(store).usable([.id], policy: RefreshPolicy()) }
    }

    @Test func aValueThatCouldInjectALineIsNeverHandedOut() throws {
        let store = InMemoryTokenStore()
        let access = TestJWT.access(iat: now, lifetime: 3600)
        for bad in [access + "\npassword=evil", access + " ", "a.b", "a..c", ".b.c", access + ".d", "a.b.c\r"] {
            #expect(!IssuedToken.isWellFormed(bad), "\(bad.debugDescription)")
            try store.write(.access, profile: "default", secret: bad, context: context)
            // Not usable: a refresh replaces it, and it is never printed.
            #expect(try reader(store).usable([.access], policy: RefreshPolicy()) == nil)
        }
        #expect(IssuedToken.isWellFormed("a.b."))
        #expect(IssuedToken.isWellFormed(access))
    }

    @Test func extremeTimesNeitherCrashNorPass() throws {
        for exp in [Int64.min, -1, 9_000_000_000_000_000_000, Int64.max] {
            let token = TestJWT.make([
                "exp": exp, "iat": Int64.min, "token_use": "access", "client_id": testProfile.clientID,
                "iss": "https://x/\(testProfile.userPoolID)",
            ])
            let claims = try JWT.claims(of: token)
            #expect(claims.exp! >= 0 && claims.exp! <= JWTClaims.latestSeconds)
            let usable = RefreshPolicy().isUsable(claims, now: now)
            #expect(usable == (exp > now), "exp \(exp)")
            _ = rfc3339(claims.exp!)
            _ = TokenOutput.render(.json, choice: .access, tokens: [.access: IssuedToken(value: token, claims: claims)])
        }
        #expect(RefreshPolicy().isUsable(JWTClaims(exp: JWTClaims.latestSeconds), now: Int64.min) == false)
    }
}
