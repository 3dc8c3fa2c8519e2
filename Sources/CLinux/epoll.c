// epoll and accept4 for `cog-cred proxy`'s event loops: struct epoll_event is
// packed on x86_64, which Swift does not lay out as glibc does, so its
// fields are filled and read here (each watched descriptor carries a 64-bit
// tag); accept4 and sched_getaffinity are declared only under _GNU_SOURCE.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "CLinux.h"

int clinux_epoll_new(void) { return epoll_create1(EPOLL_CLOEXEC); }

int clinux_epoll_watch(int epoll, int fd, int readable, int writable, unsigned long long tag, int added) {
    struct epoll_event event = {0};
    event.events = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);
    event.data.u64 = tag;
    // `added` is the caller's belief; a descriptor closed and reused may prove it wrong.
    if (epoll_ctl(epoll, added ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event) == 0) return 0;
    if (errno != (added ? ENOENT : EEXIST)) return -1;
    return epoll_ctl(epoll, added ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event);
}

int clinux_epoll_forget(int epoll, int fd) { return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL); }

int clinux_epoll_wait(int epoll, unsigned long long *tags, unsigned int *events, int most, int milliseconds) {
    struct epoll_event ready[64];
    if (most > 64) most = 64;
    int count = epoll_wait(epoll, ready, most, milliseconds);
    for (int i = 0; i < count; i++) {
        tags[i] = ready[i].data.u64;
        unsigned int what = ready[i].events;
        events[i] = ((what & EPOLLIN) ? 1 : 0) | ((what & EPOLLOUT) ? 2 : 0) | ((what & (EPOLLERR | EPOLLHUP)) ? 4 : 0);
    }
    return count;
}

int clinux_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

int clinux_cpus_usable(void) {
    cpu_set_t usable;
    if (sched_getaffinity(0, sizeof usable, &usable) != 0) return 0;
    return CPU_COUNT(&usable);
}

int clinux_accept_from(int listening, struct sockaddr_storage *address, unsigned int *length) {
    socklen_t size = sizeof(*address);
    int fd = accept4(listening, (struct sockaddr *)address, &size, SOCK_NONBLOCK | SOCK_CLOEXEC);
    *length = size;
    return fd;
}
