#include "CLinux.h"

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
