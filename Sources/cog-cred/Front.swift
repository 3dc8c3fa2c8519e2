#if canImport(CogCredRead)  // not in the Embedded build, which compiles the library in
import CogCredRead
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Answers one read-only request from the stored tokens, or hands it over:
/// one switch, whichever keeps the session (`source`).
struct Front {
    let request: ReadRequest
    let environment: @Sendable (String) -> String?
    let source: Source

    /// Where the tokens are read from.
    enum Source {
        /// The Secret Service, already connecting (see main.swift).
        case keyring(SecretServiceStore)
        /// The agent COG_CRED_AGENT names: a read is one request on its
        /// socket, and no D-Bus at all. Whatever it answers is the answer:
        /// its failure is said and exited with here, never retried on the
        /// keyring.
        case agent(AgentConnection)
    }

    /// Writes the answer and exits, or hands the request over; never returns.
    func answer(_ handover: Handover) -> Never {
        var handover = handover
        if request.needsAgent, case .keyring = source { handover.run() }
        // Through an agent, the agent reads its own configuration: this
        // machine's is read only where it counts (status, git's erase).
        var config = ConfigFile()
        if case .keyring = source { config = configuration(handover) }

        switch request {
        case .dockerList:
            guard case .keyring = source else { handover.run() }  // cog-cred-cli's, through the agent too
            finish(DockerCredential.handle(DockerCredential.Action.list.rawValue, helper(config, handover)))
        case .awsCredentials(let profile, let minTTL):
            // Called before every AWS CLI command: stored credentials with
            // enough life left are answered here; anything else (none, too
            // old, another identity pool or user, a locked keyring, the
            // agent's) goes to cog-cred-cli.
            guard case .keyring(let store) = source, let name = self.profile(profile), let settings = config.profiles[name],
                settings.identityPoolID != nil,
                let found = try? store.read(AWSCredentials.kinds, profile: name, binding: settings.binding),
                let credentials = AWSCredentials(found: found, identityPoolID: settings.identityPoolID),
                credentials.isFresh(now: SystemClock().now(), margin: minTTL ?? AWSCredentials.defaultMinTTL)
            else { handover.run() }
            finish(credentials.credentialProcess + "\n")
        case .token(let token):
            guard let name = profile(token.profile), let (shape, needed) = resolved(token) else { handover.run() }
            // `--id-token`: the answer is the ID token, which a machine has not.
            let tokens = self.tokens(needed, of: name, minTTL: token.minTTL, idNeeded: token.choice == .id, config, handover)
            finish(render(shape, token.choice, tokens) + "\n")
        case .exec(let profile, let minTTL, let choice, let command):
            guard let name = self.profile(profile) else { handover.run() }
            let tokens = self.tokens([.access, .id], of: name, minTTL: minTTL, idNeeded: choice == .id, config, handover)
            execute(command, access: tokens[.access]!, id: tokens[.id], authorizing: choice)
        case .git(let action, let profile):
            if action == .erase, case .agent = source { config = configuration(handover) }
            // `capability` reads nothing; `store` reads the request and keeps
            // nothing; `erase` forgets the token git says was refused.
            var input: [UInt8] = []
            if action != .capability {
                guard let read = try? StandardInput.readRequest() else { handover.run() }
                input = read
                // cog-cred-cli reads the same bytes if the request goes there.
                handover.input = input
            }
            finish(GitCredential.handle(action.rawValue, helper(config, handover, named: profile, input: input)))
        case .dockerGet:
            guard let input = try? StandardInput.readAll(limit: 65536) else { handover.run() }
            handover.input = input
            finish(DockerCredential.handle(DockerCredential.Action.get.rawValue, helper(config, handover, input: input)))
        case .whoami(let profile, let json):
            guard let name = self.profile(profile), case .agent(let agent) = source else { handover.run() }
            whoami(name, json: json, agent)
        case .status(let profile, let json, let offline):
            guard let name = self.profile(profile), case .agent(let agent) = source else { handover.run() }
            status(name, json: json, offline: offline, configuration(handover), agent)
        case .refresh(let profile):
            guard let name = self.profile(profile), case .agent(let agent) = source else { handover.run() }
            refresh(name, agent)
        case .signOut(let profile, let scope, let confirmed):
            guard let name = self.profile(profile), case .agent(let agent) = source else { handover.run() }
            // --global asks first on a terminal (unless --yes), and a managed
            // login's opens its logout page in a browser where there is one:
            // cog-cred-cli's to ask and to open.
            if scope == .global && (!confirmed && hasControllingTerminal() || Desktop.mayOpenBrowser(environment)) { handover.run() }
            signOut(name, scope, agent)
        }
    }

