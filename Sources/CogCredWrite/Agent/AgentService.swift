// What `cog-cred agent` answers: each request on its socket, run here as
// the command it stands for would run it, with this machine's configuration
// (read at each request: a CI job starts the agent first and configures
// after), its environment and its store, under the profile's lock. The
// answer carries tokens and facts, never the refresh token, the client
// secret or a device's keys (AgentProtocol.readable).

import Synchronization

#if canImport(Glibc)
import Glibc
#endif

public struct AgentService: Sendable {
    /// This machine's configuration, read now.
    let config: @Sendable () throws -> ConfigFile
    /// The profile's session on this machine; the use case's warnings go to `warn`.
    let manager: @Sendable (_ profile: String, _ warn: @escaping @Sendable (String) -> Void) throws -> TokenManager
    /// The store the sessions are kept in: the Secret Service, or this process's memory.
    let store: any TokenStore
    /// A failure as the command line words it.
    let describe: @Sendable (any Error) -> AgentFailure
    /// What a request may ask of the agent itself.
    let control: AgentControl

    public init(
        config: @escaping @Sendable () throws -> ConfigFile,
        manager: @escaping @Sendable (String, @escaping @Sendable (String) -> Void) throws -> TokenManager,
        store: any TokenStore, describe: @escaping @Sendable (any Error) -> AgentFailure, control: AgentControl = AgentControl(stop: {})
    ) {
        self.config = config
        self.manager = manager
        self.store = store
        self.describe = describe
        self.control = control
    }

    /// The answer's last line to one request line; `note` says what comes before it.
    public func answer(_ line: [UInt8], note: @escaping @Sendable (String) -> Void) -> String {
        switch AgentRequest.read(line) {
        case .failure(let failure): return AgentProtocol.error(failure)
        case .success(let request):
            do {
                return AgentProtocol.ok(try run(request, note: note))
            } catch ConfigError.profileNotFound(let profile, _, let nearest, _) {
                // In the agent's words: its client's machine has no use for a path of this one's.
                return AgentProtocol.error(describe(ConfigError.profileNotInAgent(profile: profile, nearest: nearest)))
            } catch {
                return AgentProtocol.error(describe(error))
            }
        }
    }

    func run(_ request: AgentRequest, note: @escaping @Sendable (String) -> Void) throws -> any AgentAnswer {
        if let name = request.profile, let problem = ProfileValidation.profileNameProblem(name) {
            throw InputError("invalid profile name: \(problem)", category: .usage)
        }
        switch request {
        case .tokens(let asked):
            guard let name = try profile(of: asked, note: note) else { return TokensAnswer(profile: nil, tokens: [:]) }
            let session = try manager(name, note)
            let policy = RefreshPolicy(minTTL: asked.minTTL)
            if asked.kinds.count == 1 {
                let kind = asked.kinds[0]
                let token = try session.currentToken(kind == .id ? .id : .access, policy: policy)
                return TokensAnswer(profile: name, tokens: [kind: token])
            }
            return TokensAnswer(profile: name, tokens: Self.tokens(try session.currentTokens(policy: policy)))
        case .refresh(let name):
            return TokensAnswer(profile: name, tokens: Self.tokens(try manager(name, note).refresh()))
        case .status(let name):
            return StatusAnswer(try manager(name, note).status())
        case .checkSession(let name):
            return CheckAnswer(try manager(name, note).checkSession().outcome { describe($0).message })
        case .signOut(let name, let scope, let forgetDevice):
            return SignOutAnswer(try manager(name, note).signOut(scope, forgettingDevice: forgetDevice))
        case .whoami(let name):
            let session = try manager(name, note)
            return NameAnswer(name: try session.signedInName(), grant: session.profile.effectiveGrant.rawValue)
        case .profile(let name):
            let file = try config()
            guard let profile = file.profiles[name] else { throw file.notFound(name, path: "the agent's configuration") }
            return ProfileAnswer(ConfigFile(profiles: [name: profile]))
        case .profiles:
            let file = try config()
            let statuses = file.profiles.keys.reduce(into: [String: SessionStatus]()) { statuses, name in
                statuses[name] = try? manager(name, note).status()
            }
            return ProfilesAnswer(file, statuses: statuses)
        case .read(let name, let kinds, let binding):
            // Never the refresh token, the client secret or a device's keys.
            let readable = kinds.filter { AgentProtocol.readable.contains($0) }
            return ItemsAnswer(try store.read(readable, profile: name, binding: binding))
        case .write(let name, let kind, let secret, let context):
            try admit(secret, for: name, context: context)
            try store.writePatiently(kind, profile: name, secret: secret, context: context)
            return DoneAnswer()
        case .delete(let name, let kind):
            return DeletedAnswer(existed: try store.delete(kind, profile: name))
        case .secretHash(let name, let username):
            let session = try manager(name, note)
            guard session.profile.clientSecretInKeyring == true,
                let secret = try store.read(.clientSecret, profile: name, binding: session.profile.binding)
            else { throw ConfigError.clientSecretMissing(profile: name) }
            return SecretHashAnswer(hash: SecretHash.compute(username: username, clientID: session.profile.clientID, clientSecret: secret))
        case .stop:
            // Once this answer is sent (AgentWorkers).
            control.stopAsked.withLock { $0 = true }
            return StopAnswer(pid: Int64(getpid()))
        }
    }

