// libfido2 through a table of functions looked up at load (include/CFido2.h
// says why), and the UNIX-socket I/O for virtual authenticators. Nothing
// here calls libfido2 by name.
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "CFido2.h"
#include "CLinux.h"

#define LIBRARY "libfido2.so.1"

#define FUNCTIONS(X)                                                                                                      \
    X(fido_init) X(fido_strerr) X(fido_dev_new) X(fido_dev_free) X(fido_dev_open) X(fido_dev_close) X(fido_dev_cancel)   \
    X(fido_dev_set_timeout) X(fido_dev_set_io_functions) X(fido_dev_has_pin) X(fido_dev_has_uv) X(fido_dev_is_fido2)      \
    X(fido_dev_get_retry_count) X(fido_dev_get_touch_begin) X(fido_dev_get_touch_status) X(fido_dev_info_new)            \
    X(fido_dev_info_free) X(fido_dev_info_manifest) X(fido_dev_info_ptr) X(fido_dev_info_path) X(fido_assert_new)        \
    X(fido_assert_free) X(fido_assert_set_rp) X(fido_assert_set_clientdata) X(fido_assert_allow_cred)                    \
    X(fido_assert_set_uv) X(fido_dev_get_assert) X(fido_assert_count) X(fido_assert_id_ptr) X(fido_assert_id_len)        \
    X(fido_assert_user_id_ptr) X(fido_assert_user_id_len) X(fido_assert_user_name) X(fido_assert_authdata_ptr)           \
    X(fido_assert_authdata_len) X(fido_assert_sig_ptr) X(fido_assert_sig_len) X(fido_cred_new) X(fido_cred_free)         \
    X(fido_cred_set_type) X(fido_cred_set_clientdata) X(fido_cred_set_rp) X(fido_cred_set_user) X(fido_cred_set_rk)      \
    X(fido_cred_set_uv) X(fido_cred_exclude) X(fido_dev_make_cred) X(fido_cred_id_ptr) X(fido_cred_id_len)               \
    X(fido_cred_authdata_raw_ptr) X(fido_cred_authdata_raw_len) X(fido_cred_fmt) X(fido_cred_attstmt_ptr)                \
    X(fido_cred_attstmt_len) X(fido_assert_set_up) X(fido_cbor_info_new) X(fido_cbor_info_free) X(fido_dev_get_cbor_info)   \
    X(fido_cbor_info_maxcredcntlst)

CLINUX_LIBRARY_TABLE(FUNCTIONS);
static clinux_library library = CLINUX_LIBRARY_INIT;

// libfido2 prints nothing unless FIDO_DEBUG is set: fido_init(0) keeps it so.
static void initialise(void) { api.fido_init(0); }

int cfido2_load(void) { return CLINUX_LIBRARY_LOAD(library, LIBRARY, initialise) == NULL; }
const char *cfido2_load_failure(void) { return CLINUX_LIBRARY_LOAD(library, LIBRARY, initialise); }

// MARK: - A virtual authenticator on a UNIX socket

// One CTAPHID report. libfido2 writes 65 bytes (a report-ID byte, 0, first)
// and reads 64; the socket carries bare 64-byte reports both ways.
#define REPORT 64

typedef struct {
    int fd;
} unix_handle;

static void *unix_open(const char *path) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof address.sun_path) return NULL;
    strcpy(address.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return NULL;
    // Another local user's socket (in a shared directory, say) must not
    // play the user's security key: the peer runs as this user or root.
    struct ucred peer;
    socklen_t size = sizeof peer;
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || (peer.uid != getuid() && peer.uid != 0)) {
        int saved = errno;
        close(fd);
        errno = saved;
        return NULL;
    }
    unix_handle *handle = malloc(sizeof *handle);
    if (!handle) {
        close(fd);
        return NULL;
    }
    handle->fd = fd;
    return handle;
}

static void unix_close(void *opaque) {
    unix_handle *handle = opaque;
    close(handle->fd);
    free(handle);
}

static long long now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

