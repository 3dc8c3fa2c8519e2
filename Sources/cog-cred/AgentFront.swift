#if canImport(CogCredRead)  // not in the Embedded build, which compiles the library in
import CogCredRead
#endif

#if canImport(Glibc)
import Glibc
#endif

// With COG_CRED_AGENT set, the agent is the store: a read is one request on
// its socket, and no D-Bus at all. The profile is named here (the flag,
// COG_CRED_PROFILE, "default") or, for git and docker without --profile,
// found by the agent in its own configuration: a machine the socket is
// forwarded to needs none. Whatever the agent answers is the answer: its
// failure is said and exited with here, never retried on the keyring.
extension Front {
    func answer(through agent: AgentConnection, _ handover: Handover) -> Never {
        var handover = handover
        var fields: [String: JSONValue] = [:]
        let kinds: [SecretKind]
        var minTTL: Int64? = nil
        var docker = false
        // `--id-token`: without an ID token (a machine's) cog-cred-cli refuses.
        var idNeeded = false
        let respond: ([SecretKind: IssuedToken]) -> Never
        var noProfile: () -> Never = { handover.run() }
        switch request {
        case .dockerList, .awsCredentials:
            handover.run()  // cog-cred-cli's, through the agent too
        case .token(let token):
            guard let name = profile(token.profile), let (shape, needed) = resolved(token) else { handover.run() }
            (kinds, fields["profile"], minTTL, idNeeded) = (needed, .string(name), token.minTTL, token.choice == .id)
            respond = { tokens in finish(render(shape, token.choice, tokens) + "\n") }
        case .exec(let profile, let ttl, let choice, let command):
            guard let name = self.profile(profile) else { handover.run() }
            (kinds, fields["profile"], minTTL, idNeeded) = ([.access, .id], .string(name), ttl, choice == .id)
            respond = { tokens in execute(command, access: tokens[.access]!, id: tokens[.id], authorizing: choice) }
        case .gitGet(let profile):
            guard let input = try? StandardInput.readRequest() else { handover.run() }
            handover.input = input
            guard let git = try? GitCredential.parse(input) else { handover.run() }
            // No profile for this host, or one whose git URLs leave it out
            // (the agent says why in a note): git asks its next helper.
            noProfile = { finish("") }
            // The agent sees the target only (protocol, host, path): a value
            // it cannot see, or a request for the profile named here, is
            // checked here; the rest, by the profile the agent finds, there.
            if let refusal = GitCredential.refusal(of: git), profile != nil || refusal.isInAValue {
                writeAll(2, refusal.message + "\n")
                noProfile()
            }
            if let target = git.target {
                var members: [String: JSONValue] = ["protocol": .string(target.scheme), "host": .string(target.host)]
                if let path = target.path { members["path"] = .string(path) }
                fields["git"] = .object(members)
            }
            if let profile {
                fields["profile"] = .string(profile)
            } else if fields["git"] == nil {
                noProfile()
            }
            kinds = [.access]
            respond = { tokens in finish(GitCredential.answer(git, token: tokens[.access]!)) }
        case .dockerGet:
            guard let input = try? StandardInput.readAll(limit: 65536) else { handover.run() }
            handover.input = input
            let serverURL = DockerCredential.serverURL(input)
            (fields["registry"], kinds, docker) = (.string(DockerCredential.registryHost(serverURL)), [.access], true)
            noProfile = { failDocker(DockerCredential.notFound) }
            respond = { tokens in finish(DockerCredential.answer(serverURL: serverURL, token: tokens[.access]!) + "\n") }
        }
        fields["kinds"] = .array(kinds.map { .string($0.rawValue) })
        if let minTTL { fields["min-ttl"] = .int(minTTL) }
        let answer: [String: JSONValue]
        do {
            answer = try agent.ask(.tokens, fields) { writeAll(2, $0.printable + "\n") }
        } catch {
            // docker, skopeo and docker-py read a helper's failure from stdout, with status 1.
            if docker { failDocker("cog-cred: \(error.message)") }
            writeAll(2, "cog-cred: error: \(error.message.printable)\n")
            _exit(ExitStatus.code(for: error.category))
        }
        guard let values = answer["tokens"]?.objectValue else { noProfile() }
        var tokens: [SecretKind: IssuedToken] = [:]
        for (key, value) in values {
            guard let kind = SecretKind(rawValue: key), let text = value.stringValue, let token = IssuedToken(text) else {
                writeAll(2, "cog-cred: error: the agent at \(agent.path) sent a token that cannot be read\n")
                _exit(ExitStatus.protocolError)
            }
            tokens[kind] = token
        }
        // Both kinds for a machine profile come back as the access token
        // alone: it has no ID token, and the formats go without it.
        guard let first = kinds.first, tokens[kinds.count > 1 ? .access : first] != nil else {
            writeAll(2, "cog-cred: error: the agent at \(agent.path) did not send the tokens asked for\n")
            _exit(ExitStatus.protocolError)
        }
        if idNeeded && tokens[.id] == nil { handover.run() }
        respond(tokens)
    }

    func failDocker(_ message: String) -> Never {
        writeOutputOrExit(message.printable + "\n")
        _exit(1)
    }
}
