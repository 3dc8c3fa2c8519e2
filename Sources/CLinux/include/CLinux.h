// CLinux: Linux calls Swift cannot make directly. prctl is variadic.
#ifndef CLINUX_H
#define CLINUX_H

/// Makes this process undumpable: no core file, no /proc/<pid>/mem or
/// environ for other processes of the same user, no ptrace attach. Returns 0
/// on success.
int clinux_forbid_core_dumps(void);

#endif
