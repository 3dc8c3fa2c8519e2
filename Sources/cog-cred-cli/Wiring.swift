import ArgumentParser
import Synchronization
import CogCredWrite

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Builds the library objects a command needs from the environment and the
/// config file.
struct Wiring {
    let environment: [String: String]
    let paths: Paths
    /// The command's profile options: the profile, and `--no-prompt`.
    let options: ProfileOptions?
    /// A locked keyring may show its unlock prompt: not with `--no-prompt`,
    /// nor for a caller that says nobody is there to answer (kubectl's
    /// "interactive": false, the agent).
    let mayPromptToUnlock: Bool

    init(_ options: ProfileOptions? = nil, promptingToUnlock: Bool = true) {
        environment = ProcessInfo.processInfo.environment
        paths = Paths(environment: environment)
        self.options = options
        mayPromptToUnlock = promptingToUnlock && !(options?.noPrompt ?? false)
    }

    /// The profile in effect: --profile, then COG_CRED_PROFILE, then "default".
    func profileName() throws(ConfigError) -> String {
        try ProfileValidation.selectedName(flag: options?.profile, environment: { environment[$0] })
    }

    /// Taken once per process: the front binary's lock, if it handed one over.
    static let handedOverLock = HandedOverLock.take()

    private var configStore: ConfigStore { ConfigStore(path: paths.configFile) }

    /// The profile in effect, checked to be configured (78 when not), for
    /// the commands that only write its name elsewhere (setup-git, setup-kubectl).
    func configuredProfileName() throws(ConfigError) -> String {
        let name = try profileName()
        _ = try configStore.profile(name)
        return name
    }

    /// The profiles and their keyring items, for the commands about
    /// profiles rather than one session.
    var profiles: ConfiguredProfiles {
        var session: (@Sendable (String) -> any SessionItems)? = nil
        if let agent { session = { name in AgentSession(agent, profile: name) } }
        let wiring = self
        return ConfiguredProfiles(
            config: configStore, store: tokenStore, refreshMemory: FileRefreshMemory(directory: paths.stateDirectory),
            lock: { wiring.refreshLock(wait: $0) }, warn: { Output.note($0) }, session: session)
    }

    /// Where the sessions are: the agent COG_CRED_AGENT names (never the
    /// keyring then, even if it would answer); in the agent itself, the
    /// store it serves (`Wiring.serving`); else the Secret Service.
    var tokenStore: any TokenStore {
        if let served = Wiring.serving.withLock({ $0 }) { return served }
        if let agent { return AgentTokenStore(agent) }
        return keyring
    }

    /// The agent COG_CRED_AGENT names, unless this process is an agent.
    var agent: AgentClient? {
        guard Wiring.serving.withLock({ $0 }) == nil, let connection = AgentConnection.configured({ environment[$0] }) else { return nil }
        let trace: (@Sendable (String) -> Void)? = DebugTrace.enabled ? { @Sendable (line: String) in DebugTrace.line(line) } : nil
        return AgentClient(connection, warn: { Output.note($0) }, trace: trace)
    }

    /// Where the sessions are, in a message's words.
    var storeName: String {
        agent?.connection.described ?? "the Secret Service"
    }

    /// Set once by `cog-cred agent`: the store it serves its sessions from.
    static let serving = Mutex<(any TokenStore)?>(nil)

    /// The Secret Service on this process's session bus; an encrypted
    /// session where the bus is not reached through Unix sockets only. A
    /// locked keyring is unlocked through the service's own prompt unless
    /// the command must not wait for a person.
    var keyring: any TokenStore {
        // The prompt is a window on the desktop: without a display here, no
        // one at this terminal could see it (SSH, a container, cron), and
        // a keyring daemon would only dismiss it after a while.
        let prompt: SecretServiceStore.UnlockPrompt =
            mayPromptToUnlock && Desktop.hasDisplay({ environment[$0] }) ? .waitingAtMost(seconds: unlockWait) : .never
        let store = SecretServiceStore(
            environment: environment, encryption: { SecretServiceCipher() }, unlockPrompt: prompt, writer: Wiring.writer)
        return DebugTrace.enabled ? TracedTokenStore(inner: store) : store
    }

    /// HTTPS, watched: a long wait is said (NetworkReport), and traced with --debug.
    static let transport = ObservedTransport(curl, observer: NetworkReport.shared)
    /// libcurl, its connections kept for the process (CurlTransport).
    private static let curl = CurlTransport()

    /// Lets go of the Secret Service connection and the kept HTTPS
    /// connections before this process becomes another program (exec).
    static func handOverProcess() {
        SecretServiceStore.disconnect()
        curl.closeConnections()
    }