    /// This machine's configuration, read on every call, like the tokens:
    /// an edited or removed profile counts at once. One that cannot be read
    /// is handed over (cog-cred-cli says why).
    func configuration(_ handover: Handover) -> ConfigFile {
        let paths = Paths(environment: ["HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"].reduce(into: [:]) { $0[$1] = environment($1) })
        guard let config = try? ConfigStore(path: paths.configFile).load() else { handover.run() }
        return config
    }

    /// The tokens of `kinds` for profile `name`, fresh for `minTTL` seconds
    /// more: the stored ones, or the agent's. When they cannot be answered
    /// here, hands over instead; an agent's failure is said and exited with
    /// (`failing`: as the docker protocol has it, for its helper).
    func tokens(
        _ kinds: [SecretKind], of profileName: String, minTTL: Int64?, idNeeded: Bool, _ config: ConfigFile, _ handover: Handover,
        failing: (AgentFailure) -> Never = { fail($0) }
    ) -> [SecretKind: IssuedToken] {
        switch source {
        case .keyring(let store):
            return stored(kinds, of: profileName, minTTL: minTTL, idNeeded: idNeeded, store, config, handover)
        case .agent(let agent):
            // A forwarded machine has no configuration: the agent's
            // profile decides, and answers a machine's pair with its
            // access token alone; `--id-token` of one is cog-cred-cli's to refuse.
            let tokens = ask(agent, AgentRequest.Tokens(profile: profileName, kinds: kinds, minTTL: minTTL), failing: failing)
            guard let first = kinds.first, tokens[kinds.count > 1 ? .access : first] != nil else {
                failing(.broken(agent.path, "did not send the tokens asked for"))
            }
            if idNeeded && tokens[.id] == nil { handover.run() }
            return tokens
        }
    }

    /// The tokens the agent answers `asked` with: none for a git target or
    /// registry no profile of its answers. Its notes (a warning) go to
    /// stderr as they come.
    func ask(_ agent: AgentConnection, _ asked: AgentRequest.Tokens, failing: (AgentFailure) -> Never) -> [SecretKind: IssuedToken] {
        let answer: TokensAnswer = ask(agent, .tokens(asked), failing: failing)
        return answer.tokens
    }

