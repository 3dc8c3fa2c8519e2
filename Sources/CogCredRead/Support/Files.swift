#if canImport(Glibc)
import Glibc
#endif

// File-system helpers of the read side: the config file reads with them,
// and the lock and state files make and check their directories with them.

/// An errno value from a failed system call.
public struct Errno: Error {
    public let code: Int32
}

/// Reads what is left of an open file, up to 1 MiB: a config file is
/// small, and something huge is a mistake.
func readAll(_ fd: Int32) -> Result<[UInt8], Errno> {
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16384)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            return .failure(Errno(code: errno))
        }
        if n == 0 { break }
        data.append(contentsOf: buffer[0..<n])
        if data.count > 1 << 20 { return .failure(Errno(code: EFBIG)) }
    }
    return .success(data)
}

/// The canonical absolute path (symbolic links resolved), or nil.
func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// `mkdir -p` with the given mode for the directories it creates. Returns a
/// reason on failure.
public func makeDirectories(_ path: String, mode: mode_t) -> String? {
    var current = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/") {
        current += "/" + component
        if mkdir(current, mode) != 0 && errno != EEXIST {
            return "cannot create \(current): \(String(cString: strerror(errno)))"
        }
    }
    return nil
}

/// Why a directory could let another user swap what it holds.
public enum UnsafeDirectory: Equatable {
    case otherOwner(String)
    case writableByOthers(String)

    public var directory: String {
        switch self {
        case .otherOwner(let directory), .writableByOthers(let directory): return directory
        }
    }

    /// "the directory D that holds `what` ...", with the fix where there is one.
    public func reason(holding what: String) -> String {
        switch self {
        case .otherOwner(let directory):
            return "the directory \(directory) that holds \(what) belongs to another user"
        case .writableByOthers(let directory):
            return "the directory \(directory) that holds \(what) can be written by others; run: chmod go-w \(directory)"
        }
    }
}

/// The directories from `directory` up, as ssh's StrictModes checks them:
/// each must belong to this user or root and be writable by no one else,
/// up to and including the home directory (or up to / outside it). A
/// root-owned sticky directory such as /tmp is fine: others can add to it
/// but not replace what is ours. The first that fails, or nil (also for a
/// path that does not exist: opening what it holds then fails).
public func unsafeDirectory(from directory: String) -> UnsafeDirectory? {
    guard var directory = realPath(directory.isEmpty ? "." : directory) else { return nil }
    let uid = getuid()
    let home = getpwuid(uid).flatMap { $0.pointee.pw_dir }.flatMap { realPath(String(cString: $0)) }
    while true {
        var info = stat()
        guard stat(directory, &info) == 0 else { return nil }
        let rootSticky = info.st_uid == 0 && info.st_mode & mode_t(S_ISVTX) != 0
        if info.st_uid != uid && info.st_uid != 0 { return .otherOwner(directory) }
        if info.st_mode & 0o022 != 0 && !rootSticky { return .writableByOthers(directory) }
        if directory == home || directory == "/" { return nil }
        directory = String(directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)])
        if directory.isEmpty { directory = "/" }
    }
}

/// The file `path` names (links followed, as the build's own links are),
/// when only this user or root could have put it there: the file is theirs
/// and writable by no one else, and so is every directory above it
/// (`unsafeDirectory`). Else why not: a program that another user could
/// have written or swapped must not run as this one.
public func trustedProgram(_ path: String) -> Result<String, FileProblem> {
    guard let resolved = realPath(path) else { return .failure(FileProblem(String(cString: strerror(errno)))) }
    var info = stat()
    guard stat(resolved, &info) == 0 else { return .failure(FileProblem(String(cString: strerror(errno)))) }
    if info.st_uid != getuid() && info.st_uid != 0 { return .failure(FileProblem("\(resolved) belongs to another user")) }
    if info.st_mode & 0o022 != 0 { return .failure(FileProblem("\(resolved) can be written by others")) }
    let directory = String(resolved[..<(resolved.lastIndex(of: "/") ?? resolved.startIndex)])
    if let unsafe = unsafeDirectory(from: directory.isEmpty ? "/" : directory) {
        return .failure(FileProblem(unsafe.reason(holding: "it")))
    }
    return .success(resolved)
}

/// What is wrong with a file, in words.
public struct FileProblem: Error {
    public let reason: String

    public init(_ reason: String) { self.reason = reason }
}