    /// One libsecret connection for the process: writes, deletes and
    /// unlocks follow the provider's prompts through it.
    static let writer = LibsecretWriter(environment: { ProcessInfo.processInfo.environment[$0] })

    /// A failure's one line; a Secret Service's in the words of the program
    /// that provides it (KeePassXC, KWallet, gnome-keyring), asked only now.
    static func describe(_ failure: any CogCredFailure) -> String {
        guard let error = failure as? SecretServiceError,
            let provider = SecretServiceProvider.current(environment: { ProcessInfo.processInfo.environment[$0] }),
            let advice = provider.message(for: error, collectionLocked: error == .locked ? writer.defaultCollectionLocked() : nil)
        else { return ErrorWording.line(failure) }
        return advice
    }

    /// How long a person has to answer the keyring's unlock prompt:
    /// COG_CRED_UNLOCK_WAIT seconds (1 to 3600), else two minutes.
    var unlockWait: Int32 {
        environment["COG_CRED_UNLOCK_WAIT"].flatMap { Int32($0) }.flatMap { (1...3600).contains($0) ? $0 : nil } ?? 120
    }


    /// The profile's token manager, talking to the real Secret Service and
    /// the profile's Cognito endpoint under one deadline for the command.
    func tokenManager(authenticator: String? = nil, configuredHere: Bool = false) throws -> TokenManager {
        let name = try profileName()
        do {
            return try tokenManager(named: name, authenticator: authenticator, configuredHere: configuredHere)
        } catch ConfigError.profileNotFound(let profile, let path, let nearest, _) where options?.profile == nil && environment["COG_CRED_PROFILE"] == name {
            // Not typed here: say where the name came from, or the typo is hard to find.
            throw ConfigError.profileNotFound(profile: profile, path: path, nearest: nearest, fromEnvironment: true)
        }
    }

    /// `authenticator`: the security key's device path (`--authenticator`),
    /// else COG_CRED_AUTHENTICATOR's, else the first key libfido2 finds.
    ///
    /// With an agent, a profile configured here is used as it is, else the
    /// agent's: a machine its socket is forwarded to needs no configuration
    /// to read. `configuredHere`: only this machine's (a sign-in, which
    /// talks to Cognito from here).
    func tokenManager(
        named name: String, authenticator: String? = nil, configuredHere: Bool = false,
        warn: @escaping @Sendable (String) -> Void = { Output.note($0) }
    ) throws -> TokenManager {
        let agent = self.agent
        // Known to answer, and to be this user's, before anything goes to Cognito.
        try agent?.connection.check()
        let file = try configStore.load()
        let profile: Profile
        if let configured = file.profiles[name] {
            profile = configured
        } else if let agent, !configuredHere {
            profile = try agent.profile(name)
        } else {
            throw file.notFound(name, path: paths.configFile)
        }
        let environment = self.environment
        let connection = self.connection(profile)
        let store = tokenStore
        // Built on first use: reading the client secret costs a keyring
        // lookup that handing out a fresh stored token never needs, and an
        // endpoint that may not be used (plain HTTP, Endpoint.resolve) must
        // stop only what would send something to it.
        let clientSecret: @Sendable () throws -> String? = {
            guard profile.clientSecretInKeyring == true else { return nil }
            // The agent keeps it, and makes SECRET_HASH itself (below); the
            // token endpoint's grants need the secret itself.
            if agent != nil { throw ConfigError.clientSecretInAgent(profile: name) }
            // Bound like the tokens: a secret stored for another pool or client is not this client's.
            guard let stored = try store.read(.clientSecret, profile: name, binding: profile.binding) else {
                throw ConfigError.clientSecretMissing(profile: name)
            }
            return stored
        }
        let cognito: @Sendable () throws -> any CognitoClient = {
            let endpoint = try Endpoint.resolve(profile: profile, environment: environment)
            // The agent that keeps the client secret makes SECRET_HASH.
            var secretHashes: (@Sendable (String) throws(AgentFailure) -> String)? = nil
            var secret: String? = nil
            if let agent, profile.clientSecretInKeyring == true {
                secretHashes = { (username: String) throws(AgentFailure) -> String in try agent.secretHash(profile: name, username: username) }
            } else {
                secret = try clientSecret()
            }
            Wiring.noteGlobalEndpoint(endpoint)
            return CognitoHTTPClient(
                endpoint: endpoint.url, clientID: profile.clientID, clientSecret: secret, secretHashes: secretHashes,
                allowsCleartext: endpoint.allowsCleartext, connection: connection)
        }
        let domain: @Sendable () throws -> Endpoint.Resolved = { try Endpoint.domain(profile, environment: environment) }
        let oauth: @Sendable () throws -> any OAuthClient = {
            let domain = try domain()
            return OAuthHTTPClient(
                domain: domain.url, clientID: profile.clientID, clientSecret: try clientSecret(), allowsCleartext: domain.allowsCleartext,
                connection: connection)
        }
        let identity: @Sendable () throws -> any CognitoIdentityClient = {
            guard let poolID = profile.identityPoolID else { throw ConfigError.missingIdentityPool(profile: name) }
            let region = String(poolID.prefix { $0 != ":" })
            let identityEndpoint = try Endpoint.service(
                .identityPools, variable: "AWS_ENDPOINT_URL_COGNITO_IDENTITY", region: region, profile: profile,
                environment: environment)
            let sts = try Endpoint.service(.sts, variable: "AWS_ENDPOINT_URL_STS", region: region, profile: profile, environment: environment)
            Wiring.noteGlobalEndpoint(identityEndpoint)
            return CognitoIdentityHTTPClient(
                identityEndpoint: identityEndpoint.url, stsEndpoint: sts.url, identityCleartext: identityEndpoint.allowsCleartext,
                stsCleartext: sts.allowsCleartext, connection: connection)
        }
        let device = authenticator ?? environment["COG_CRED_AUTHENTICATOR"].flatMap { $0.isEmpty ? nil : $0 }
        return TokenManager(
            profileName: name, profile: profile, store: store, cognito: cognito, oauth: oauth, identity: identity,
            authenticator: { Fido2Authenticator(path: device) }, refreshMemory: FileRefreshMemory(directory: paths.stateDirectory),
            // With an agent, the profile's lock is the agent's, taken where it
            // refreshes: held here too, the agent would wait on this command.
            lock: agent == nil ? refreshLock(wait: profile.refreshWait) : NoRefreshLock(),
            warn: warn, session: agent.map { AgentSession($0, profile: name) }, domain: domain)
    }

