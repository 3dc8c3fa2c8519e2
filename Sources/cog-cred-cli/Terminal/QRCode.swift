import CLinux
import CogCredWrite

#if canImport(Glibc)
import Glibc
#endif

/// Draws a QR code on the terminal with `qrencode`, when it is installed.
///
/// The URI holds the authenticator's shared secret, so it goes to qrencode
/// on stdin, never on its command line where other users could read it.
enum QRCode {
    /// Returns false when qrencode is missing or failed; the caller still has the URI to show.
    @discardableResult
    static func render(_ text: String, toFileDescriptor output: Int32) -> Bool {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return false }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        clinux_spawn_close_from(&actions, 3)  // the pipe's own ends among them

        var pid: pid_t = 0
        let arguments = ["qrencode", "-t", "UTF8", "-m", "1"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawnp(&pid, "qrencode", &actions, nil, &argv, environ)
        close(pipeEnds[0])
        guard spawned == 0 else {
            close(pipeEnds[1])
            return false
        }
        writeAll(pipeEnds[1], text)
        close(pipeEnds[1])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status == 0
    }
}
