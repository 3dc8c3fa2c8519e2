import CLinux

/// Process-wide protections applied before any secret is touched.
public enum Hardening {
    /// Tokens, passwords and client secrets live in this process's memory:
    /// never let them reach a core file or another process's debugger.
    public static func forbidCoreDumps() {
        _ = clinux_forbid_core_dumps()
    }
}
