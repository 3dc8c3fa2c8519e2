import ArgumentParser
import CLinux
import CogCredWrite

#if canImport(Glibc)
import Glibc
#endif

/// `cog-cred agent`: this machine's sessions served on a UNIX socket, for
/// CI jobs, containers and SSH sessions (COG_CRED_AGENT).
struct Agent: ParsableCommand, HelpExamples {
    static let configuration = CommandConfiguration(
        abstract: "Serve this machine's sessions on a UNIX socket, for CI jobs, containers and SSH sessions.",
        discussion: """
            A process of yours that keeps the sessions and answers every cog-cred command run \
            with COG_CRED_AGENT=PATH: they read, sign in, refresh and sign out through it, and \
            never use the Secret Service or a file instead (69 when the agent cannot be \
            reached). Reads need no D-Bus at all. By default the agent keeps the sessions in \
            the Secret Service, read at each request as without it; with --memory only in its \
            own memory (locked where RLIMIT_MEMLOCK allows, never written anywhere), and they \
            end with the process: sign in again to get them back. The agent reads the profiles' \
            configuration at each request, so configure may come after it starts.

            The refresh token, the client secret and a remembered device's keys never leave the \
            agent: it refreshes with this machine's configuration and environment, and sends \
            access and ID tokens (and the AWS credentials bought with them), the status facts, \
            the profile's settings and a sign-in's SECRET_HASH: nothing that makes new tokens \
            (docs/security.md). A machine its socket is forwarded to \
            (ssh -R, a container's volume) needs no configuration: it names a profile, and the \
            agent answers for it. It keeps sessions only for the profiles this machine \
            configures, and bounds what anyone who reaches its socket can hold: a silent \
            connection costs no thread, and one profile whose endpoint hangs holds up no other.

            Once the socket listens, prints COG_CRED_AGENT=PATH; export COG_CRED_AGENT; on \
            stdout and stays in the foreground (for a systemd user unit, a container's \
            entrypoint, &); its notes go to stderr, or --log FILE. With --daemon it starts in \
            the background, prints those lines and COG_CRED_AGENT_PID=N; export \
            COG_CRED_AGENT_PID; as ssh-agent -s does, and exits 0: eval its output.

            The socket: --socket PATH, else $XDG_RUNTIME_DIR/cog-cred/agent when \
            $XDG_RUNTIME_DIR is your own 0700 directory, else agent in a new 0700 directory \
            under $TMPDIR (else /tmp). It is made 0600; only your processes and root's are \
            answered (SO_PEERCRED, on every connection), and a client talks only to an agent of \
            its own user or root. A path where an agent already answers: 69; a socket left by \
            one that is gone is replaced. SIGTERM, SIGINT and SIGHUP remove the socket and end \
            the agent.

            --lifetime DURATION (seconds, or a number with s, m or h) ends the agent when it runs \
            out: a memory agent's sessions go with it, a keyring agent's stay in the keyring. \
            --stop stops the agent COG_CRED_AGENT names (or --socket, or COG_CRED_AGENT_PID), as \
            ssh-agent -k does: it removes its socket and exits, and unset COG_CRED_AGENT; unset \
            COG_CRED_AGENT_PID; is printed for eval.

            In a CI job: eval "$(cog-cred agent --memory --daemon)", then configure and sign-in. \
            Over SSH: ssh -R /run/user/1000/cog-cred.sock:"$COG_CRED_AGENT" host, and there \
            COG_CRED_AGENT=/run/user/1000/cog-cred.sock cog-cred get-header --profile work \
            (docs/headless.md).
            """)

    static let examples = [
        "cog-cred agent --memory --daemon --lifetime 2h",
        "cog-cred agent --stop",
        "cog-cred agent --socket /run/user/1000/cog-cred/agent",
        "cog-cred agent --daemon --log \"$XDG_RUNTIME_DIR/cog-cred-agent.log\"",
    ]

    @OptionGroup var globals: GlobalOptions

