#if canImport(Glibc)
import Glibc
#endif

/// Stopping a running agent (`cog-cred agent --stop`, as `ssh-agent -k`):
/// the one a socket names is asked on it, and removes the socket as it
/// exits (AgentControl); without a socket, the one a pid names, only when
/// that process is a cog-cred agent of this user's, by SIGTERM (which
/// removes its socket too). A pid alone is never enough to kill anything
/// else.
public enum AgentStop {
    public struct Stopped: Sendable, Equatable {
        public let pid: Int64
        /// The socket it listened on, when it was reached there.
        public let socket: String?
    }

    /// Stops the agent at `socket`, else the one `pid` names (the text of
    /// COG_CRED_AGENT_PID).
    public static func stop(socket: String?, pid: String?) throws -> Stopped {
        if let socket {
            let stopped = try AgentClient(AgentConnection(path: socket), warn: { _ in }).stop()
            // The agent removes its socket as it exits: wait for it, briefly.
            _ = waiting(seconds: 5) { access(socket, F_OK) != 0 }
            return Stopped(pid: stopped, socket: socket)
        }
        guard let pid, let number = Int32(pid), number > 0 else {
            throw InputError("no agent to stop: neither --socket nor COG_CRED_AGENT names one", category: .usage)
        }
        guard isOwnAgent(number) else {
            throw InputError(
                "process \(number) (COG_CRED_AGENT_PID) is not a cog-cred agent of yours: nothing was stopped", category: .secretServiceUnavailable)
        }
        kill(number, SIGTERM)
        _ = waiting(seconds: 5) { !isOwnAgent(number) }
        return Stopped(pid: Int64(number), socket: nil)
    }

    /// The process runs as this user and is `cog-cred agent` (its command
    /// line, since an agent's /proc/PID/exe is not readable: it is not
    /// dumpable).
    static func isOwnAgent(_ pid: Int32) -> Bool {
        guard case .success(let status?) = readRegularFile("/proc/\(pid)/status"),
            case .success(let cmdline?) = readRegularFile("/proc/\(pid)/cmdline")
        else { return false }
        let uid = String(decoding: status.bytes, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("Uid:") }?.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first
        let words = cmdline.bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        let name = words.first?.split(separator: "/").last.map(String.init)
        return uid == "\(getuid())" && (name == "cog-cred" || name == "cog-cred-cli") && words.dropFirst().first == "agent"
    }

    /// Whether `done` came true within `seconds`, asked every 10 ms.
    static func waiting(seconds: Double, until done: () -> Bool) -> Bool {
        let deadline = Deadline(secondsFromNow: seconds)
        while !done() {
            guard deadline.remaining > 0 else { return false }
            sleep(seconds: 0.01)
        }
        return true
    }
}
