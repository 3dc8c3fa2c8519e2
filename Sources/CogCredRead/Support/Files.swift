import CLinux

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
    /// The directory at that path is not the one opened: it was swapped
    /// between the open and the check.
    case notTheOneOpened(String)

    public var directory: String {
        switch self {
        case .otherOwner(let directory), .writableByOthers(let directory), .notTheOneOpened(let directory): return directory
        }
    }

    /// "the directory D that holds `what` ...", with the fix where there is one.
    public func reason(holding what: String) -> String {
        switch self {
        case .otherOwner(let directory):
            return "the directory \(directory) that holds \(what) belongs to another user"
        case .writableByOthers(let directory):
            return "the directory \(directory) that holds \(what) can be written by others; run: chmod go-w \(directory)"
        case .notTheOneOpened(let directory):
            return "the directory \(directory) that holds \(what) was replaced while it was being checked"
        }
    }
}

/// The directories from `directory` up, as ssh's StrictModes checks them:
/// each must belong to this user or root and be writable by no one else,
/// up to and including the home directory (or up to / outside it). A
/// root-owned sticky directory such as /tmp is fine: others can add to it
/// but not replace what is ours. The first that fails, or nil (also for a
/// path that does not exist: opening what it holds then fails).
///
/// `opened`: the directory's descriptor, when it was opened before the
/// check (to open what it holds relative to it): the walk's first directory
/// must be that one, by device and inode, or what was checked is not what
/// is used.
public func unsafeDirectory(from directory: String, opened: Int32? = nil) -> UnsafeDirectory? {
    guard var directory = realPath(directory.isEmpty ? "." : directory) else {
        return opened == nil ? nil : .notTheOneOpened(directory)
    }
    let uid = getuid()
    let home = getpwuid(uid).flatMap { $0.pointee.pw_dir }.flatMap { realPath(String(cString: $0)) }
    var first = true
    while true {
        var info = stat()
        guard stat(directory, &info) == 0 else { return opened == nil ? nil : .notTheOneOpened(directory) }
        if first, let opened {
            var openedInfo = stat()
            guard fstat(opened, &openedInfo) == 0, openedInfo.st_dev == info.st_dev, openedInfo.st_ino == info.st_ino else {
                return .notTheOneOpened(directory)
            }
        }
        first = false
        let rootSticky = info.st_uid == 0 && info.st_mode & mode_t(S_ISVTX) != 0
        if info.st_uid != uid && info.st_uid != 0 { return .otherOwner(directory) }
        if info.st_mode & 0o022 != 0 && !rootSticky { return .writableByOthers(directory) }
        if directory == home || directory == "/" { return nil }
        directory = String(directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)])
        if directory.isEmpty { directory = "/" }
    }
}

/// The file `path` names, when only this user or root could have put it
/// there. Every symbolic link met on the way (the build's own, an
/// installation's) must belong to this user or root and sit in a directory
/// that is safe (`unsafeDirectory`): whoever can write the directory that
/// holds a link can point it anywhere, so the link is checked where it is
/// before it is followed. Then the file it comes to: this user's or root's,
/// writable by no one else, and so is every directory above it. Else why
/// not: a program that another user could have written or swapped must
/// not run as this one.
public func trustedProgram(_ path: String) -> Result<String, FileProblem> {
    let resolved: String
    switch followingSafeLinks(path) {
    case .success(let target): resolved = target
    case .failure(let problem): return .failure(problem)
    }
    var info = stat()
    guard stat(resolved, &info) == 0 else { return .failure(FileProblem(String(cString: strerror(errno)))) }
    if info.st_uid != getuid() && info.st_uid != 0 { return .failure(FileProblem("\(resolved) belongs to another user")) }
    if info.st_mode & 0o022 != 0 { return .failure(FileProblem("\(resolved) can be written by others")) }
    if let unsafe = unsafeDirectory(from: parentDirectory(resolved)) {
        return .failure(FileProblem(unsafe.reason(holding: "it")))
    }
    return .success(resolved)
}

