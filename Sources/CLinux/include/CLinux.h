// CLinux: Linux calls Swift cannot make directly. prctl, open and fcntl are
// variadic, memfd_create is declared only under _GNU_SOURCE, a timed flock
// needs a signal handler and a thread-directed timer, and the front binary
// is also compiled as Embedded Swift (scripts/build), which has neither the
// Glibc module's wrappers nor CommandLine.
#ifndef CLINUX_H
#define CLINUX_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/// Loads `library` by its SONAME and looks up `count` functions, by `names`,
/// into `slots`; NULL when every one was found, else why (written to
/// `reason`). The one way the C shims that load a library when it is first
/// needed instead of linking it (CCurl, CSecret) do it. Inline, so that
/// only a binary that uses it refers to dlopen (never the static front).
static inline const char *clinux_load_library(const char *library, const char *const *names, void **slots, size_t count,
                                              char *reason, size_t size) {
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(reason, size, "%s", dlerror());
        return reason;
    }
    for (size_t i = 0; i < count; i++) {
        if (!(slots[i] = dlsym(handle, names[i]))) {
            snprintf(reason, size, "%s has no function %s", library, names[i]);
            return reason;
        }
    }
    return NULL;
}

/// errno, which is a macro Swift cannot import.
int clinux_errno(void);
void clinux_set_errno(int value);

#endif
