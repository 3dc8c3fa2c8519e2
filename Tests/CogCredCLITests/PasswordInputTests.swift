import Testing
import CogCredWrite
@testable import cog_cred_cli

#if canImport(Glibc)
import Glibc
#endif

/// The terminal's line reader, fed through a pipe in place of /dev/tty.
@Suite struct PasswordInputTests {
    /// Writes `text` into a pipe, closes its write end, and reads one line from it.
    func readLine(_ text: String, limit: Int) -> [UInt8]? {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        _ = writeAll(ends[1], text)
        close(ends[1])
        return PasswordInput.readTerminalLine(from: ends[0], limit: limit)
    }

    @Test func aLineEndsAtTheNewlineOrTheEndOfInput() {
        #expect(readLine("secret\nrest", limit: 64) == Array("secret".utf8))
        #expect(readLine("no newline", limit: 64) == Array("no newline".utf8))
        #expect(readLine("\n", limit: 64) == [])
    }

    /// Too long is refused, not cut: a cut password would be the wrong one.
    @Test func anOverlongLineIsRefused() {
        #expect(readLine("12345\n", limit: 4) == nil)
        #expect(readLine("1234\n", limit: 4) == Array("1234".utf8))
    }
}
