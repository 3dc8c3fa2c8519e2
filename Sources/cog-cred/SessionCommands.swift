// `whoami`, `status`, `refresh` and `sign-out` through an agent, answered
// here: the agent does the work (it holds the refresh token and makes the
// calls to Cognito), so a machine it serves needs no cog-cred-cli. Worded
// by the same code as cog-cred-cli's commands (SessionWords, StatusWords).
#if canImport(CogCredRead)  // not in the Embedded build, which compiles the library in
import CogCredRead
#endif

#if canImport(Glibc)
import Glibc
#endif

extension Front {
    func whoami(_ name: String, json: Bool, _ agent: AgentConnection) -> Never {
        let answer: NameAnswer = ask(agent, .whoami(profile: name))
        // A claim is text from the network: one printable line.
        finish((json ? SessionWords.whoamiJSON(profile: name, name: answer.name, grant: answer.grant) : answer.name.oneLine(limit: 200)) + "\n")
    }

    func status(_ name: String, json: Bool, offline: Bool, _ config: ConfigFile, _ agent: AgentConnection) -> Never {
        // As cog-cred-cli: the profile configured here, else the agent's.
        let profile = config.profiles[name] ?? agentsProfile(name, agent)
        let status: StatusAnswer = ask(agent, .status(profile: name))
        var check: CheckOutcome? = nil
        if status.status.signedIn && !offline {
            let answer: CheckAnswer = ask(agent, .checkSession(profile: name))
            check = answer.check
        }
        let words = StatusWords(status.status, profile, check: check, offline: offline, agent: agent.path)
        writeOutputOrExit(json ? JSONValue.object(words.json).compactText + "\n" : words.lines.map { $0 + "\n" }.joined())
        if let failure = words.failure { Front.fail(failure) }
        _exit(words.session.signedIn ? 0 : ExitStatus.code(for: .notAuthenticated))
    }

    func refresh(_ name: String, _ agent: AgentConnection) -> Never {
        let answer: TokensAnswer = ask(agent, .refresh(profile: name))
        let expires = answer.tokens[.access]?.claims.exp
        note(SessionWords.refreshed(profile: name, accessExpiresAt: expires))
        _exit(0)
    }

    func signOut(_ name: String, _ scope: SignOutScope, _ agent: AgentConnection) -> Never {
        let answer: SignOutAnswer = ask(agent, .signOut(profile: name, scope: scope, forgetDevice: false))
        let result = answer.result
        if let url = result.logout { note(SessionWords.logout(url, opened: false)) }
        let store = agent.described
        guard let said = SessionWords.signedOut(profile: name, result, from: store) else {
            Front.fail(AgentFailure(.temporary, SessionWords.revocationFailed(removed: result.removed, from: store, cause: result.failure ?? "")))
        }
        note(said)
        _exit(0)
    }

    /// The profile as the agent's machine configures it.
    func agentsProfile(_ name: String, _ agent: AgentConnection) -> Profile {
        let answer: ProfileAnswer = ask(agent, .profile(name))
        guard let profile = answer.file.profiles[name] else { Front.fail(.broken(agent.path, "sent another profile than the one asked for")) }
        return profile
    }

    /// The agent's answer to `request`; its failure said and exited with.
    /// Its notes (a warning) go to stderr as they come.
    func ask<Answer: AgentAnswer>(_ agent: AgentConnection, _ request: AgentRequest, failing: (AgentFailure) -> Never = { Front.fail($0) }) -> Answer {
        do throws(AgentFailure) {
            return try agent.ask(request) { note($0) }
        } catch {
            failing(error)
        }
    }

    func note(_ text: String) {
        writeAll(2, text.printable + "\n")
    }
}
