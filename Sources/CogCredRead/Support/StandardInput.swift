#if canImport(Glibc)
import Glibc
#endif

/// Protocol input read straight from file descriptor 0, with a bound, so a
/// runaway writer cannot make a credential helper eat memory.
public enum StandardInput {
    /// Everything up to end of input.
    public static func readAll(limit: Int) throws(InputError) -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return data }
            data.append(contentsOf: buffer[0..<n])
            if data.count > limit { throw InputError("standard input is larger than \(limit) bytes") }
        }
    }

    /// A git credential request: up to a blank line or end of input. Reads
    /// byte by byte so nothing after the blank line is consumed.
    public static func readRequest(limit: Int = 1 << 20) throws(InputError) -> [UInt8] {
        var data: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = read(0, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return data }
            data.append(byte)
            if byte == UInt8(ascii: "\n") && (data.count == 1 || data[data.count - 2] == UInt8(ascii: "\n")) { return data }
            if data.count > limit { throw InputError("standard input is larger than \(limit) bytes") }
        }
    }
}
