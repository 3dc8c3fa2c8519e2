// A blocking flock(2) with a time limit. flock has no timeout of its own;
// polling with LOCK_NB either burns CPU or wakes late (a waiter asleep in
// its poll interval when the holder lets go answers up to that much later,
// and a burst of 64 callers each pays it). Instead the call blocks and a
// timer aimed at this thread alone interrupts it: other threads (libdispatch's,
// the test runner's) never see the signal, so this is safe in any process.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "CLinux.h"

static void interrupt(int signal) { (void)signal; }

int clinux_flock_within(int fd, int operation, long milliseconds) {
    if (milliseconds <= 0) return flock(fd, operation | LOCK_NB);
    // SIGALRM without SA_RESTART, so that the blocked flock returns EINTR.
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = interrupt;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGALRM, &action, NULL) != 0) return -1;

    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = SIGALRM;
    event._sigev_un._tid = gettid();
    // Threads may block signals (libdispatch's workers block them all); a
    // blocked SIGALRM would stay pending and never interrupt the wait.
    sigset_t alarm_only, saved_mask;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) return -1;
    pthread_sigmask(SIG_UNBLOCK, &alarm_only, &saved_mask);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    // The interval re-arms the timer: a signal that lands just before flock
    // starts to block is followed by another 10 ms later.
    struct itimerspec when = {
        .it_value = {milliseconds / 1000, (milliseconds % 1000) * 1000000L},
        .it_interval = {0, 10 * 1000000L},
    };
    timer_settime(timer, 0, &when, NULL);
    int result;
    for (;;) {
        result = flock(fd, operation);
        if (result == 0 || errno != EINTR) break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long waited = (now.tv_sec - start.tv_sec) * 1000L + (now.tv_nsec - start.tv_nsec) / 1000000L;
        if (waited >= milliseconds) {
            errno = EWOULDBLOCK;
            break;
        }
    }
    int saved = errno;
    timer_delete(timer);
    pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
    errno = saved;
    return result;
}
