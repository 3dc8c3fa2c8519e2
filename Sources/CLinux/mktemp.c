// mktemp(3), defined here so that the linker takes it instead of glibc's.
//
// glibc's carries a link-time warning ("the use of `mktemp' is dangerous"),
// and FoundationEssentials, linked into cog-cred-cli by
// --static-swift-stdlib, names it in its temporary-file code, so every
// release link printed that warning although cog-cred writes no file through
// Foundation. This one makes the name as glibc's does (the template's six
// trailing X replaced by random letters and digits, a name nothing has yet);
// the caller still opens it with O_EXCL and tries again if it lost a race,
// which is what makes that use safe.
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

char *mktemp(char *template) {
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    size_t length = strlen(template);
    if (length < 6 || strcmp(template + length - 6, "XXXXXX") != 0) {
        errno = EINVAL;
        template[0] = '\0';
        return template;
    }
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned char random[6];
        if (getrandom(random, sizeof random, 0) != (ssize_t)sizeof random) break;
        for (size_t i = 0; i < 6; i++) template[length - 6 + i] = letters[random[i] % (sizeof letters - 1)];
        struct stat status;
        if (lstat(template, &status) != 0 && errno == ENOENT) return template;
    }
    errno = EEXIST;
    template[0] = '\0';
    return template;
}
