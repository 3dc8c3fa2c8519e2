import Foundation
import Synchronization
import Testing
import CLinux
import CogCredTestSupport
@testable import CogCredWrite
@testable import CogCredRead

/// The agent's protocol end to end in one process: a client (AgentClient,
/// AgentTokenStore) on a real UNIX socket, the agent's server and service on
/// the other side with an in-memory store and a fake Cognito.
@Suite struct AgentTests {
    let now: Int64 = 1_800_000_000

    /// An agent serving `store` on a socket in a new directory; its sessions
    /// are made with `cognito` and `profile`.
    func agent(
        _ store: InMemoryTokenStore, _ cognito: FakeCognito = FakeCognito(), profile: Profile = testProfile,
        bounds: AgentServer.Bounds = AgentServer.Bounds(connections: 64, requestBytes: 16 << 20, answering: 8, answeringForOne: 4)
    ) throws -> AgentConnection {
        try servingAgent(store, cognito, profile: profile, clock: FakeClock(now), bounds: bounds)
    }

    func signedIn(_ store: InMemoryTokenStore, iat: Int64) throws {
        try store.write(.refresh, profile: "default", secret: "refresh-1", context: context)
        try store.write(.device, profile: "default", secret: "{\"key\":\"device-key\"}", context: context)
        try store.write(.clientSecret, profile: "default", secret: "the-client-secret", context: context)
        try store.write(.id, profile: "default", secret: TestJWT.id(iat: iat, lifetime: 3600), context: context)
        try store.write(.access, profile: "default", secret: TestJWT.access(iat: iat, lifetime: 3600), context: context)
    }

    @Test func aFreshTokenIsHandedOutAndTheLongLivedSecretsNeverAre() throws {
        let store = InMemoryTokenStore()
        try signedIn(store, iat: now - 100)
        let client = AgentClient(try agent(store), warn: { _ in })
        let tokens = try client.tokens([.access], profile: "default", policy: RefreshPolicy())
        #expect(tokens[.access]?.value == (try store.read(.access, profile: "default")))
        // Asked for every kind, the client gets what it may read; the rest reads as withheld.
        let found = try AgentTokenStore(client).read(SecretKind.allCases, profile: "default", binding: testProfile.binding)
        #expect(found[.access]?.value != nil && found[.id]?.value != nil)
        for kind in [SecretKind.refresh, .clientSecret, .device] { #expect(found[kind] == .withheld) }
        // And the agent says no more when asked for them by name.
        let answer = AgentService(
            config: { ConfigFile() }, manager: { _, _ in throw ConfigError.missingDomain }, store: store, describe: { AgentFailure(.other, "\($0)") }
        ).answer(Array(AgentRequest.read(profile: "default", kinds: [.refresh], binding: nil).line.utf8.dropLast())) { _ in }
        #expect(!answer.contains("refresh-1"))
    }

    @Test func aRefreshDueIsMadeByTheAgentWithItsOwnStore() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try signedIn(store, iat: now - 3500)
        let fresh = TestJWT.access(iat: now, lifetime: 3600)
        cognito.session.onRefresh(.success(AuthenticationResult(accessToken: fresh, idToken: TestJWT.id(iat: now, lifetime: 3600), refreshToken: nil)))
        let client = AgentClient(try agent(store, cognito), warn: { _ in })
        let both = try client.tokens([.access, .id], profile: "default", policy: RefreshPolicy())
        #expect(both[.access]?.value == fresh && both[.id] != nil)
        #expect(cognito.session.refreshCount == 1 && cognito.session.lastRefreshToken == "refresh-1")
        #expect(try store.read(.access, profile: "default") == fresh)
    }

