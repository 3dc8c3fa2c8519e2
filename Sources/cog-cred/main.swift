// cog-cred: the command users run.
//
// `token`, `token --id-token` and `get-header` run before every API call a
// script makes, so they are answered here, from the kernel-keyring cache of
// fresh tokens, without loading glib, libcurl, OpenSSL and their
// dependencies (whose loading alone costs more than a Secret Service lookup).
// Everything else, including a cache miss, runs cog-cred-cli with the same
// arguments, which gives the same answer the slow way.
import CLinux
import CogCredCache

#if canImport(Glibc)
import Glibc
#endif

_ = clinux_forbid_core_dumps()

func environment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

/// The config directory, exactly as cog-cred-cli finds it (XDG base directory spec).
func configDirectory() -> String {
    if let xdg = environment("XDG_CONFIG_HOME"), xdg.hasPrefix("/") { return xdg + "/cog-cred" }
    var home = environment("HOME") ?? ""
    if home.isEmpty, let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir { home = String(cString: dir) }
    return (home.isEmpty ? "/" : home) + "/.config/cog-cred"
}

/// A `token` or `get-header` call the cache may answer.
struct FastRequest {
    var command: String
    var profile: String
    var idToken: Bool
    var cache: KeyringTokenCache

    /// The cached answer, if the cached token is fresh.
    func answer() -> String? {
        guard let token = cache.read(idToken ? "id" : "access", profile: profile),
            Freshness.isUsable(exp: token.exp, iat: token.iat, minTTL: nil, now: Int64(time(nil)))
        else { return nil }
        return command == "get-header" ? "Authorization: Bearer \(token.value)" : token.value
    }
}

/// The request, or nil to take the full path at once.
func fastRequest(_ arguments: ArraySlice<String>) -> FastRequest? {
    var rest = arguments
    guard let command = rest.popFirst(), command == "token" || command == "get-header" else { return nil }
    var profile: String? = nil
    var idToken = false
    while let argument = rest.popFirst() {
        if argument == "--profile", let value = rest.popFirst() {
            profile = value
        } else if argument.hasPrefix("--profile=") {
            profile = String(argument.dropFirst("--profile=".count))
        } else if argument == "--id-token" && command == "token" {
            idToken = true
        } else {
            return nil
        }
    }
    let name = profile ?? environment("COG_CRED_PROFILE").flatMap { $0.isEmpty ? nil : $0 } ?? "default"
    let safeName = !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { b in
        (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == 45 || b == 46 || b == 95
    }
    guard safeName else { return nil }

    // A config that is gone, or that another user owns or can write, goes
    // down the full path, which says what is wrong.
    let directory = configDirectory()
    for path in [directory + "/config.json", directory] {
        var info = stat()
        guard stat(path, &info) == 0, info.st_uid == getuid(), info.st_mode & 0o022 == 0 else { return nil }
    }

    let cache = KeyringTokenCache(configDirectory: directory, busAddress: environment("DBUS_SESSION_BUS_ADDRESS") ?? "")
    return FastRequest(command: command, profile: name, idToken: idToken, cache: cache)
}

/// cog-cred-cli beside this binary (a build folder), else in ../lib/cog-cred (an installation).
func cliPath() -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard length > 0 else { return nil }
    let exe = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let directory = String(exe[..<(exe.lastIndex(of: "/") ?? exe.startIndex)])
    for candidate in [directory + "/cog-cred-cli", directory + "/../lib/cog-cred/cog-cred-cli"]
    where access(candidate, X_OK) == 0 {
        return candidate
    }
    return nil
}

let arguments = CommandLine.arguments
if let request = fastRequest(arguments.dropFirst()) {
    if let answer = request.answer() {
        writeAll(1, answer + "\n")
        exit(0)
    }
    // A miss: the token needs a refresh. Whoever takes the profile's
    // refresh lock first and still misses hands it to cog-cred-cli, which
    // refreshes holding it. Callers arriving meanwhile wait here, cheaply,
    // for that refresh to end and answer from the cache it fills, instead of
    // each loading the full command line.
    let directory = ProfileLockFile.directory(runtimeDirectory: environment("XDG_RUNTIME_DIR"))
    if case .success(let fd) = ProfileLockFile.open(directory: directory, profile: request.profile) {
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        while true {
            let taken = flock(fd, LOCK_EX | LOCK_NB) == 0
            let busy = !taken && errno == EWOULDBLOCK
            if taken {
                if let answer = request.answer() {
                    writeAll(1, answer + "\n")
                    exit(0)
                }
                _ = fcntl(fd, F_SETFD, 0)  // survive the exec below
                setenv(ProfileLockFile.heldLockVariable, "\(request.profile):\(fd)", 1)
                break
            }
            // Someone else is refreshing. If that refresh failed, the cache
            // still misses and the loop goes round for the lock: the
            // full path then says what is wrong.
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let waited = Double(now.tv_sec - start.tv_sec) + Double(now.tv_nsec - start.tv_nsec) / 1e9
            guard busy, waited < 30,
                ProfileLockFile.waitUntilFree(fd, waitingAtMost: 30 - waited)
            else { break }
            if let answer = request.answer() {
                writeAll(1, answer + "\n")
                exit(0)
            }
        }
    }
}
guard let cli = cliPath() else {
    writeAll(2, "cog-cred: error: cannot find cog-cred-cli next to this program or in ../lib/cog-cred; reinstall cog-cred\n")
    exit(1)
}
// argv[0] stays as it was: cog-cred-cli acts on the name it was run by
// (git-credential-cog-cred, docker-credential-cog-cred).
let argv = arguments.map { strdup($0) } + [nil]
execv(cli, argv)
writeAll(2, "cog-cred: error: cannot run \(cli): \(String(cString: strerror(errno)))\n")
exit(1)
