import CLinux
#if canImport(CogCredRead)  // not in the Embedded build, which compiles the library in
import CogCredRead
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Running cog-cred-cli in place of this process, with the same arguments.
struct Handover {
    let arguments: [String]
    /// Standard input this process has already read, given to cog-cred-cli
    /// in its place.
    var input: [UInt8]? = nil

    /// What a read of the stored tokens found.
    enum Found {
        case tokens([SecretKind: IssuedToken])
        /// Missing, expired or too close to expiry: a refresh (or a
        /// sign-in: the refresh finds out) is due.
        case refreshDue
        /// The Secret Service could not answer, or the tokens are another
        /// pool's: cog-cred-cli says which.
        case failed
    }

    /// The profile's lock file, opened; hands over when it cannot be
    /// (cog-cred-cli says why).
    func lockFile(_ profile: String) -> Int32 {
        let directory = ProfileLockFile.directory { getenv($0).map { String(cString: $0) } }
        guard case .success(let fd) = ProfileLockFile.open(directory: directory, profile: profile) else { run() }
        return fd
    }

    /// Waits for a refresh of `profile`: when another process is making
    /// one, waits (cheaply, on a shared lock, at most `wait` seconds) for it
    /// to end and returns what `read` then finds. Otherwise takes the
    /// profile's lock and hands over holding it, so that cog-cred-cli
    /// refreshes once for every caller waiting here. Returns only with tokens.
    func afterRefresh(of profile: String, lockFile fd: Int32, waitingAtMost wait: Double, _ read: () -> Found)
        -> [SecretKind: IssuedToken]
    {
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        while true {
            if ProfileLockFile.tryLock(fd) {
                // Someone may have refreshed between our read and the lock.
                switch read() {
                case .tokens(let tokens): return tokens
                case .failed: run()  // the lock goes with the descriptor, closed on exec
                case .refreshDue:
                    // Handed over with what was found under it: cog-cred-cli
                    // refreshes without reading the tokens again.
                    ProfileLockFile.handOver(fd, profile: profile)
                    run()
                }
            }
            // Another process holds the lock: wait for it to let go, then
            // read again. If its refresh failed, go round for the lock: the
            // full path then says what is wrong.
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let waited = Double(now.tv_sec - start.tv_sec) + Double(now.tv_nsec - start.tv_nsec) / 1e9
            guard errno == EWOULDBLOCK, waited < wait, ProfileLockFile.waitUntilFree(fd, waitingAtMost: wait - waited)
            else { run() }
            switch read() {
            case .tokens(let tokens): return tokens
            case .failed: run()
            case .refreshDue: continue
            }
        }
    }

    func run() -> Never {
        SecretServiceStore.disconnect()
        guard let cli = Self.cliPath() else {
            // Which file is missing, and what it is for: a machine may have
            // been given this binary alone (docs/headless.md).
            let command = ReadRequest.commandWords(arguments).first.map { "'\($0.printable)'" } ?? "'cog-cred' without a command"
            let directory = Self.directory() ?? "."
            writeAll(
                2,
                "cog-cred: error: \(command) needs cog-cred-cli, which is neither at \(directory)/cog-cred-cli nor at \(directory)/../lib/cog-cred/cog-cred-cli: this cog-cred answers the reads alone (and whoami, status, refresh and sign-out through an agent), cog-cred-cli every other command, help and --debug; install the whole cog-cred package\n"
            )
            _exit(1)
        }
        if let input {
            let fd = input.withUnsafeBytes { clinux_memory_file($0.baseAddress, $0.count) }
            guard fd >= 0, dup2(fd, 0) == 0 else {
                writeAll(2, "cog-cred: error: cannot pass standard input on to cog-cred-cli: \(String(cString: strerror(errno)))\n")
                _exit(1)
            }
            close(fd)
        }
        // argv[0] stays as it was: cog-cred-cli acts on the name it was run by
        // (git-credential-cog-cred, docker-credential-cog-cred).
        let argv = arguments.map { strdup($0) } + [nil]
        execv(cli, argv)
        writeAll(2, "cog-cred: error: cannot run \(cli): \(String(cString: strerror(errno)))\n")
        _exit(1)
    }

    /// cog-cred-cli beside this binary (a build folder), else in
    /// ../lib/cog-cred (an installation). It runs as the caller with the
    /// caller's tokens, so one that another user could have written or
    /// swapped (a copy in a shared or group-writable directory) is refused.
    static func cliPath() -> String? {
        guard let directory = directory() else { return nil }
        for candidate in [directory + "/cog-cred-cli", directory + "/../lib/cog-cred/cog-cred-cli"]
        where access(candidate, X_OK) == 0 {
            switch trustedProgram(candidate) {
            case .success(let path): return path
            case .failure(let problem):
                writeAll(2, "cog-cred: error: will not run \(candidate): \(problem.reason)\n")
                _exit(1)
            }
        }
        return nil
    }

    /// The directory this program is in.
    static func directory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let exe = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(exe[..<(exe.lastIndex(of: "/") ?? exe.startIndex)])
    }
}