    @Test func theAgentsWarningsReachTheClient() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try signedIn(store, iat: now - 3500)
        cognito.session.onRefresh(.failure(.transport(TransportError(.timedOut, "Operation timed out"))))
        let lines = Mutex<[String]>([])
        let client = AgentClient(try agent(store, cognito), warn: { line in lines.withLock { $0.append(line) } })
        let token = try client.tokens([.access], profile: "default", policy: RefreshPolicy())[.access]
        #expect(token?.value == (try store.read(.access, profile: "default")))
        #expect(lines.withLock { $0 }.first?.hasPrefix("cog-cred: warning: could not refresh (") == true)
    }

    @Test func aRefusedRefreshIsTheAgentsFailureWithItsCategory() throws {
        let store = InMemoryTokenStore()
        let cognito = FakeCognito()
        try signedIn(store, iat: now - 4000)
        cognito.session.onRefresh(.failure(.service(code: "NotAuthorizedException", message: "Refresh Token has been revoked", httpStatus: 400)))
        let client = AgentClient(try agent(store, cognito), warn: { _ in })
        #expect { try client.tokens([.access], profile: "default", policy: RefreshPolicy()) } throws: { error in
            (error as? AgentFailure)?.category == .notAuthenticated
        }
    }

    @Test func secretHashIsMadeByTheAgentThatKeepsTheSecret() throws {
        let store = InMemoryTokenStore()
        try signedIn(store, iat: now - 100)
        var profile = testProfile
        profile.clientSecretInKeyring = true
        let client = AgentClient(try agent(store, profile: profile), warn: { _ in })
        let hash = try client.secretHash(profile: "default", username: "alice")
        #expect(hash == SecretHash.compute(username: "alice", clientID: testProfile.clientID, clientSecret: "the-client-secret"))
    }

    @Test func writesStatusAndSignOutGoThroughTheAgent() throws {
        let store = InMemoryTokenStore()
        let connection = try agent(store)
        let client = AgentClient(connection, warn: { _ in })
        let through = AgentTokenStore(client)
        // A sign-in's writes, the refresh token included, land in the agent's store.
        try through.write(.refresh, profile: "default", secret: "refresh-2", context: context)
        try through.write(.access, profile: "default", secret: TestJWT.access(iat: now - 100, lifetime: 3600), context: context)
        #expect(try store.read(.refresh, profile: "default") == "refresh-2")
        let status = try client.status(profile: "default")
        #expect(status.signedIn && status.profile == "default" && status.accessTokenExpiresAt == now + 3500)
        // The one shape, status --json's, read back as it was.
        #expect(StatusAnswer(fields: StatusAnswer(status).fields)?.status == status)
        #expect(try client.signOut(profile: "default", scope: .local, forgettingDevice: false).removed == 2)
        #expect(try store.read(.refresh, profile: "default") == nil)
        #expect(try client.profile("default") == testProfile)
    }

    /// Whoever reaches the socket can make the agent keep only a few items
    /// of the profiles its machine configures, each for its own pool and
    /// client and of bounded size; the rest is refused, saying why.
    @Test func writesAreKeptOnlyForConfiguredProfilesTheirPoolAndClientAndOfBoundedSize() throws {
        let store = InMemoryTokenStore()
        let through = AgentTokenStore(AgentClient(try agent(store), warn: { _ in }))
        let other = ItemContext(userPoolID: "us-east-1_Other", clientID: "otherclient", username: nil)
        let refusals: [(String, ItemContext, String, FailureCategory, String)] = [
            ("unconfigured", context, "refresh-x", .configuration, "there is no profile unconfigured there"),
            ("default", other, "refresh-x", .configuration, "names user pool \(testProfile.userPoolID)"),
            ("default", context, String(repeating: "x", count: AgentProtocol.itemLimit + 1), .dataError, "at most 256 KiB"),
        ]
        for (profile, itemContext, secret, category, words) in refusals {
            #expect { try through.write(.refresh, profile: profile, secret: secret, context: itemContext) } throws: { error in
                guard case .agent(let failure) = error as? SecretServiceError else { return false }
                return failure.category == category && failure.message.contains(words) && failure.message.contains("nothing was stored")
            }
        }
        #expect(store.writes.isEmpty)
        try through.write(.refresh, profile: "default", secret: "refresh-3", context: context)
        #expect(store.writes == ["default/refresh"])
    }

    /// Silent connections cost a place in the agent's loop, not a thread;
    /// past the bound the oldest still sending its request is closed, and
    /// a client that asks at once is answered.
    @Test func silentConnectionsPastTheBoundCloseTheOldestAndAClientIsStillAnswered() throws {
        let store = InMemoryTokenStore()
        try signedIn(store, iat: now - 100)
        let connection = try agent(store, bounds: AgentServer.Bounds(connections: 8, requestBytes: 1 << 20, answering: 2, answeringForOne: 1))
        let silent = (0..<20).map { _ in clinux_unix_connect(connection.path) }
        defer { silent.forEach { close($0) } }
        #expect(silent.allSatisfy { $0 >= 0 })
        let token = try AgentClient(connection, warn: { _ in }).tokens([.access], profile: "default", policy: RefreshPolicy())[.access]
        #expect(token?.value == (try store.read(.access, profile: "default")))
        // The first was closed by the agent: it reads the end, not a timeout.
        _ = clinux_receive_timeout(silent[0], 5)
        var byte: UInt8 = 0
        #expect(recv(silent[0], &byte, 1, 0) == 0)
    }

    @Test func aClientOfAnotherVersionIsToldSoAndAnUnknownOperationIsRefused() {
        let service = AgentService(
            config: { ConfigFile() }, manager: { _, _ in throw ConfigError.missingDomain }, store: InMemoryTokenStore(),
            describe: { AgentFailure(.other, "\($0)") })
        let other = service.answer(Array("{\"v\":99,\"op\":\"tokens\"}".utf8)) { _ in }
        #expect(other.contains("speaks protocol 99") && other.contains("\"category\":\"protocol\""))
        let unknown = service.answer(Array("{\"v\":1,\"op\":\"steal\"}".utf8)) { _ in }
        #expect(unknown.contains("does not know the operation"))
        #expect(service.answer(Array("not json".utf8)) { _ in }.contains("one JSON object a line"))
        // A version no whole number holds is still only an error, never a crash.
        for version in ["1e300", "9223372036854775807", "-1.5", "\"1\""] {
            #expect(service.answer(Array("{\"v\":\(version),\"op\":\"tokens\"}".utf8)) { _ in }.contains("\"category\":\"protocol\""))
        }
        // Tokens are access and ID tokens: asked for a refresh token, the agent refuses.
        let refresh = service.answer(Array(AgentRequest.tokens(AgentRequest.Tokens(profile: "default", kinds: [.refresh])).line.utf8.dropLast())) { _ in }
        #expect(refresh.contains("\"error\""))
    }

    @Test func noAgentAtThePathIs69NamingItAndTheVariable() {
        let path = "/nonexistent-\(UUID().uuidString)/agent"
        #expect { let _: StatusAnswer = try AgentConnection(path: path).ask(.status(profile: "default")) { _ in } } throws: { error in
            let failure = error as? AgentFailure
            return failure?.category == .secretServiceUnavailable && failure?.message.contains(path) == true
                && failure?.message.contains("COG_CRED_AGENT") == true
        }
    }

    @Test func aLiveAgentsSocketIsNotTakenAndAStaleOneIsReplaced() throws {
        let connection = try agent(InMemoryTokenStore())
        guard case .failure(.taken(let reason)) = AgentSocket.listen(at: connection.path, environment: { _ in nil }) else {
            Issue.record("a second agent took a live socket")
            return
        }
        #expect(reason.contains(connection.path))
        // A socket file nothing listens on.
        let directory = (connection.path as NSString).deletingLastPathComponent
        let stale = directory + "/stale"
        let fd = clinux_unix_listen(stale)
        close(fd)
        guard case .success(let replaced) = AgentSocket.listen(at: stale, environment: { _ in nil }) else {
            Issue.record("a stale socket was not replaced")
            return
        }
        close(replaced.fd)
    }
}
