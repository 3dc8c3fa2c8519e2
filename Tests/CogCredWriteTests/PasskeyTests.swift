import Foundation
import Synchronization
import Testing
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

/// Passkeys: the relying party pinned by the profile, the client data and
/// credentials as WebAuthn writes them, the sign-in and the management
/// calls, over a fake Cognito and a fake security key.
@Suite struct PasskeyTests {
    let now: Int64 = 1_800_000_000
    let challenge = "q83vEjRWeJq8"

    var profile: Profile {
        var profile = testProfile
        profile.passkeyRPID = "auth.example.com"
        return profile
    }

    func options(rpId: String? = "auth.example.com", challenge: String? = nil, allow: [String] = ["AQIDBPr7"]) -> String {
        let allowed = allow.map { #"{"type":"public-key","id":"\#($0)"}"# }.joined(separator: ",")
        let rp = rpId.map { #""rpId":"\#($0)","# } ?? ""
        return #"{"challenge":"\#(challenge ?? self.challenge)",\#(rp)"timeout":60000,"allowCredentials":[\#(allowed)],"userVerification":"required"}"#
    }

    func ceremony(_ key: FakeAuthenticator) -> PasskeyCeremony {
        PasskeyCeremony(relyingParty: "auth.example.com", authenticator: key, prompts: ScriptedAnswers())
    }

    func tokens() -> AuthOutcome {
        .authenticated(AuthenticationResult(
            accessToken: TestJWT.access(iat: now, lifetime: 3600), idToken: TestJWT.id(iat: now, lifetime: 3600), refreshToken: "r1"))
    }

    func signedIn(_ cognito: FakeCognito, key: FakeAuthenticator, profile: Profile? = nil) throws -> TokenManager {
        let store = InMemoryTokenStore()
        try store.write(.refresh, profile: "default", secret: "r", context: context)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: now, lifetime: 3600), context: context)
        return makeManager(store: store, cognito: cognito, authenticator: key, profile: profile ?? self.profile, clock: FakeClock(now))
    }

    // MARK: - The ceremony

    /// The key signs the client data a native client writes: the challenge
    /// unchanged, the origin https://<the pinned id>.
    @Test func theClientDataCarriesTheChallengeAndThePinnedOrigin() throws {
        let key = FakeAuthenticator()
        let credential = try ceremony(key).signIn(WebAuthn.RequestOptions(json: options()), username: "alice")
        let request = try #require(key.state.withLock { $0.assertions.first })
        let clientData = try JSONSerialization.jsonObject(with: Data(request.clientData)) as! [String: Any]
        #expect(clientData["type"] as? String == "webauthn.get")
        #expect(clientData["challenge"] as? String == challenge)
        #expect(clientData["origin"] as? String == "https://auth.example.com")
        #expect(clientData["crossOrigin"] as? Bool == false)
        #expect(request.relyingParty == "auth.example.com" && request.userVerification == .required)
        #expect(request.allowCredentials == [[1, 2, 3, 4, 250, 251]])

        let sent = try JSONSerialization.jsonObject(with: Data(credential.utf8)) as! [String: Any]
        #expect(sent["id"] as? String == "AQIDBPr7" && sent["rawId"] as? String == "AQIDBPr7" && sent["type"] as? String == "public-key")
        let response = try #require(sent["response"] as? [String: String])
        #expect(response["clientDataJSON"] == Base64URL.encode(request.clientData))
        #expect(response["authenticatorData"] == "CQkJ" && response["signature"] == "Bwc" && response["userHandle"] == "BQ")
        #expect(response.values.allSatisfy { !$0.contains("=") && !$0.contains("+") && !$0.contains("/") })
    }