    /// The stored tokens of `kinds` for profile `name`, fresh for `minTTL`
    /// seconds more; when they cannot be answered from what is stored, hands
    /// over instead (and never returns).
    func stored(
        _ kinds: [SecretKind], of profileName: String, minTTL: Int64?, idNeeded: Bool, _ store: SecretServiceStore, _ config: ConfigFile,
        _ handover: Handover
    ) -> [SecretKind: IssuedToken] {
        guard let profile = config.profiles[profileName] else { handover.run() }
        // A machine (client credentials) has no ID token: `exec` and the env
        // format go without it; asking for it is cog-cred-cli's to refuse.
        let kinds = kinds.filter { profile.handedOutKinds.contains($0) }
        if kinds.isEmpty || (idNeeded && !kinds.contains(.id)) { handover.run() }
        var policy = RefreshPolicy()
        policy.minTTL = minTTL

        let stored = StoredTokens(profileName: profileName, profile: profile, store: store)
        let read = { () -> Handover.Found in
            do throws(StoredTokensError) {
                guard let tokens = try stored.usable(kinds, policy: policy) else { return .refreshDue }
                return .tokens(tokens)
            } catch {
                return .failed
            }
        }
        let lockFile = handover.lockFile(profileName)
        // Another process holds the profile's lock: in a burst of callers on
        // an expired token, the one refresh they all need. Wait for it a
        // moment (it takes tens of milliseconds) rather than read tokens
        // about to change, so that the burst's reads stay off the keyring
        // daemon while the refresh needs it. Never longer: a holder that
        // keeps the lock (a cog-cred-cli stopped with Ctrl-Z, a container
        // sharing the home) must not hold up a token that is still fresh.
        if ProfileLockFile.isHeld(lockFile) {
            _ = ProfileLockFile.waitUntilFree(lockFile, waitingAtMost: Self.heldLockGrace)
        }
        switch read() {
        case .tokens(let tokens): return tokens
        case .failed: handover.run()  // locked, no keyring, another pool: cog-cred-cli says which
        case .refreshDue: break
        }
        // A token needs a refresh: wait for the one another process may be
        // making, or hand over holding the profile's lock.
        return handover.afterRefresh(of: profileName, lockFile: lockFile, waitingAtMost: profile.refreshWait, read)
    }

    /// The git and docker protocols' store: the stored tokens, and
    /// `input`, the request already read.
    func helper(_ config: ConfigFile, _ handover: Handover, named: String? = nil, input: [UInt8] = []) -> StoredHelperTokens {
        StoredHelperTokens(front: self, file: config, named: named, request: input, handover: handover)
    }

    /// The shape to answer in, kubectl's apiVersion read now, and the kinds
    /// it needs; nil when KUBERNETES_EXEC_INFO cannot be read (cog-cred-cli
    /// says what is wrong with it).
    func resolved(_ token: ReadRequest.TokenRequest) -> (ReadRequest.TokenRequest.Shape, [SecretKind])? {
        var shape = token.shape
        if shape == .execCredential(nil) {
            guard case .success(let info) = KubernetesExecInfo.parse(environment(KubernetesExecInfo.variable)) else { return nil }
            shape = .execCredential(info.apiVersion)
        }
        let kinds = if case .token(let format) = shape { TokenOutput.kinds(format, choice: token.choice) } else { [token.choice.kind] }
        return (shape, kinds)
    }

    /// The longest a read waits on a held lock before it reads anyway.
    static let heldLockGrace = 1.0

    func render(_ shape: ReadRequest.TokenRequest.Shape, _ choice: TokenChoice, _ tokens: [SecretKind: IssuedToken]) -> String {
        switch shape {
        case .token(let format):
            return TokenOutput.render(format, choice: choice, tokens: tokens)
        case .header:
            return TokenOutput.header(tokens[choice.kind]!)
        case .execCredential(let apiVersion):
            return TokenOutput.execCredential(tokens[choice.kind]!, apiVersion: apiVersion ?? .v1)
        }
    }

    /// Replaces this process with `command`, the tokens in its environment.
    func execute(_ command: [String], access: IssuedToken, id: IssuedToken?, authorizing choice: TokenChoice) -> Never {
        SecretServiceStore.disconnect()
        let failure = ProcessReplacement.exec(command, setting: TokenOutput.execVariables(access: access, id: id, authorizing: choice))
        writeAll(2, "cog-cred: error: cannot run \(command[0]): \(failure.reason)\n")
        _exit(failure.exitStatus)
    }

    /// The profile in effect: the flag, then COG_CRED_PROFILE, then
    /// "default"; nil for an invalid COG_CRED_PROFILE (cog-cred-cli says why).
    func profile(_ flag: String?) -> String? {
        try? ProfileValidation.selectedName(flag: flag, environment: environment)
    }

    /// An agent's failure (or one in reaching it), said on stderr, and its exit status.
    static func fail(_ failure: AgentFailure) -> Never {
        writeAll(2, "cog-cred: error: \(failure.message.printable)\n")
        _exit(ExitStatus.code(for: failure.category))
    }

