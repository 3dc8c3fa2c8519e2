// with-stdin FILE COMMAND [ARGS...]: runs COMMAND (execvp, no fork, no
// shell) with FILE as its standard input. hyperfine 1.15 (Debian 12) has no
// --input, and a shell would time itself too; the helpers that read a
// request on stdin (git, docker) and their reference are all run through
// this, so each pays the same few hundred microseconds.
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: with-stdin FILE COMMAND [ARGS...]\n");
        return 64;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0 || dup2(fd, 0) < 0) {
        perror(argv[1]);
        return 66;
    }
    if (fd != 0) close(fd);
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}
