#include "CDBusStatic.h"

// See CDBusStatic.h. Both answer "no socket was passed to this process",
// which is the truth for a command-line client.
int sd_listen_fds(int unset_environment) {
    (void)unset_environment;
    return 0;
}

int sd_is_socket(int fd, int family, int type, int listening) {
    (void)fd; (void)family; (void)type; (void)listening;
    return 0;
}
