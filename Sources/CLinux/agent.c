// The agent (cog-cred agent, COG_CRED_AGENT) in C: its UNIX socket (struct
// sockaddr_un and struct ucred are not reachable from Embedded Swift), the
// signal handler that removes the socket (async-signal-safe), --daemon's
// pipe and new session, and locking its memory.
#define _GNU_SOURCE
#include "CLinux.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int address(const char *path, struct sockaddr_un *out) {
    size_t length = strlen(path);
    if (length == 0 || length >= sizeof out->sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->sun_family = AF_UNIX;
    memcpy(out->sun_path, path, length);
    return 0;
}

size_t clinux_socket_path_capacity(void) { return sizeof(((struct sockaddr_un *)0)->sun_path) - 1; }

int clinux_unix_connect(const char *path) {
    struct sockaddr_un where;
    if (address(path, &where) != 0) return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    while (connect(fd, (struct sockaddr *)&where, sizeof where) != 0) {
        if (errno == EINTR) continue;
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int clinux_unix_listen(const char *path) {
    struct sockaddr_un where;
    if (address(path, &where) != 0) return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    // Made 0600 from the start: never a moment when others could connect.
    mode_t old = umask(0177);
    int bound = bind(fd, (struct sockaddr *)&where, sizeof where);
    umask(old);
    if (bound != 0 || listen(fd, 128) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int clinux_send_all(int fd, const void *data, size_t length) {
    const char *p = data;
    while (length > 0) {
        ssize_t n = send(fd, p, length, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        length -= (size_t)n;
    }
    return 0;
}

int clinux_accept(int fd) { return accept4(fd, 0, 0, SOCK_CLOEXEC | SOCK_NONBLOCK); }

int clinux_set_blocking(int fd, int blocking) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
}

long clinux_raise_descriptor_limit(long most) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
    rlim_t wanted = limit.rlim_max == RLIM_INFINITY || limit.rlim_max > (rlim_t)most ? (rlim_t)most : limit.rlim_max;
    if (limit.rlim_cur < wanted) {
        limit.rlim_cur = wanted;
        if (setrlimit(RLIMIT_NOFILE, &limit) != 0) getrlimit(RLIMIT_NOFILE, &limit);
    }
    return limit.rlim_cur == RLIM_INFINITY ? most : (long)limit.rlim_cur;
}

void clinux_return_freed_memory(void) {
    // A fixed threshold: glibc's moving one rises to the largest block
    // freed, after which every request of that size stays on the heap.
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
    mallopt(M_ARENA_MAX, 2);
}

int clinux_peer(int fd, unsigned int *uid, int *pid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *uid = credentials.uid;
    *pid = credentials.pid;
    return 0;
}

int clinux_receive_timeout(int fd, long seconds) {
    struct timeval limit = {seconds, 0};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) != 0) return -1;
    return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
}

static char removed_socket[128];
static char removed_directory[4096];

static void remove_and_exit(int signal) {
    (void)signal;
    unlink(removed_socket);
    if (removed_directory[0]) rmdir(removed_directory);
    _exit(0);
}

int clinux_remove_socket_on_signals(const char *socket, const char *directory) {
    if (strlen(socket) >= sizeof removed_socket || (directory && strlen(directory) >= sizeof removed_directory)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(removed_socket, socket);
    strcpy(removed_directory, directory ? directory : "");
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = remove_and_exit;
    sigfillset(&action.sa_mask);
    int signals[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        if (sigaction(signals[i], &action, 0) != 0) return -1;
    }
    // A client that goes away mid-answer must not end the agent.
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

int clinux_lock_memory(unsigned long *limit) {
    struct rlimit memlock;
    if (getrlimit(RLIMIT_MEMLOCK, &memlock) != 0) return -1;
    *limit = memlock.rlim_cur == RLIM_INFINITY ? 0 : (unsigned long)memlock.rlim_cur;
    // MCL_FUTURE under a finite limit would make a later allocation fail
    // (and the agent crash) once the limit is reached: lock everything only
    // where nothing caps it (root, CAP_IPC_LOCK, a raised limit).
    if (memlock.rlim_cur != RLIM_INFINITY && geteuid() != 0) {
        errno = ENOMEM;
        return -1;
    }
    // MCL_ONFAULT: pages are locked as they are used, not all at once (a
    // thread's whole stack would be).
    return mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT);
}

int clinux_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

short clinux_spawn_new_session(void) { return POSIX_SPAWN_SETSID; }
