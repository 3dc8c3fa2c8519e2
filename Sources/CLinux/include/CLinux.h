// CLinux: Linux calls Swift cannot make directly. prctl, open and fcntl are
// variadic, memfd_create is declared only under _GNU_SOURCE, a timed flock
// needs a signal handler and a thread-directed timer, and the front binary
// is also compiled as Embedded Swift (scripts/build), which has neither the
// Glibc module's wrappers nor CommandLine.
#ifndef CLINUX_H
#define CLINUX_H

#include <dlfcn.h>
#include <pthread.h>
#include <spawn.h>
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

/// open(2) and openat(2) with their mode always given.
int clinux_open(const char *path, int flags, unsigned int mode);
int clinux_openat(int directory, const char *path, int flags, unsigned int mode);

/// A new file named after `template` (its six trailing X replaced by
/// random characters, in place), created with O_EXCL, mode 0600 and
/// close-on-exec (mkostemp); its descriptor, or -1.
int clinux_create_exclusive(char *template);

/// fcntl(fd, F_SETFD, flags): 0 lets the descriptor survive an exec.
int clinux_set_descriptor_flags(int fd, int flags);

/// A program cog-cred spawns (the browser, qrencode) gets no descriptor
/// from `from` up: whatever of cog-cred's is not close-on-exec (a library's
/// socket pair, say) stays cog-cred's. glibc >= 2.34 has it, declared only
/// under _GNU_SOURCE, which Swift's Glibc module is not built with; inline,
/// so the static front never refers to it.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
static inline int clinux_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);
static inline int clinux_spawn_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

/// This process's argc and argv, as the C library passed them to the
/// program's constructors before main.
int clinux_argc(void);
char *const *clinux_argv(void);

/// Decodes `length` bytes of base64url (RFC 4648 section 5, without the
/// padding) into `out` with glibc's b64_pton: the number of bytes written,
/// or -1 for anything that is not base64url or does not fit `capacity`.
long clinux_base64url_decode(const unsigned char *in, size_t length, unsigned char *out, size_t capacity);

/// A library loaded when first needed instead of linked (CCurl, CSecret):
/// whether it was tried, and why it failed (NULL once loaded). The one way
/// those shims load theirs; inline, so that only a binary that uses it
/// refers to dlopen (never the static front).
typedef struct {
    pthread_mutex_t mutex;
    int tried;
    const char *failure;
    char reason[256];
} clinux_library;
#define CLINUX_LIBRARY_INIT {PTHREAD_MUTEX_INITIALIZER, 0, "not loaded", {0}}

/// Declares `api`, a struct with a pointer for each function an X macro
/// lists, and `api_names`, their names in the same order, for
/// CLINUX_LIBRARY_LOAD to fill it slot by slot. `(name)`: a function GLib
/// or curl.h also defines as a macro is not expanded where no "(" follows.
#define CLINUX_POINTER(name) __typeof__(name) *(name);
#define CLINUX_NAME(name) #name,
#define CLINUX_LIBRARY_TABLE(FUNCTIONS)                      \
    static struct {                                          \
        FUNCTIONS(CLINUX_POINTER)                            \
    } api;                                                   \
    static const char *const api_names[] = {FUNCTIONS(CLINUX_NAME)}; \
    _Static_assert(sizeof api == sizeof api_names / sizeof api_names[0] * sizeof(void *), "a slot for each name")

/// Loads `soname` and looks up every function of `api` (CLINUX_LIBRARY_TABLE)
/// the first time; `then` runs once after a success. Every later call, from
/// any thread, waits for the first and gets its answer: NULL when loaded,
/// else why.
#define CLINUX_LIBRARY_LOAD(library, soname, then) \
    clinux_library_load(&(library), soname, api_names, (void **)&api, sizeof api_names / sizeof api_names[0], then)

static inline const char *clinux_library_load(clinux_library *library, const char *soname, const char *const *names,
                                              void **slots, size_t count, void (*then)(void)) {
    pthread_mutex_lock(&library->mutex);
    if (!library->tried) {
        library->tried = 1;
        library->failure = NULL;
        void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            snprintf(library->reason, sizeof library->reason, "%s", dlerror());
            library->failure = library->reason;
        }
        for (size_t i = 0; handle && !library->failure && i < count; i++) {
            if (!(slots[i] = dlsym(handle, names[i]))) {
                snprintf(library->reason, sizeof library->reason, "%s has no function %s", soname, names[i]);
                library->failure = library->reason;
            }
        }
        if (!library->failure && then) then();
    }
    const char *failure = library->failure;
    pthread_mutex_unlock(&library->mutex);
    return failure;
}

