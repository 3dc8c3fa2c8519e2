// CLinux: Linux calls Swift cannot make directly. prctl is variadic,
// memfd_create is declared only under _GNU_SOURCE, and a timed flock needs a
// signal handler and a thread-directed timer.
#ifndef CLINUX_H
#define CLINUX_H

#include <stddef.h>
#include <stdint.h>

/// Makes this process undumpable: no core file, no /proc/<pid>/mem or
/// environ for other processes of the same user, no ptrace attach. Returns 0
/// on success.
int clinux_forbid_core_dumps(void);

/// An anonymous in-memory file (memfd_create(2), close-on-exec) holding
/// `length` bytes of `data`, positioned at its start; -1 on failure. The
/// front binary hands input it has already read to cog-cred-cli this way.
int clinux_memory_file(const void *data, size_t length);

/// flock(2) that blocks at most `milliseconds` (0: does not block). Returns
/// 0 when the lock is taken; -1 with errno EWOULDBLOCK when the time ran
/// out, or another errno. Uses SIGALRM, aimed at the calling thread only.
int clinux_flock_within(int fd, int operation, long milliseconds);

#endif