    /// The request's profile: named, or the one this machine's
    /// configuration maps a git URL or a registry host to (nil: none does).
    /// A git request's target is held to the git helper's rules
    /// (GitCredential.refusal), with the profile's git URLs as configured
    /// here: nil, and `note` says why, when it may not have a token.
    func profile(of asked: AgentRequest.Tokens, note: (String) -> Void) throws -> String? {
        if let git = asked.git {
            let file = try config()
            let target = GitCredential.Request(
                attributes: [("protocol", git.scheme), ("host", git.host)] + (git.path.map { [("path", $0)] } ?? []))
            guard let name = GitCredential.profile(for: target, named: asked.profile, in: file) else { return nil }
            if let refusal = GitCredential.refusal(of: target, profile: name, patterns: file.profiles[name]?.gitURLs) {
                note(refusal.message)
                return nil
            }
            return name
        }
        if let named = asked.profile { return named }
        return try asked.registry.flatMap { try config().profile(forRegistry: $0) }
    }

    /// What the agent keeps is bounded for whoever reaches its socket: the
    /// items of the profiles this machine configures, for the pool and
    /// client each names (what a refresh here can use), of at most
    /// `AgentProtocol.itemLimit` bytes each. So its memory (with --memory)
    /// or the keyring holds at most a few items a configured profile,
    /// whatever a client sends.
    func admit(_ secret: String, for name: String, context: ItemContext) throws {
        let file = try config()
        guard let profile = file.profiles[name] else {
            throw AgentFailure(
                .configuration,
                "the agent keeps sessions only for the profiles its machine configures, and there is no profile \(name) there: nothing was stored; configure it on the agent's machine (cog-cred configure --profile \(name) ...)")
        }
        guard profile.binding == context.binding else {
            throw AgentFailure(
                .configuration,
                "the agent's profile \(name) names user pool \(profile.userPoolID) and app client \(profile.clientID), not these: nothing was stored; configure the profile alike on both machines")
        }
        guard secret.utf8.count <= AgentProtocol.itemLimit else {
            throw AgentFailure(
                .dataError,
                "the agent keeps items of at most \(AgentProtocol.itemLimit >> 10) KiB, and this one is \(secret.utf8.count) bytes: nothing was stored")
        }
    }

    static func tokens(_ tokens: RefreshedTokens) -> [SecretKind: IssuedToken] {
        var values = [SecretKind.access: tokens.access]
        values[.id] = tokens.id
        return values
    }
}

/// What a request may ask of the agent itself: to stop, once its answer is
/// sent (`cog-cred agent --stop`, as `ssh-agent -k`). Whoever may connect
/// may stop it, as they may sign its sessions out.
public final class AgentControl: Sendable {
    let stopAsked = Mutex(false)
    /// Ends the agent, its socket removed (the executable's SIGTERM).
    let stop: @Sendable () -> Void

    public init(stop: @escaping @Sendable () -> Void) {
        self.stop = stop
    }

    /// Stops the agent if a request asked it to.
    func stopIfAsked() {
        if stopAsked.withLock({ $0 }) { stop() }
    }
}
