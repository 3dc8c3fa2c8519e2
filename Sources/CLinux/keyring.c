#include "CLinux.h"

#include <linux/keyctl.h>
#include <sys/syscall.h>
#include <unistd.h>

// Possessor: everything; owner (same uid): view, read, write, search, set
// attributes; group and others: nothing.
#define CLINUX_KEY_PERM 0x3f2f0000

int32_t clinux_key_add(const char *description, const void *payload, size_t length, int32_t keyring) {
    long key = syscall(SYS_add_key, "user", description, payload, length, keyring);
    if (key < 0) return -1;
    syscall(SYS_keyctl, KEYCTL_SETPERM, key, CLINUX_KEY_PERM);
    return (int32_t)key;
}

int32_t clinux_key_search(int32_t keyring, const char *description) {
    long key = syscall(SYS_keyctl, KEYCTL_SEARCH, keyring, "user", description, 0);
    return key < 0 ? -1 : (int32_t)key;
}

long clinux_key_read(int32_t key, void *buffer, size_t length) {
    return syscall(SYS_keyctl, KEYCTL_READ, key, buffer, length);
}

int clinux_key_set_timeout(int32_t key, unsigned seconds) {
    return (int)syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, key, seconds);
}

int clinux_key_invalidate(int32_t key) {
    return (int)syscall(SYS_keyctl, KEYCTL_INVALIDATE, key);
}
