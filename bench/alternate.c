// alternate ROUNDS WARMUP COMMAND...: times COMMANDs taking turns, one run
// of each per round, and prints one line per COMMAND: its wall times in
// seconds, space-separated, in the order given.
//
// Why not hyperfine: hyperfine runs all of one command's runs, then all of
// the next one's, so a slow minute of a shared host lands on one side of a
// ratio. Taking turns puts every slow moment on both sides; the order turns
// round each round, so neither side always runs just after the other.
//
// Each COMMAND is one argument, split at spaces (no shell, no quoting), run
// with posix_spawnp; "<FILE " in front gives it FILE as standard input
// (else /dev/null). Its stdout and stderr go to /dev/null; a run that does
// not exit 0 stops everything with exit status 1.
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

typedef struct {
    char *input;
    char *argv[64];
} command;

static void parse(char *text, command *c) {
    int n = 0;
    c->input = "/dev/null";
    for (char *word = strtok(text, " "); word && n < 63; word = strtok(NULL, " ")) {
        if (n == 0 && word[0] == '<' && word[1]) {
            c->input = word + 1;
            continue;
        }
        c->argv[n++] = word;
    }
    c->argv[n] = NULL;
}

static double run(const command *c) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, c->input, O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    struct timespec start, end;
    pid_t pid;
    int status;
    clock_gettime(CLOCK_MONOTONIC, &start);
    if (posix_spawnp(&pid, c->argv[0], &actions, NULL, c->argv, environ) != 0 || waitpid(pid, &status, 0) != pid) {
        perror(c->argv[0]);
        exit(1);
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    posix_spawn_file_actions_destroy(&actions);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "alternate: %s did not exit 0\n", c->argv[0]);
        exit(1);
    }
    return (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: alternate ROUNDS WARMUP COMMAND...\n");
        return 64;
    }
    int rounds = atoi(argv[1]), warmup = atoi(argv[2]), count = argc - 3;
    command *commands = calloc(count, sizeof(command));
    double *times = calloc((size_t)rounds * count, sizeof(double));
    for (int i = 0; i < count; i++) parse(argv[i + 3], &commands[i]);
    for (int round = -warmup; round < rounds; round++) {
        for (int k = 0; k < count; k++) {
            int i = (round & 1) ? count - 1 - k : k;
            double t = run(&commands[i]);
            if (round >= 0) times[(size_t)i * rounds + round] = t;
        }
    }
    for (int i = 0; i < count; i++) {
        for (int r = 0; r < rounds; r++) printf(r ? " %.9f" : "%.9f", times[(size_t)i * rounds + r]);
        printf("\n");
    }
    return 0;
}
