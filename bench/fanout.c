// fanout N COMMAND...: starts N copies of COMMAND at once, as a burst of
// callers would, and waits for them all. Prints one line: the wall time in
// seconds from the first start to the last exit, how many different
// outputs the copies printed on stdout, and how many did not exit 0.
//
// Why not Python's subprocess: starting 64 processes from Python costs
// about 32 ms on this machine (64 × /bin/true), a third of what the burst
// it would time takes; posix_spawn here costs a few. Every copy's stdout is
// read through a pipe of its own (compared byte for byte); stderr goes to
// /dev/null; stdin is /dev/null.
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { MAX = 256, OUTPUT = 16384 };

int main(int argc, char **argv) {
    int n = argc > 2 ? atoi(argv[1]) : 0;
    if (n < 1 || n > MAX) {
        fprintf(stderr, "usage: fanout N(1-%d) COMMAND [ARG...]\n", MAX);
        return 2;
    }
    static char output[MAX][OUTPUT];
    size_t length[MAX] = {0};
    struct pollfd fds[MAX];
    pid_t pids[MAX];
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < n; i++) {
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) != 0) { perror("fanout: pipe"); return 1; }
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&actions, pipefd[1], 1);
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
        if (posix_spawnp(&pids[i], argv[2], &actions, NULL, argv + 2, environ) != 0) {
            perror("fanout: spawn");
            return 1;
        }
        posix_spawn_file_actions_destroy(&actions);
        close(pipefd[1]);
        fds[i] = (struct pollfd){.fd = pipefd[0], .events = POLLIN};
    }
    for (int open = n; open > 0;) {
        if (poll(fds, n, -1) < 0) { perror("fanout: poll"); return 1; }
        for (int i = 0; i < n; i++) {
            if (fds[i].fd < 0 || !fds[i].revents) continue;
            ssize_t got = read(fds[i].fd, output[i] + length[i], OUTPUT - length[i]);
            if (got > 0 && length[i] + (size_t)got < OUTPUT) {
                length[i] += (size_t)got;
            } else {
                close(fds[i].fd);
                fds[i].fd = -1;
                open--;
            }
        }
    }
    int failed = 0;
    for (int i = 0; i < n; i++) {
        int status;
        if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            seen = length[j] == length[i] && memcmp(output[j], output[i], length[i]) == 0;
        }
        distinct += !seen;
    }
    printf("%.6f %d %d\n", (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9, distinct, failed);
    return 0;
}