/// errno, which is a macro Swift cannot import.
int clinux_errno(void);
void clinux_set_errno(int value);


// The agent's UNIX socket (agent.c): connect and listen (0600 from the
// start) by path, -1 with errno ENAMETOOLONG past sun_path's bytes; the
// peer's uid and pid (SO_PEERCRED); a receive and send timeout.
size_t clinux_socket_path_capacity(void);
int clinux_unix_connect(const char *path);
int clinux_unix_listen(const char *path);
/// accept4, the connection close-on-exec and non-blocking.
int clinux_accept(int fd);
/// Clears (`blocking` 1) or sets O_NONBLOCK.
int clinux_set_blocking(int fd, int blocking);
/// Raises the soft limit on open descriptors towards the hard one, to at
/// most `most`; the soft limit in force after.
long clinux_raise_descriptor_limit(long most);
/// Has glibc's malloc give large freed blocks back to the system at once
/// (a fixed mmap threshold of 64 KiB, two arenas): for a process that lives
/// long and reads requests of up to a MiB from anyone who reaches it.
void clinux_return_freed_memory(void);
// send(2) of all `length` bytes with MSG_NOSIGNAL: 0, or -1 when the peer is gone.
int clinux_send_all(int fd, const void *data, size_t length);
int clinux_peer(int fd, unsigned int *uid, int *pid);
/// The uid owning the other end of the local TCP connection `fd` (the
/// kernel's sock_diag, as `ss -e`): 0 and `uid` set, or -1 with errno
/// (ESRCH: the peer is on no socket of this machine's).
int clinux_tcp_peer_uid(int fd, unsigned int *uid);
/// The same for a connection not accepted yet: the client's address as
/// accept gives it, to the socket `listening` (bound to one address).
struct sockaddr;
int clinux_tcp_client_uid(const struct sockaddr *client, unsigned int length, int listening, unsigned int *uid);
/// A TCP socket listening on `address` (an IPv4 or IPv6 address, not a
/// name) and `port` (0: a free one, then `bound_port` says which); -1 with errno.
int clinux_tcp_listen(const char *address, int port, int *bound_port);
int clinux_receive_timeout(int fd, long seconds);
// On SIGTERM, SIGINT and SIGHUP: unlinks `socket`, removes `directory` (if
// given, when empty) and exits 0. SIGPIPE is ignored.
int clinux_remove_socket_on_signals(const char *socket, const char *directory);
/// epoll (epoll.c): a new epoll descriptor (close-on-exec); `fd` watched
/// for reading and/or writing, carrying `tag` (added, or changed); no more
/// watched; up to `most` (at most 64) ready descriptors' tags and events
/// (1 readable, 2 writable, 4 an error or hang-up: libcurl's
/// CURL_CSELECT_IN, _OUT and _ERR), waiting up to `milliseconds`
/// (-1: no limit); the count, or -1 with errno.
int clinux_epoll_new(void);
int clinux_epoll_watch(int epoll, int fd, int readable, int writable, unsigned long long tag, int added);
int clinux_epoll_forget(int epoll, int fd);
int clinux_epoll_wait(int epoll, unsigned long long *tags, unsigned int *events, int most, int milliseconds);
/// An eventfd (non-blocking, close-on-exec): another thread's way to wake a loop.
int clinux_eventfd(void);
/// The processors this process may run on (its affinity: taskset, a
/// container's cpuset), for the proxy's loop count; 0 when it cannot be read.
int clinux_cpus_usable(void);
/// accept4(2), the connection non-blocking and close-on-exec: its
/// descriptor and the peer's address, or -1 with errno (EAGAIN: none waits).
struct sockaddr_storage;
int clinux_accept_from(int listening, struct sockaddr_storage *address, unsigned int *length);
// mlockall where RLIMIT_MEMLOCK does not cap it; -1 otherwise, `limit` the cap in bytes.
int clinux_lock_memory(unsigned long *limit);
// --daemon's: a close-on-exec pipe; posix_spawn's flag for a new session.
int clinux_pipe(int fds[2]);
short clinux_spawn_new_session(void);

#endif
