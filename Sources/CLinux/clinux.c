#define _GNU_SOURCE
#include "CLinux.h"

#include <errno.h>
#include <fcntl.h>
#include <resolv.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sys/prctl.h>
#include <sys/resource.h>

int clinux_forbid_core_dumps(void) {
    // RLIMIT_CORE 0 alone is ignored when core_pattern pipes to a handler
    // such as systemd-coredump on some kernels; PR_SET_DUMPABLE 0 is not.
    struct rlimit none = {0, 0};
    int a = setrlimit(RLIMIT_CORE, &none);
    int b = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    return a == 0 && b == 0 ? 0 : -1;
}

int clinux_memory_file(const void *data, size_t length) {
    int fd = memfd_create("cog-cred-input", MFD_CLOEXEC);
    if (fd < 0) return -1;
    const char *p = data;
    size_t done = 0;
    while (done < length) {
        ssize_t n = write(fd, p + done, length - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { close(fd); return -1; }
        done += (size_t)n;
    }
    if (lseek(fd, 0, SEEK_SET) != 0) { close(fd); return -1; }
    return fd;
}

int clinux_open(const char *path, int flags, unsigned int mode) { return open(path, flags, (mode_t)mode); }

int clinux_create_exclusive(char *template) { return mkostemp(template, O_CLOEXEC); }

int clinux_openat(int directory, const char *path, int flags, unsigned int mode) {
    return openat(directory, path, flags, (mode_t)mode);
}

int clinux_set_descriptor_flags(int fd, int flags) { return fcntl(fd, F_SETFD, flags); }

// Both binaries start with descriptors 0, 1 and 2 open, before anything of
// theirs is opened: run with one closed (`cog-cred token >&-`, some service
// managers), the first socket or file opened would take its number, and a
// token meant for standard output would be written into the profile's lock
// file or a D-Bus socket. Each closed one is filled with /dev/null opened
// the wrong way round (0 write-only, 1 and 2 read-only), so that it still
// acts closed: a token written to a closed stdout fails (exit 74) instead of
// vanishing, and a program `exec` runs sees what it would have seen. Every
// descriptor of cog-cred's own is then 3 or above. Runs before main (and
// before Swift's top-level code) in every program that links CLinux.
__attribute__((constructor(101))) static void occupy_standard_descriptors(void) {
    static const int closed_acting[3] = {O_WRONLY, O_RDONLY, O_RDONLY};
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
        // The lowest free number: this one, as those below it are open.
        if (open("/dev/null", closed_acting[fd] | O_NOCTTY) != fd) _exit(1);  // no /dev/null: nothing is safe
    }
}

// glibc calls constructors with main's arguments (static and dynamic
// executables alike): kept here for clinux_argc and clinux_argv.
static int saved_argc;
static char **saved_argv;

__attribute__((constructor)) static void save_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    saved_argc = argc;
    saved_argv = argv;
}

int clinux_argc(void) { return saved_argc; }
char *const *clinux_argv(void) { return saved_argv; }

long clinux_base64url_decode(const unsigned char *in, size_t length, unsigned char *out, size_t capacity) {
    // b64_pton reads the standard alphabet, padded and NUL-terminated (and
    // skips white space, which is not base64url: refused here first).
    char *text = malloc(length + 4);
    if (text == NULL) return -1;
    size_t n = 0;
    for (; n < length; n++) {
        unsigned char c = in[n];
        if (c == '-') c = '+';
        else if (c == '_') c = '/';
        else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
            free(text);
            return -1;
        }
        text[n] = (char)c;
    }
    while (n % 4 != 0) text[n++] = '=';
    text[n] = '\0';
    int written = b64_pton(text, out, capacity);
    free(text);
    return written;
}

int clinux_errno(void) { return errno; }
void clinux_set_errno(int value) { errno = value; }
