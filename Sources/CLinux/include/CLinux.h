// CLinux: Linux calls Swift cannot make directly. prctl, open and fcntl are
// variadic, memfd_create is declared only under _GNU_SOURCE, a timed flock
// needs a signal handler and a thread-directed timer, and the front binary
// is also compiled as Embedded Swift (scripts/build), which has neither the
// Glibc module's wrappers nor CommandLine.
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

/// open(2) with its mode always given.
int clinux_open(const char *path, int flags, unsigned int mode);

/// fcntl(fd, F_SETFD, flags): 0 lets the descriptor survive an exec.
int clinux_set_descriptor_flags(int fd, int flags);

/// This process's argc and argv, as the C library passed them to the
/// program's constructors before main.
int clinux_argc(void);
char *const *clinux_argv(void);

/// Decodes `length` bytes of base64url (RFC 4648 section 5, without the
/// padding) into `out` with glibc's b64_pton: the number of bytes written,
/// or -1 for anything that is not base64url or does not fit `capacity`.
long clinux_base64url_decode(const unsigned char *in, size_t length, unsigned char *out, size_t capacity);

/// errno, which is a macro Swift cannot import.
int clinux_errno(void);
void clinux_set_errno(int value);

#endif
