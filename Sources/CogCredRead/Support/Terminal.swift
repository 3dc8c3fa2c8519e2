import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// Whether this process has a controlling terminal to ask a person on
/// (/dev/tty opens), whatever its standard input, output and error are:
/// the one test of "on a terminal" for every prompt and question.
public func hasControllingTerminal() -> Bool {
    let fd = clinux_open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC, 0)
    guard fd >= 0 else { return false }
    close(fd)
    return true
}
