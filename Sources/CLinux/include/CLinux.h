// CLinux: Linux calls Swift cannot make directly. prctl is variadic, glibc
// has no wrappers for the kernel keyring system calls, and a timed flock
// needs a signal handler and a thread-directed timer.
#ifndef CLINUX_H
#define CLINUX_H

#include <stddef.h>
#include <stdint.h>

/// Makes this process undumpable: no core file, no /proc/<pid>/mem or
/// environ for other processes of the same user, no ptrace attach. Returns 0
/// on success.
int clinux_forbid_core_dumps(void);

/// The calling user's keyring (KEY_SPEC_USER_KEYRING).
#define CLINUX_USER_KEYRING (-4)

/// add_key(2) of a "user" key into `keyring`, readable and writable only by
/// its possessor and its owner. Returns the key's serial, or -1 (errno set).
int32_t clinux_key_add(const char *description, const void *payload, size_t length, int32_t keyring);
/// KEYCTL_SEARCH for a "user" key by description. Returns its serial or -1.
int32_t clinux_key_search(int32_t keyring, const char *description);
/// KEYCTL_READ. Returns the payload's full length (which may exceed
/// `length`), or -1.
long clinux_key_read(int32_t key, void *buffer, size_t length);
/// KEYCTL_SET_TIMEOUT: the kernel removes the key after `seconds`.
int clinux_key_set_timeout(int32_t key, unsigned seconds);
/// KEYCTL_INVALIDATE: removes the key at once.
int clinux_key_invalidate(int32_t key);

/// flock(2) that blocks at most `milliseconds` (0: does not block). Returns
/// 0 when the lock is taken; -1 with errno EWOULDBLOCK when the time ran
/// out, or another errno. Uses SIGALRM, aimed at the calling thread only.
int clinux_flock_within(int fd, int operation, long milliseconds);

#endif
