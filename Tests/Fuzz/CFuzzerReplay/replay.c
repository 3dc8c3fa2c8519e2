// LLVMFuzzerRunDriver without libFuzzer, for `scripts/fuzz --replay`: every
// file of the directories (or files) named on the command line goes through
// the target's callback once, in name order, so the kept corpus is a
// regression test of the parsers built without -sanitize=fuzzer (no
// instrumented build of its own; scripts/test runs it on the unit tests'
// build). A failed precondition kills the process; the input it was on is
// named first.
#include "CFuzzer.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char current[4096];

static void name_the_input(int signal_number) {
    static const char prefix[] = "fuzz replay: the input that failed: ";
    write(2, prefix, sizeof prefix - 1);
    write(2, current, strlen(current));
    write(2, "\n", 1);
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

static int replay_file(const char *path, int (*callback)(const uint8_t *, size_t), long *count) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "fuzz replay: cannot open %s\n", path);
        return 1;
    }
    uint8_t *data = NULL;
    size_t size = 0, capacity = 0, got;
    do {
        if (size == capacity) {
            capacity = capacity ? capacity * 2 : 4096;
            uint8_t *grown = realloc(data, capacity);
            if (!grown) abort();
            data = grown;
        }
        got = fread(data + size, 1, capacity - size, file);
        size += got;
    } while (got > 0);
    fclose(file);
    snprintf(current, sizeof current, "%s", path);
    callback(data, size);
    free(data);
    (*count)++;
    return 0;
}

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size)) {
    int signals[] = {SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) signal(signals[i], name_the_input);
    long count = 0;
    for (int i = 1; i < *argc; i++) {
        const char *name = (*argv)[i];
        if (name[0] == '-') continue;  // libFuzzer's options, which scripts/fuzz may pass
        struct dirent **entries;
        int n = scandir(name, &entries, NULL, by_name);
        if (n < 0) {
            if (replay_file(name, callback, &count)) return 1;
            continue;
        }
        for (int j = 0; j < n; j++) {
            char path[4096];
            if (entries[j]->d_name[0] != '.') {
                snprintf(path, sizeof path, "%s/%s", name, entries[j]->d_name);
                if (replay_file(path, callback, &count)) return 1;
            }
            free(entries[j]);
        }
        free(entries);
    }
    if (count == 0) {
        fprintf(stderr, "fuzz replay: no input to replay\n");
        return 1;
    }
    printf("fuzz replay: %ld inputs, no failure\n", count);
    return 0;
}
