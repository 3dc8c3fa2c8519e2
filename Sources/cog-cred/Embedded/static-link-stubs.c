// static-link-stubs.c: what a fully static link of libdbus-1 needs besides it.
//
// Debian's libdbus-1.a calls two libsystemd functions, sd_listen_fds and
// sd_is_socket, and only when a D-Bus *server* takes its sockets from
// systemd's socket activation. Debian ships no static libsystemd, so the
// front binary (a client only) defines them here: no sockets are passed.
// It also defines glibc's user and host lookups as "not found":
// see below. Compiled by scripts/build into the
// release front only (the folder is excluded from the SwiftPM target).

// Both answer "no socket was passed to this process",
// which is the truth for a command-line client.
int sd_listen_fds(int unset_environment) {
    (void)unset_environment;
    return 0;
}

int sd_is_socket(int fd, int family, int type, int listening) {
    (void)fd; (void)family; (void)type; (void)listening;
    return 0;
}

// The fully static front binary never looks anyone up in the user or host
// databases, and must not: in a static binary glibc's NSS (getpwuid,
// getaddrinfo, ...) loads the system's libnss modules with dlopen, modules
// built for whatever glibc the machine has, not the one linked in. So these
// answer "not found", and the linker takes them instead of libc.a's, which
// carry its "requires at runtime the shared libraries" warnings. Who asks, and why nothing is lost:
// - Paths.home, only when HOME is unset: the front then finds no config and
//   hands the request to cog-cred-cli, which is linked dynamically and looks
//   the user up properly;
// - unsafeDirectory (Files.swift), for the home directory its walk up a
//   path stops at: the front walks on up to /, which checks more, never
//   less (a refusal there hands over to cog-cred-cli);
// - libdbus's fill_user_info, for a D-Bus server's user names, and its tcp
//   transport's getaddrinfo: the front uses only unix: addresses (with any
//   other, it hands over before connecting: an unencrypted session needs
//   every address to be local).
#include <errno.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <stddef.h>

struct passwd *getpwuid(uid_t uid) {
    (void)uid;
    errno = ENOENT;
    return NULL;
}

int getpwuid_r(uid_t uid, struct passwd *pwd, char *buf, size_t buflen, struct passwd **result) {
    (void)uid; (void)pwd; (void)buf; (void)buflen;
    *result = NULL;
    return 0;  // "no such user", as glibc says it
}

int getpwnam_r(const char *name, struct passwd *pwd, char *buf, size_t buflen, struct passwd **result) {
    (void)name; (void)pwd; (void)buf; (void)buflen;
    *result = NULL;
    return 0;
}

int getgrouplist(const char *user, gid_t group, gid_t *groups, int *ngroups) {
    (void)user;
    if (*ngroups < 1) {
        *ngroups = 1;
        return -1;
    }
    groups[0] = group;
    *ngroups = 1;
    return 1;
}

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res) {
    (void)node; (void)service; (void)hints;
    *res = NULL;
    return EAI_FAIL;
}

void freeaddrinfo(struct addrinfo *res) {
    (void)res;  // getaddrinfo above never allocates one
}