    /// Another relying party, even a subdomain of the pinned one, never
    /// reaches the key.
    @Test(arguments: ["evil.example", "sub.auth.example.com", "example.com", "AUTH.EXAMPLE.COM"])
    func anotherRelyingPartyIsRefusedBeforeTheKeyIsAsked(rpId: String) {
        let key = FakeAuthenticator()
        #expect(throws: PasskeyError.relyingPartyMismatch(sent: rpId, pinned: "auth.example.com")) {
            try ceremony(key).signIn(WebAuthn.RequestOptions(json: options(rpId: rpId)), username: "alice")
        }
        #expect(key.state.withLock { $0.assertions.isEmpty })
        #expect(PasskeyError.relyingPartyMismatch(sent: rpId, pinned: "x").category == .protocolViolation)
    }

    @Test func optionsWithoutAnRPIdAreTheCallersThatIsThePinnedOne() throws {
        let key = FakeAuthenticator()
        _ = try ceremony(key).signIn(WebAuthn.RequestOptions(json: options(rpId: nil)), username: "alice")
        #expect(key.state.withLock { $0.assertions.first?.relyingParty } == "auth.example.com")
    }

    /// A challenge that is not base64url would be re-encoded in the client
    /// data; options that are no JSON: neither reaches the key.
    @Test(arguments: [#"{"challenge":"a+b/c","rpId":"auth.example.com"}"#, #"{"challenge":"YWJj=="}"#, "not json", #"{"rpId":"auth.example.com"}"#])
    func malformedOptionsNeverReachTheKey(text: String) {
        let key = FakeAuthenticator()
        #expect(throws: PasskeyError.self) { try ceremony(key).signIn(WebAuthn.RequestOptions(json: text), username: "alice") }
        #expect(key.state.withLock { $0.assertions.isEmpty })
    }

    /// The options' timeout bounds the key's wait: at least a second, at
    /// most ten minutes, whatever number came (fuzz-passkey-options found
    /// one too large for an Int).
    @Test(arguments: [(nil, 60_000), (10.0, 60_000), (2_000.0, 2_000), (6.6e99, 600_000), (Double.infinity, 60_000), (-1.0, 60_000)] as [(Double?, Int)])
    func theTimeoutIsBounded(given: Double?, used: Int) {
        #expect(ceremony(FakeAuthenticator()).timeout(given) == used)
    }

    @Test func aRegistrationNeedsES256AndAUserIDAndPinsTheRelyingParty() throws {
        let key = FakeAuthenticator()
        var creation = WebAuthn.CreationOptions(
            rp: .init(id: "auth.example.com", name: "Example"), user: .init(id: "dXNlcg", name: "alice", displayName: nil),
            challenge: challenge, pubKeyCredParams: [.init(type: "public-key", alg: -257)], timeout: 1000,
            excludeCredentials: [.init(type: "public-key", id: "AQIDBPr7", transports: nil)],
            authenticatorSelection: .init(userVerification: "preferred", residentKey: "required", requireResidentKey: true))
        #expect(throws: PasskeyError.unsupportedAlgorithm([-257])) { try ceremony(key).register(creation) }
        creation.pubKeyCredParams.append(.init(type: "public-key", alg: -7))
        creation.rp.id = "other.example"
        #expect(throws: PasskeyError.relyingPartyMismatch(sent: "other.example", pinned: "auth.example.com")) {
            try ceremony(key).register(creation)
        }
        #expect(key.state.withLock { $0.creations.isEmpty })

        creation.rp.id = "auth.example.com"
        let credential = try ceremony(key).register(creation)
        let request = try #require(key.state.withLock { $0.creations.first })
        #expect(request.userID == Array("user".utf8) && request.userName == "alice" && request.userDisplayName == "alice")
        #expect(request.excludeCredentials == [[1, 2, 3, 4, 250, 251]])
        let clientData = try JSONSerialization.jsonObject(with: Data(request.clientData)) as! [String: Any]
        #expect(clientData["type"] as? String == "webauthn.create" && clientData["origin"] as? String == "https://auth.example.com")
        #expect(credential.id == "AQIDBPr7" && credential.response.transports == ["usb"])
        // {"fmt": "none", "attStmt": {}, "authData": h'0808'}
        let attestation = try #require(Base64URL.decode(credential.response.attestationObject))
        #expect(attestation == [0xA3, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0x67] + Array("attStmt".utf8) + [0xA0]
            + [0x68] + Array("authData".utf8) + [0x42, 8, 8])
    }

    // MARK: - CBOR

    @Test func theAuthenticatorDataComesOutOfItsByteString() {
        #expect(CBOR.byteString([0x43, 1, 2, 3]) == [1, 2, 3])
        let long = [UInt8](repeating: 7, count: 300)
        #expect(CBOR.byteString([0x59, 0x01, 0x2C] + long) == long)
        #expect(CBOR.byteString([0x58, 37] + long.prefix(37)) == Array(long.prefix(37)))
        #expect(CBOR.byteString([0x43, 1, 2]) == nil)  // short
        #expect(CBOR.byteString([0x43, 1, 2, 3, 4]) == nil)  // trailing bytes
        #expect(CBOR.byteString([0x63, 1, 2, 3]) == nil)  // a text string
        #expect(CBOR.byteString([0x5F, 0x41, 1, 0xFF]) == nil)  // indefinite length
        #expect(CBOR.byteString([0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == nil)
        #expect(CBOR.byteString([]) == nil)
    }

    @Test func headersTakeTheShortestForm() {
        #expect(CBOR.header(major: 2, length: 23) == [0x57])
        #expect(CBOR.header(major: 2, length: 24) == [0x58, 24])
        #expect(CBOR.header(major: 2, length: 256) == [0x59, 1, 0])
        #expect(CBOR.header(major: 2, length: 65536) == [0x5A, 0, 1, 0, 0])
    }

    // MARK: - Sign-in

    /// USER_AUTH with WEB_AUTHN preferred, no password read, the assertion
    /// in CREDENTIAL, the tokens stored.
    @Test func aPasskeySignInReadsNoPassword() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(name: "WEB_AUTHN", session: "s1", parameters: ["CREDENTIAL_REQUEST_OPTIONS": options()])))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(tokens())] }
        let key = FakeAuthenticator()
        let answers = ScriptedAnswers()
        try makeManager(store: store, cognito: cognito, authenticator: key, profile: profile, clock: FakeClock(now)).signIn(
            username: "alice", password: { Issue.record("a password was read"); return "pw" }, flow: .choice, method: .passkey, answers: answers)
        #expect(cognito.signIn.userAuthCalls.withLock { $0 } == [["PREFERRED_CHALLENGE": "WEB_AUTHN"]])
        let (name, responses) = try #require(cognito.signIn.responses.withLock { $0.first })
        #expect(name == "WEB_AUTHN" && responses["USERNAME"] == "alice")
        let credential = try JSONSerialization.jsonObject(with: Data(try #require(responses["CREDENTIAL"]).utf8)) as! [String: Any]
        #expect(credential["id"] as? String == "AQIDBPr7")
        #expect(answers.seen.touches == 1)
        #expect(try store.read(.refresh, profile: "default", binding: nil) == "r1")
    }

    /// The security key is made once a sign-in: when the passkey is
    /// chosen, and the same one answers the challenge.
    @Test func aSignInMakesOneCeremony() throws {
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(name: "WEB_AUTHN", session: "s1", parameters: ["CREDENTIAL_REQUEST_OPTIONS": options()])))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(tokens())] }
        let key = FakeAuthenticator()
        let made = Mutex(0)
        let manager = TokenManager(
            profileName: "default", profile: profile, store: InMemoryTokenStore(), cognito: { cognito }, oauth: { throw ConfigError.missingDomain },
            identity: { throw CognitoError.deadlineExceeded },
            authenticator: {
                made.withLock { $0 += 1 }
                return key
            }, clock: FakeClock(now), refreshMemory: InMemoryRefreshMemory(), lock: NoRefreshLock(), warn: { _ in })
        try manager.signIn(username: "alice", password: { "pw" }, flow: .choice, method: .passkey, answers: ScriptedAnswers())
        #expect(made.withLock { $0 } == 1 && key.state.withLock { $0.assertions.count } == 1)
    }

    /// Options Cognito sends that cannot be read fail the sign-in as the
    /// ceremony's (76), once a passkey answers; the key is never asked.
    @Test func unreadableOptionsFailThePasskeySignIn() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(name: "WEB_AUTHN", session: "s1", parameters: ["CREDENTIAL_REQUEST_OPTIONS": "not json"])))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(tokens())] }
        let key = FakeAuthenticator()
        #expect(throws: PasskeyError.malformedOptions("the passkey challenge's options are not WebAuthn request options")) {
            try makeManager(store: store, cognito: cognito, authenticator: key, profile: profile, clock: FakeClock(now)).signIn(
                username: "alice", password: { "pw" }, flow: .choice, method: .passkey, answers: ScriptedAnswers())
        }
        #expect(key.state.withLock { $0.assertions.isEmpty } && store.writes.isEmpty)
    }

    @Test func aProfileWithoutARelyingPartySendsNothing() throws {
        let cognito = FakeCognito()
        let key = FakeAuthenticator()
        #expect(throws: PasskeyError.noRelyingParty(profile: "default")) {
            try makeManager(cognito: cognito, authenticator: key, profile: testProfile, clock: FakeClock(now)).signIn(
                username: "alice", password: { "pw" }, flow: .choice, method: .passkey, answers: ScriptedAnswers())
        }
        #expect(cognito.signIn.userAuthCalls.withLock { $0 }.isEmpty && key.state.withLock { $0.assertions.isEmpty })
        #expect(PasskeyError.noRelyingParty(profile: "default").category == .configuration)
    }

    @Test func theDomainsHostIsTheDefaultRelyingParty() {
        var profile = testProfile
        profile.domain = "https://my-app.auth.us-east-1.amazoncognito.com"
        #expect(profile.passkeyRelyingParty == "my-app.auth.us-east-1.amazoncognito.com")
        profile.domain = "https://login.example.com:8443/x"
        #expect(profile.passkeyRelyingParty == "login.example.com")
        profile.passkeyRPID = "example.com"
        #expect(profile.passkeyRelyingParty == "example.com")
    }

    /// A refusal at the key (or a challenge for another relying party)
    /// stores nothing.
    @Test(arguments: [PasskeyError.declined, .wrongPIN(retriesLeft: 7), .noCredential, .timedOut(seconds: 60)])
    func aFailureAtTheKeyStoresNothing(failure: PasskeyError) throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(name: "WEB_AUTHN", session: "s1", parameters: ["CREDENTIAL_REQUEST_OPTIONS": options()])))
        cognito.signIn.challengeAnswers.withLock { $0 = [.success(tokens())] }
        let key = FakeAuthenticator()
        key.state.withLock { $0.failure = failure }
        #expect(throws: failure) {
            try makeManager(store: store, cognito: cognito, authenticator: key, profile: profile, clock: FakeClock(now)).signIn(
                username: "alice", password: { "pw" }, flow: .choice, method: .passkey, answers: ScriptedAnswers())
        }
        #expect(store.writes.isEmpty && cognito.signIn.responses.withLock { $0 }.isEmpty)
        #expect(failure.category == .notAuthenticated)
    }

    /// A WEB_AUTHN challenge sent to an SRP sign-in is not answered.
    @Test func aPasskeyChallengeOutsideTheChoiceFlowIsRefused() throws {
        let cognito = FakeCognito()
        cognito.signIn.onSignIn(.success(.challenge(name: "WEB_AUTHN", session: "s1", parameters: ["CREDENTIAL_REQUEST_OPTIONS": options()])))
        let key = FakeAuthenticator()
        #expect(throws: AuthError.unsupportedChallenge("WEB_AUTHN")) {
            try makeManager(cognito: cognito, authenticator: key, profile: profile, clock: FakeClock(now)).signIn(
                username: "alice", password: "pw", flow: .password, answers: ScriptedAnswers())
        }
        #expect(key.state.withLock { $0.assertions.isEmpty })
    }

    // MARK: - Management

    @Test func addingRegistersWhatTheKeyMadeAndNamesItAsCognitoDoes() throws {
        let cognito = FakeCognito()
        cognito.passkeys.state.withLock {
            $0.options = WebAuthn.CreationOptions(
                rp: .init(id: "auth.example.com", name: nil), user: .init(id: "dXNlcg", name: "alice", displayName: "Alice"),
                challenge: challenge, pubKeyCredParams: [.init(type: "public-key", alg: -7)], timeout: nil, excludeCredentials: nil,
                authenticatorSelection: nil)
            $0.pages = [[Passkey(id: "other", name: "Old key")], [Passkey(id: "AQIDBPr7", name: "YubiKey 5")]]
        }
        let added = try signedIn(cognito, key: FakeAuthenticator()).addPasskey(prompts: ScriptedAnswers())
        #expect(added?.name == "YubiKey 5")
        #expect(cognito.passkeys.state.withLock { $0.calls } == ["start", "complete AQIDBPr7", "list -", "list 1"])
    }

    @Test func addingWithoutARelyingPartySendsNothing() throws {
        let cognito = FakeCognito()
        #expect(throws: PasskeyError.noRelyingParty(profile: "default")) {
            try signedIn(cognito, key: FakeAuthenticator(), profile: testProfile).addPasskey(prompts: ScriptedAnswers())
        }
        #expect(cognito.passkeys.state.withLock { $0.calls }.isEmpty)
    }

    @Test func anUnknownIDIsADataErrorAndAMissingScopeSaysSo() throws {
        let cognito = FakeCognito()
        cognito.passkeys.state.withLock { $0.error = .service(code: "ResourceNotFoundException", message: "Credential not found", httpStatus: 400) }
        #expect(performing: { try signedIn(cognito, key: FakeAuthenticator()).removePasskey("AAAA") }, throws: { error in
            (error as? AuthError)?.category == .dataError && (error as? AuthError)?.message.contains("no passkey with that id") == true
        })
        cognito.passkeys.state.withLock { $0.error = .service(code: "NotAuthorizedException", message: "Access Token does not have required scopes", httpStatus: 400) }
        #expect(performing: { try signedIn(cognito, key: FakeAuthenticator()).passkeys() }, throws: { error in
            (error as? AuthError)?.message.contains("aws.cognito.signin.user.admin") == true
        })
    }

    // MARK: - The wire

    /// CompleteWebAuthnRegistration: the AWS names outside, W3C's inside.
    @Test func theCredentialKeepsWebAuthnsNamesInsideTheRequest() throws {
        let transport = FakeTransport(status: 200, body: "{}")
        let client = CognitoHTTPClient(
            endpoint: "http://127.0.0.1:1/", clientID: "client123", timeouts: Timeouts(connect: 5, request: 15, command: 30),
            deadline: Deadline(secondsFromNow: 30), transport: transport, retryPolicy: RetryPolicy(sleeper: { _ in }))
        let credential = WebAuthn.RegistrationCredential(
            NewCredential(id: [1, 2], authenticatorData: [3], format: "none", attestationStatement: [0xA0], transports: ["usb"]),
            clientData: Array("{}".utf8))
        try client.completePasskeyRegistration(accessToken: "at", credential: credential)
        let body = try JSONSerialization.jsonObject(with: try #require(transport.last).body) as! [String: Any]
        #expect(Set(body.keys) == ["AccessToken", "Credential"])
        let sent = try #require(body["Credential"] as? [String: Any])
        #expect(Set(sent.keys) == ["id", "rawId", "type", "response", "clientExtensionResults", "authenticatorAttachment"])
        let response = try #require(sent["response"] as? [String: Any])
        #expect(Set(response.keys) == ["clientDataJSON", "attestationObject", "transports"])
    }

    /// StartWebAuthnRegistration's options (a JSON object) and
    /// ListWebAuthnCredentials' pages, as Cognito answers them.
    @Test func theOptionsAndTheListAreRead() throws {
        let start = FakeTransport(status: 200, body: #"{"CredentialCreationOptions":{"rp":{"id":"auth.example.com","name":"x"},"user":{"id":"dXNlcg","name":"alice","displayName":"alice"},"challenge":"abc","pubKeyCredParams":[{"type":"public-key","alg":-7}],"timeout":60000,"excludeCredentials":[],"authenticatorSelection":{"requireResidentKey":true,"residentKey":"required","userVerification":"preferred"}}}"#)
        let client = { (transport: FakeTransport) in
            CognitoHTTPClient(
                endpoint: "http://127.0.0.1:1/", clientID: "client123", timeouts: Timeouts(connect: 5, request: 15, command: 30),
                deadline: Deadline(secondsFromNow: 30), transport: transport, retryPolicy: RetryPolicy(sleeper: { _ in }))
        }
        let options = try client(start).startPasskeyRegistration(accessToken: "at")
        #expect(options.rp.id == "auth.example.com" && options.user.name == "alice" && options.pubKeyCredParams.first?.alg == -7)
        #expect(options.authenticatorSelection?.userVerification == "preferred")
        let list = FakeTransport(status: 200, body: #"{"Credentials":[{"CredentialId":"AQID","FriendlyCredentialName":"Key","RelyingPartyId":"auth.example.com","AuthenticatorAttachment":"cross-platform","AuthenticatorTransports":["usb"],"CreatedAt":1.8E9}],"NextToken":"n2"}"#)
        let page = try client(list).listPasskeys(accessToken: "at", nextToken: nil)
        #expect(page.passkeys == [Passkey(id: "AQID", name: "Key", relyingParty: "auth.example.com", attachment: "cross-platform", transports: ["usb"], created: 1_800_000_000)])
        #expect(page.next == "n2")
    }
}
