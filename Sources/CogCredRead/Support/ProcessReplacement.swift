#if canImport(Glibc)
import Glibc
#endif

/// Replaces this process with another program, so the program's exit status
/// and signals are exactly what the caller sees.
public enum ProcessReplacement {
    /// Sets `variables` in the environment (removing those whose value is
    /// nil) and runs `command` (searched on PATH) in place of this process.
    /// Returns only on failure.
    public static func exec(_ command: [String], setting variables: [String: String?]) -> Failure {
        guard let program = command.first else { return Failure(code: ENOENT) }
        for (name, value) in variables {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        let argv = command.map { strdup($0) } + [nil]
        execvp(program, argv)
        let failure = Failure(code: errno)
        for pointer in argv { free(pointer) }
        return failure
    }

    /// Why a command could not be run.
    public struct Failure: Sendable {
        public let code: Int32

        public var reason: String { String(cString: strerror(code)) }

        /// What shells exit with: 127 when the command was not found, 126
        /// when it was found but could not be run (not executable, a
        /// directory, not a program).
        public var exitStatus: Int32 { code == ENOENT || code == ENOTDIR ? 127 : 126 }
    }
}