    /// The profile's lock file (waited on for at most `wait` seconds: the
    /// profile's `refreshWait`), or the one the front handed over.
    func refreshLock(wait: Double) -> FileRefreshLock {
        FileRefreshLock(directory: FileRefreshLock.directory(environment: environment), wait: wait, held: Wiring.handedOverLock)
    }
}

extension Wiring {
    /// The command's overall time budget, started when first asked for; the
    /// time spent waiting for the person (PersonTime) is given back.
    func deadline(_ profile: Profile) -> Deadline {
        Deadline(secondsFromNow: profile.timeouts.command, givingBack: { PersonTime.total })
    }

    /// How every HTTP client of the command reaches its service: the one
    /// transport, the profile's timeouts and CA bundle, the command's deadline.
    func connection(_ profile: Profile) -> Connection {
        Connection(
            transport: Wiring.transport, timeouts: profile.timeouts, deadline: deadline(profile),
            caBundle: CABundle.chosen(profile: profile, environment: environment),
            proxies: ProxySettings(environment: environment, agents: Wiring.serving.withLock { $0 } != nil))
    }

    func endpoint(_ profile: Profile) throws -> Endpoint.Resolved {
        try Endpoint.resolve(profile: profile, environment: environment)
    }

    /// The issuers a token of the profile's pool may name: the pool at the
    /// endpoint in use.
    func issuers(_ profile: Profile) throws -> [String] {
        TokenVerifier.poolKeys(endpoint: try endpoint(profile).url, profile: profile).issuers
    }

    /// Where `status --verify` fetches the pool's keys, within the command's deadline.
    func poolKeySource(_ profile: Profile) throws -> PoolKeySource {
        let endpoint = try endpoint(profile)
        Wiring.noteGlobalEndpoint(endpoint)
        let verifier = TokenVerifier(allowsCleartext: endpoint.allowsCleartext, connection: connection(profile))
        return PoolKeySource(verifier: verifier, pool: TokenVerifier.poolKeys(endpoint: endpoint.url, profile: profile))
    }

    /// AWS_ENDPOINT_URL is meant for every AWS service and is often set for
    /// something else (LocalStack, MinIO): when it sends Cognito requests
    /// somewhere, say so, once per command, before the first one.
    static func noteGlobalEndpoint(_ endpoint: Endpoint.Resolved) {
        guard endpoint.variable == "AWS_ENDPOINT_URL" else { return }
        let first = globalEndpointNoted.withLock { noted in
            defer { noted = true }
            return !noted
        }
        if first { Output.note("cog-cred: note: sending Cognito requests to \(LibcurlURL.shown(endpoint.url).oneLine(limit: 100)) (from AWS_ENDPOINT_URL)") }
    }

    private static let globalEndpointNoted = Mutex(false)
}