    /// The docker helper protocol's failure: the message on stdout, exit 1
    /// (docker, skopeo and docker-py read it there).
    func failDocker(_ message: String) -> Never {
        writeOutputOrExit(message.printable + "\n")
        _exit(1)
    }

    /// Writes the answer and exits (74 when it could not all be written).
    func finish(_ output: String) -> Never {
        SecretServiceStore.disconnect()
        writeOutputOrExit(output)
        _exit(0)
    }
}

/// The tokens as the git and docker helper protocols ask for them: the
/// stored ones (the profile found in the configuration here), or the
/// agent's (the profile found in its own). git's actions and docker's `get`
/// and `list` come here; whatever cannot be answered here (malformed
/// input, no profile for a registry, a token to refresh, a token to forget
/// from the keyring) is handed over to cog-cred-cli, so nothing fails here
/// but an agent's failure, which is said as each protocol wants. Through an
/// agent, git's `erase` forgets the refused token here: the next `get` refreshes.
struct StoredHelperTokens: GitCredentialStore, DockerCredentialStore {
    typealias Failure = Never
    let front: Front
    let file: ConfigFile
    /// --profile, when given (git only).
    let named: String?
    let request: [UInt8]
    let handover: Handover

    func input() -> [UInt8] { request }
    func input(limit: Int) -> [UInt8] { request }
    func malformed(_ error: GitCredential.ParseError) -> Never { handover.run() }
    func refused(_ refusal: DockerCredential.Refusal) -> Never { handover.run() }
    func decline(_ refusal: GitCredential.Refusal) { writeAll(2, refusal.message + "\n") }

    func token(for request: GitCredential.Request) -> GitCredential.Lookup {
        guard case .agent(let agent) = front.source else {
            return GitCredential.lookup(request, named: named, in: file) { accessToken(profile: $0) }
        }
        // The agent sees the target only (protocol, host, path): a value it
        // cannot see, or a request for the profile named here, is checked
        // here; the rest, by the profile the agent finds (it says why in a
        // note), there.
        if let refusal = GitCredential.refusal(of: request), named != nil || refusal.isInAValue { return .declined(refusal) }
        guard let target = request.target else { return .none }
        let git = AgentRequest.GitTarget(scheme: target.scheme, host: target.host, path: target.path)
        let tokens = front.ask(agent, AgentRequest.Tokens(profile: named, git: git, kinds: [.access]), failing: { Front.fail($0) })
        return tokens[.access].map { .token($0) } ?? .none
    }

    func token(forServerURL serverURL: String) -> IssuedToken? {
        guard case .agent(let agent) = front.source else { return profile(forServerURL: serverURL).map { accessToken(profile: $0) } }
        let asked = AgentRequest.Tokens(registry: DockerCredential.registryHost(serverURL), kinds: [.access])
        return front.ask(agent, asked, failing: { front.failDocker("cog-cred: \($0.message)") })[.access]
    }

    // No profile for this host: git asks its next helper.
    func profile(for request: GitCredential.Request) -> String? { GitCredential.profile(for: request, named: named, in: file) }
    func profile(forServerURL serverURL: String) -> String? { file.profile(forRegistry: DockerCredential.registryHost(serverURL)) }

    func accessToken(profile: String) -> IssuedToken {
        front.tokens([.access], of: profile, minTTL: nil, idNeeded: false, file, handover)[.access]!
    }

    func forgetAccessToken(profile: String, onlyIf isIt: @escaping (String) -> Bool) {
        guard case .agent(let agent) = front.source else { handover.run() }
        let stored: ItemsAnswer = front.ask(agent, .read(profile: profile, kinds: [.access], binding: nil))
        guard case .found(let token)? = stored.items[.access], isIt(token) else { return }
        let _: DeletedAnswer = front.ask(agent, .delete(profile: profile, kind: .access))
    }

    // Not read-only: cog-cred-cli's.
    func forgetAccessToken(profile: String) { handover.run() }
    func version() -> String { handover.run() }
    func config() -> ConfigFile { file }
}