    @Flag(help: "Keep the sessions only in this process's memory, for a machine with no Secret Service.")
    var memory = false

    @Flag(help: "Start in the background and print the shell lines to evaluate (as ssh-agent -s).")
    var daemon = false

    @Option(help: ArgumentHelp("The socket to listen on (default: $XDG_RUNTIME_DIR/cog-cred/agent, else a new directory in $TMPDIR).", valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp(
        "Append the agent's notes to this file of yours, not a link (default: stderr; with --daemon, nowhere), such as $XDG_RUNTIME_DIR/cog-cred-agent.log or ~/.local/state/cog-cred/agent.log.",
        valueName: "file"))
    var log: String?

    @Option(help: ArgumentHelp("End the agent after this long: seconds, or a number with s, m or h (a memory agent's sessions end with it).", valueName: "duration"))
    var lifetime: Lifetime?

    @Flag(help: "Stop the agent COG_CRED_AGENT (or --socket, or COG_CRED_AGENT_PID) names, and print the shell lines that unset them.")
    var stop = false

    /// The descriptor a --daemon parent waits on: the shell line once the
    /// socket listens, or the failure.
    @Option(name: .customLong("ready-fd"), help: .hidden)
    var readyFD: Int32?

    func validate() throws {
        if let socket, socket.isEmpty { throw ValidationError("--socket takes a path") }
        if let log, log.isEmpty { throw ValidationError("--log takes a path") }
        if stop, let other = [(memory, "--memory"), (daemon, "--daemon"), (lifetime != nil, "--lifetime"), (log != nil, "--log")].first(where: \.0) {
            throw ValidationError("--stop stops a running agent: \(other.1) is for starting one")
        }
    }

    func run() throws {
        globals.noteProfileUnused(by: "agent", because: "an agent serves every profile (each request names its own)")
        if stop { return try stopRunningAgent() }
        if daemon { try AgentDaemon.start(self) }
        if let log {
            switch openOwnFileForAppending(log) {
            case .success(let fd):
                dup2(fd, 2)
                close(fd)
            case .failure(let problem):
                throw fail(InputError("cannot use --log \(log.printable): \(problem.reason)", category: .usage))
            }
        }
        // No one is at a terminal for a request on the socket: a locked
        // keyring fails at once, as with --no-prompt.
        let store: any TokenStore = memory ? MemoryTokenStore() : OneAtATimeStore(Wiring(promptingToUnlock: false).keyring)
        Wiring.serving.withLock { $0 = store }
        if memory { lockMemory() }
        let environment = Wiring().environment
        let listening: AgentSocket
        // Absolute: COG_CRED_AGENT is used from other directories.
        switch AgentSocket.listen(at: socket.map(Self.absolute), environment: { environment[$0] }) {
        case .success(let socket): listening = socket
        case .failure(.unusable(let reason)): throw fail(InputError(reason, category: .usage))
        case .failure(.tooLong(let path, let capacity)):
            throw fail(InputError("the socket path \(path) is longer than a socket's \(capacity) bytes; choose a shorter one with --socket", category: .usage))
        case .failure(.taken(let reason)), .failure(.failed(let reason)): throw fail(InputError(reason, category: .secretServiceUnavailable))
        }
        guard clinux_remove_socket_on_signals(listening.path, listening.madeDirectory) == 0 else {
            unlink(listening.path)
            throw fail(InputError("cannot watch for signals: \(String(cString: strerror(errno)))", category: .other))
        }
        let line = Self.shellLine(AgentProtocol.variable, listening.path)
        if let readyFD {
            _ = writeAll(readyFD, line)
            close(readyFD)
        } else {
            Output.raw(line)
        }
        let until = lifetime.map { "; for \($0.described)" } ?? ""
        Output.note("cog-cred agent: listening on \(listening.path) (sessions kept \(memory ? "in memory only" : "in the Secret Service")\(until))")
        // It lives long and reads requests of up to a MiB from whoever reaches its socket.
        clinux_return_freed_memory()
        let bounds = AgentServer.Bounds.standard()
        AgentServer(
            socket: listening, service: Self.service(store), bounds: bounds, lifetime: lifetime.map { Double($0.seconds) },
            log: { Output.note("cog-cred agent: " + $0) }
        ).serve()
    }

    /// `--stop`: the agent stopped, said on stderr, and the shell lines
    /// that forget it on stdout (as `ssh-agent -k`).
    func stopRunningAgent() throws {
        let environment = Wiring().environment
        let named = socket.map(Self.absolute) ?? environment[AgentProtocol.variable].flatMap { $0.isEmpty ? nil : $0 }
        let stopped = try AgentStop.stop(socket: named, pid: environment[Self.pidVariable])
        Output.note("cog-cred agent: stopped the agent \(stopped.socket.map { "at \($0) " } ?? "")(pid \(stopped.pid))")
        Output.raw("unset \(AgentProtocol.variable); unset \(Self.pidVariable);\n")
    }

    /// The variable `--daemon` sets to the agent's pid.
    static let pidVariable = "COG_CRED_AGENT_PID"

    /// Each request as the command it stands for would run, on this machine.
    static func service(_ store: any TokenStore) -> AgentService {
        AgentService(
            config: { try Wiring().profiles.load() },
            manager: { name, warn in try Wiring().tokenManager(named: name, warn: warn) },
            store: store,
            // ErrorWording, not Wiring.describe: asking which keyring
            // program runs sets an environment variable, which no thread
            // may do while others read the environment.
            describe: { error in
                guard let failure = error as? any CogCredFailure else { return AgentFailure(.other, "the agent failed: \(error)") }
                return AgentFailure(failure.category, ErrorWording.line(failure))
            },
            // A request's stop: as SIGTERM, which removes the socket and exits.
            control: AgentControl(stop: { kill(getpid(), SIGTERM) }))
    }

    /// Keeps the sessions out of swap where the limit allows; says so once where it does not.
    func lockMemory() {
        var limit: UInt = 0
        guard clinux_lock_memory(&limit) != 0 else { return }
        let cap = limit == 0 ? "" : " (RLIMIT_MEMLOCK is \(limit / 1024) KiB)"
        Output.note("cog-cred agent: note: memory is not locked\(cap): the sessions could reach swap; start the agent with no limit (ulimit -l unlimited, or LimitMEMLOCK=infinity in its systemd unit) to prevent it")
    }

    /// A failure said to the --daemon parent too, which shows it.
    func fail(_ failure: InputError) -> InputError {
        if let readyFD { _ = writeAll(readyFD, "error \(ExitStatus.code(for: failure.category)) \(failure.message.printable)\n") }
        return failure
    }

    /// `path` from the current directory, when it is relative.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }

    /// `NAME=VALUE; export NAME;`, the value quoted for sh when it needs it.
    static func shellLine(_ name: String, _ value: String) -> String {
        let plain = value.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || "/._-+,:@%".utf8.contains(byte)
        }
        let quoted = plain ? value : "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        return "\(name)=\(quoted); export \(name);\n"
    }
}

/// `--lifetime`'s value: whole seconds, or a number with s, m or h; at
/// most 30 days.
struct Lifetime: ExpressibleByArgument, Equatable {
    let seconds: Int
    /// As given, for the agent's note.
    let argument: String

    init?(argument: String) {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600]
        var number = Substring(argument)
        var unit = 1
        if let last = number.last, let given = units[last] {
            unit = given
            number = number.dropLast()
        }
        guard number.allSatisfy(\.isASCII), let count = Int(number), count > 0, count <= 30 * 86_400 / unit else { return nil }
        seconds = count * unit
        self.argument = argument
    }

    /// "8 s", "15 min", "2 h".
    var described: String {
        seconds % 3600 == 0 ? "\(seconds / 3600) h" : seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s"
    }
}
