#if canImport(Glibc)
import Glibc
#endif

/// Replaces this process with another program, so the program's exit status
/// and signals are exactly what the caller sees.
public enum ProcessReplacement {
    /// Sets `variables` in the environment (removing those whose value is
    /// nil) and runs `command` (searched on PATH) in place of this process.
    /// Returns only on failure, with the reason.
    public static func exec(_ command: [String], setting variables: [String: String?]) -> String {
        guard let program = command.first else { return "no command" }
        for (name, value) in variables {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        let argv = command.map { strdup($0) } + [nil]
        execvp(program, argv)
        let reason = String(cString: strerror(errno))
        for pointer in argv { free(pointer) }
        return reason
    }
}
