#define _GNU_SOURCE
#include "CLinux.h"

#include <errno.h>
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
