import CLinux
import CogCredWrite

#if canImport(Glibc)
import Glibc
#endif

/// `cog-cred agent --daemon`: the agent started as a program of its own in a
/// new session, holding none of the caller's descriptors (so that `eval
/// "$(cog-cred agent --daemon)"` returns at once), and its shell lines
/// printed once it listens. A new program rather than a fork: this process
/// already runs threads (libcurl's loading), which a fork would not carry.
enum AgentDaemon {
    static func start(_ agent: Agent) throws -> Never {
        var exe = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &exe, exe.count - 1)
        guard length > 0 else { throw InputError("cannot find this program to start the agent: \(String(cString: strerror(errno)))", category: .other) }
        var ready: [Int32] = [0, 0]
        guard clinux_pipe(&ready) == 0 else { throw InputError("cannot start the agent: \(String(cString: strerror(errno)))", category: .other) }
        var arguments = ["cog-cred", "agent", "--ready-fd", "3"]
        if agent.memory { arguments.append("--memory") }
        if let socket = agent.socket { arguments += ["--socket", Agent.absolute(socket)] }
        if let log = agent.log { arguments += ["--log", Agent.absolute(log)] }
        if let lifetime = agent.lifetime { arguments += ["--lifetime", lifetime.argument] }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ready[1], 3)
        _ = clinux_spawn_close_from(&actions, 4)
        // As ssh-agent: the daemon holds no directory of the caller's (an unmount would wait on it).
        _ = clinux_spawn_chdir(&actions, "/")
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, clinux_spawn_new_session())
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, exe, &actions, &attributes, &argv, environ)
        close(ready[1])
        guard spawned == 0 else { throw InputError("cannot start the agent: \(String(cString: strerror(spawned)))", category: .other) }

        // The agent's first line: its shell line once it listens, or why it could not.
        var reader = LineReader(fd: ready[0], limit: 65536)
        let line = reader.next().map { String(decoding: $0, as: UTF8.self) }
        close(ready[0])
        guard let line, !line.hasPrefix("error ") else {
            let words = line?.split(separator: " ", maxSplits: 2).map(String.init) ?? []
            let code = words.count > 1 ? Int32(words[1]) ?? 1 : 1
            Output.error(words.count > 2 ? words[2] : "the agent stopped before it listened; run it with --log FILE to see why")
            CogCredCommand.finish(code)
        }
        Output.raw(line + "\n" + Agent.shellLine(Agent.pidVariable, String(pid)))
        CogCredCommand.finish(0)
    }
}
