#if canImport(Glibc)
import Glibc
#endif

// File-system helpers of the read side: the config file reads with them,
// and the lock and state files make their directories with them.

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