/// `path` resolved as realpath(3) does, one component at a time, refusing
/// a symbolic link that belongs to another user or sits in a directory
/// another user could change. The canonical path, or why not.
func followingSafeLinks(_ path: String) -> Result<String, FileProblem> {
    var resolved = "/"
    if !path.hasPrefix("/") {
        guard let here = realPath(".") else { return .failure(FileProblem(String(cString: strerror(errno)))) }
        resolved = here
    }
    var remaining = components(path)
    var links = 0
    while !remaining.isEmpty {
        let component = remaining.removeFirst()
        if component == "." { continue }
        if component == ".." {
            resolved = parentDirectory(resolved)
            continue
        }
        let next = resolved == "/" ? "/" + component : resolved + "/" + component
        var info = stat()
        guard lstat(next, &info) == 0 else { return .failure(FileProblem(String(cString: strerror(errno)))) }
        guard info.st_mode & mode_t(S_IFMT) == mode_t(S_IFLNK) else {
            resolved = next
            continue
        }
        if info.st_uid != getuid() && info.st_uid != 0 {
            return .failure(FileProblem("the link \(next) belongs to another user"))
        }
        if let unsafe = unsafeDirectory(from: resolved) {
            return .failure(FileProblem(unsafe.reason(holding: "the link \(next)")))
        }
        links += 1
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(next, &buffer, buffer.count - 1)
        guard links <= 40, length > 0 else { return .failure(FileProblem(String(cString: strerror(links > 40 ? ELOOP : errno)))) }
        let target = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if target.hasPrefix("/") { resolved = "/" }
        remaining = components(target) + remaining
    }
    return .success(resolved)
}

/// A path's components, split on the byte '/' as the kernel splits them
/// (a Character split would not split a '/' that a combining mark follows).
private func components(_ path: String) -> [String] {
    path.utf8.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
}

/// The directory that holds `path` (canonical, absolute): "/" for "/x" and "/".
func parentDirectory(_ path: String) -> String {
    let parent = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
    return parent.isEmpty ? "/" : parent
}

/// What is wrong with a file, in words.
public struct FileProblem: Error {
    public let reason: String

    public init(_ reason: String) { self.reason = reason }
}

/// Writes a whole file: a new file beside it (the same directory, so the
/// rename cannot cross file systems), flushed, given exactly `mode`, then
/// renamed over `path`, so a crash leaves either the old or the new file and
/// never half of one. Returns what went wrong; the temporary file is removed
/// then, and `path` is as it was. The new file has a random name and is
/// made with O_EXCL: never a file or link someone placed there first.
public func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t) -> FileProblem? {
    var template = Array((path + ".tmp-XXXXXX").utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { clinux_create_exclusive($0.baseAddress!) }
    guard fd >= 0 else { return FileProblem(String(cString: strerror(errno))) }
    let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    let ok = bytes.withUnsafeBytes { raw -> Bool in
        var offset = 0
        while offset < raw.count {
            let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return fsync(fd) == 0
    }
    let writeErrno = errno
    // The mode given to open() is filtered by the umask; make it exact.
    fchmod(fd, mode)
    close(fd)
    guard ok, rename(temporary, path) == 0 else {
        let reason = String(cString: strerror(ok ? errno : writeErrno))
        unlink(temporary)
        return FileProblem(reason)
    }
    return nil
}

/// A file of this user's, opened for appending (the agent's `--log`), made
/// 0600 when new: never through a symbolic link, never another user's file
/// (one placed first in a shared directory such as /tmp), never anything
/// but a regular file (a FIFO would block the writer). Its descriptor, or
/// why not.
public func openOwnFileForAppending(_ path: String) -> Result<Int32, FileProblem> {
    let fd = clinux_open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
    guard fd >= 0 else {
        return .failure(FileProblem(errno == ELOOP ? "it is a symbolic link; name the file itself" : String(cString: strerror(errno))))
    }
    var info = stat()
    let problem: String? =
        if fstat(fd, &info) != 0 { String(cString: strerror(errno)) }
        else if info.st_mode & mode_t(S_IFMT) != mode_t(S_IFREG) { "it is not a regular file" }
        else if info.st_uid != getuid() { "it belongs to uid \(info.st_uid), not to you" }
        else { nil }
    if let problem {
        close(fd)
        return .failure(FileProblem(problem))
    }
    return .success(fd)
}

/// A regular file's bytes (at most 1 MiB, as `readAll`) and permission bits.
public struct FileContents {
    public let bytes: [UInt8]
    public let mode: mode_t
}

/// The file at `path` (symbolic links followed), nil when there is none.
public func readRegularFile(_ path: String) -> Result<FileContents?, FileProblem> {
    // O_NONBLOCK: a FIFO in the file's place must not hang the open.
    let fd = clinux_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0)
    guard fd >= 0 else {
        if errno == ENOENT { return .success(nil) }
        return .failure(FileProblem(String(cString: strerror(errno))))
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { return .failure(FileProblem(String(cString: strerror(errno)))) }
    guard info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else { return .failure(FileProblem("not a regular file")) }
    switch readAll(fd) {
    case .success(let bytes): return .success(FileContents(bytes: bytes, mode: info.st_mode & 0o7777))
    case .failure(let error): return .failure(FileProblem(String(cString: strerror(error.code))))
    }
}