// Reads one whole report within `ms` (-1: no limit), as a HID read does.
static int unix_read(void *opaque, unsigned char *buffer, size_t length, int ms) {
    unix_handle *handle = opaque;
    if (length < REPORT) return -1;
    long long deadline = ms < 0 ? -1 : now_ms() + ms;
    size_t got = 0;
    while (got < REPORT) {
        int wait = -1;
        if (deadline >= 0) {
            long long left = deadline - now_ms();
            if (left <= 0) return -1;
            wait = (int)left;
        }
        struct pollfd ready = {.fd = handle->fd, .events = POLLIN};
        int polled = poll(&ready, 1, wait);
        if (polled < 0 && errno == EINTR) continue;
        if (polled <= 0) return -1;
        ssize_t n = recv(handle->fd, buffer + got, REPORT - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    return REPORT;
}

static int unix_write(void *opaque, const unsigned char *buffer, size_t length) {
    unix_handle *handle = opaque;
    if (length != REPORT + 1) return -1;
    size_t sent = 0;
    while (sent < REPORT) {
        ssize_t n = send(handle->fd, buffer + 1 + sent, REPORT - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        sent += (size_t)n;
    }
    return (int)length;
}

static const fido_dev_io_t unix_io = {unix_open, unix_close, unix_read, unix_write};

int cfido2_dev_open(fido_dev_t *dev, const char *path) {
    size_t prefix = strlen(CFIDO2_UNIX_PREFIX);
    if (strncmp(path, CFIDO2_UNIX_PREFIX, prefix) == 0) {
        int set = api.fido_dev_set_io_functions(dev, &unix_io);
        if (set != FIDO_OK) return set;
        return api.fido_dev_open(dev, path + prefix);
    }
    return api.fido_dev_open(dev, path);
}

// MARK: - The rest, one for one

const char *cfido2_strerr(int code) { return api.fido_strerr(code); }
fido_dev_t *cfido2_dev_new(void) { return api.fido_dev_new(); }
void cfido2_dev_free(fido_dev_t **dev) { api.fido_dev_free(dev); }
int cfido2_dev_close(fido_dev_t *dev) { return api.fido_dev_close(dev); }
int cfido2_dev_cancel(fido_dev_t *dev) { return api.fido_dev_cancel(dev); }
int cfido2_dev_set_timeout(fido_dev_t *dev, int ms) { return api.fido_dev_set_timeout(dev, ms); }
bool cfido2_dev_has_pin(const fido_dev_t *dev) { return api.fido_dev_has_pin(dev); }
bool cfido2_dev_has_uv(const fido_dev_t *dev) { return api.fido_dev_has_uv(dev); }
bool cfido2_dev_is_fido2(const fido_dev_t *dev) { return api.fido_dev_is_fido2(dev); }
int cfido2_dev_get_retry_count(fido_dev_t *dev, int *retries) { return api.fido_dev_get_retry_count(dev, retries); }
int cfido2_dev_get_touch_begin(fido_dev_t *dev) { return api.fido_dev_get_touch_begin(dev); }
int cfido2_dev_get_touch_status(fido_dev_t *dev, int *touched, int ms) { return api.fido_dev_get_touch_status(dev, touched, ms); }
uint64_t cfido2_dev_max_credentials_in_list(fido_dev_t *dev) {
    fido_cbor_info_t *info = api.fido_cbor_info_new();
    if (!info) return 0;
    uint64_t count = api.fido_dev_get_cbor_info(dev, info) == FIDO_OK ? api.fido_cbor_info_maxcredcntlst(info) : 0;
    api.fido_cbor_info_free(&info);
    return count;
}

fido_dev_info_t *cfido2_dev_info_new(size_t count) { return api.fido_dev_info_new(count); }
void cfido2_dev_info_free(fido_dev_info_t **list, size_t count) { api.fido_dev_info_free(list, count); }
int cfido2_dev_info_manifest(fido_dev_info_t *list, size_t max, size_t *found) { return api.fido_dev_info_manifest(list, max, found); }
const char *cfido2_dev_info_path(const fido_dev_info_t *list, size_t index) {
    return api.fido_dev_info_path(api.fido_dev_info_ptr(list, index));
}

fido_assert_t *cfido2_assert_new(void) { return api.fido_assert_new(); }
void cfido2_assert_free(fido_assert_t **assert) { api.fido_assert_free(assert); }
int cfido2_assert_set_rp(fido_assert_t *assert, const char *rp) { return api.fido_assert_set_rp(assert, rp); }
int cfido2_assert_set_clientdata(fido_assert_t *assert, const unsigned char *data, size_t length) {
    return api.fido_assert_set_clientdata(assert, data, length);
}
int cfido2_assert_allow_cred(fido_assert_t *assert, const unsigned char *id, size_t length) {
    return api.fido_assert_allow_cred(assert, id, length);
}
int cfido2_assert_set_uv(fido_assert_t *assert, fido_opt_t uv) { return api.fido_assert_set_uv(assert, uv); }
int cfido2_assert_set_up(fido_assert_t *assert, fido_opt_t up) { return api.fido_assert_set_up(assert, up); }
int cfido2_dev_get_assert(fido_dev_t *dev, fido_assert_t *assert, const char *pin) { return api.fido_dev_get_assert(dev, assert, pin); }
size_t cfido2_assert_count(const fido_assert_t *assert) { return api.fido_assert_count(assert); }
const unsigned char *cfido2_assert_id_ptr(const fido_assert_t *assert, size_t index) { return api.fido_assert_id_ptr(assert, index); }
size_t cfido2_assert_id_len(const fido_assert_t *assert, size_t index) { return api.fido_assert_id_len(assert, index); }
const unsigned char *cfido2_assert_user_id_ptr(const fido_assert_t *assert, size_t index) {
    return api.fido_assert_user_id_ptr(assert, index);
}
size_t cfido2_assert_user_id_len(const fido_assert_t *assert, size_t index) { return api.fido_assert_user_id_len(assert, index); }
const char *cfido2_assert_user_name(const fido_assert_t *assert, size_t index) { return api.fido_assert_user_name(assert, index); }
const unsigned char *cfido2_assert_authdata_ptr(const fido_assert_t *assert, size_t index) {
    return api.fido_assert_authdata_ptr(assert, index);
}
size_t cfido2_assert_authdata_len(const fido_assert_t *assert, size_t index) { return api.fido_assert_authdata_len(assert, index); }
const unsigned char *cfido2_assert_sig_ptr(const fido_assert_t *assert, size_t index) { return api.fido_assert_sig_ptr(assert, index); }
size_t cfido2_assert_sig_len(const fido_assert_t *assert, size_t index) { return api.fido_assert_sig_len(assert, index); }

fido_cred_t *cfido2_cred_new(void) { return api.fido_cred_new(); }
void cfido2_cred_free(fido_cred_t **cred) { api.fido_cred_free(cred); }
int cfido2_cred_set_type(fido_cred_t *cred, int type) { return api.fido_cred_set_type(cred, type); }
int cfido2_cred_set_clientdata(fido_cred_t *cred, const unsigned char *data, size_t length) {
    return api.fido_cred_set_clientdata(cred, data, length);
}
int cfido2_cred_set_rp(fido_cred_t *cred, const char *id, const char *name) { return api.fido_cred_set_rp(cred, id, name); }
int cfido2_cred_set_user(fido_cred_t *cred, const unsigned char *id, size_t length, const char *name, const char *display_name) {
    return api.fido_cred_set_user(cred, id, length, name, display_name, NULL);
}
int cfido2_cred_set_rk(fido_cred_t *cred, fido_opt_t rk) { return api.fido_cred_set_rk(cred, rk); }
int cfido2_cred_set_uv(fido_cred_t *cred, fido_opt_t uv) { return api.fido_cred_set_uv(cred, uv); }
int cfido2_cred_exclude(fido_cred_t *cred, const unsigned char *id, size_t length) { return api.fido_cred_exclude(cred, id, length); }
int cfido2_dev_make_cred(fido_dev_t *dev, fido_cred_t *cred, const char *pin) { return api.fido_dev_make_cred(dev, cred, pin); }
const unsigned char *cfido2_cred_id_ptr(const fido_cred_t *cred) { return api.fido_cred_id_ptr(cred); }
size_t cfido2_cred_id_len(const fido_cred_t *cred) { return api.fido_cred_id_len(cred); }
const unsigned char *cfido2_cred_authdata_raw_ptr(const fido_cred_t *cred) { return api.fido_cred_authdata_raw_ptr(cred); }
size_t cfido2_cred_authdata_raw_len(const fido_cred_t *cred) { return api.fido_cred_authdata_raw_len(cred); }
const char *cfido2_cred_fmt(const fido_cred_t *cred) { return api.fido_cred_fmt(cred); }
const unsigned char *cfido2_cred_attstmt_ptr(const fido_cred_t *cred) { return api.fido_cred_attstmt_ptr(cred); }
size_t cfido2_cred_attstmt_len(const fido_cred_t *cred) { return api.fido_cred_attstmt_len(cred); }
