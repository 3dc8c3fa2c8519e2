// CFido2: libfido2 for Swift (security keys: passkey sign-in and
// registration, in cog-cred-cli only).
//
// libfido2 is loaded by dlopen when a passkey is first needed, not linked,
// as libcurl and libsecret are: with libcbor, libudev and libcrypto it
// would cost every command start-up time, and the front never needs it.
// Nothing links libfido2 (Package.swift), so a direct call to it fails to
// link; its header (libfido2-dev) is here for the types and constants.
//
// Besides /dev/hidraw devices, a device path `unix:/path` reaches a
// virtual authenticator over a UNIX stream socket on which every message,
// both ways, is one 64-byte CTAPHID report (cfido2_dev_open says how).
#ifndef CFIDO2_H
#define CFIDO2_H

#include <fido.h>
#include <fido/es256.h>

/// Loads libfido2 (libfido2.so.1, Debian's libfido2-1) and looks up every
/// function used, once per process; 1 when loaded. Every other function
/// here needs it loaded.
int cfido2_load(void);
/// Why cfido2_load failed.
const char *cfido2_load_failure(void);

/// The prefix of a device path that names a UNIX socket.
#define CFIDO2_UNIX_PREFIX "unix:"

/// Opens `path` on `dev`: a libfido2 device path, or `unix:/path/to/socket`
/// (connected once, only when the peer runs as this user or root).
int cfido2_dev_open(fido_dev_t *dev, const char *path);

const char *cfido2_strerr(int code);
fido_dev_t *cfido2_dev_new(void);
void cfido2_dev_free(fido_dev_t **dev);
int cfido2_dev_close(fido_dev_t *dev);
int cfido2_dev_cancel(fido_dev_t *dev);
int cfido2_dev_set_timeout(fido_dev_t *dev, int ms);
bool cfido2_dev_has_pin(const fido_dev_t *dev);
bool cfido2_dev_has_uv(const fido_dev_t *dev);
bool cfido2_dev_is_fido2(const fido_dev_t *dev);
int cfido2_dev_get_retry_count(fido_dev_t *dev, int *retries);
int cfido2_dev_get_touch_begin(fido_dev_t *dev);
int cfido2_dev_get_touch_status(fido_dev_t *dev, int *touched, int ms);
/// GetInfo's maxCredentialCountInList: how many credentials the key takes
/// in one list; 0 when it does not say (CTAP 2.0 keys) or cannot be asked.
uint64_t cfido2_dev_max_credentials_in_list(fido_dev_t *dev);

fido_dev_info_t *cfido2_dev_info_new(size_t count);
void cfido2_dev_info_free(fido_dev_info_t **list, size_t count);
int cfido2_dev_info_manifest(fido_dev_info_t *list, size_t max, size_t *found);
const char *cfido2_dev_info_path(const fido_dev_info_t *list, size_t index);

fido_assert_t *cfido2_assert_new(void);
void cfido2_assert_free(fido_assert_t **assert);
int cfido2_assert_set_rp(fido_assert_t *assert, const char *rp);
int cfido2_assert_set_clientdata(fido_assert_t *assert, const unsigned char *data, size_t length);
int cfido2_assert_allow_cred(fido_assert_t *assert, const unsigned char *id, size_t length);
int cfido2_assert_set_uv(fido_assert_t *assert, fido_opt_t uv);
int cfido2_assert_set_up(fido_assert_t *assert, fido_opt_t up);
int cfido2_dev_get_assert(fido_dev_t *dev, fido_assert_t *assert, const char *pin);
size_t cfido2_assert_count(const fido_assert_t *assert);
const unsigned char *cfido2_assert_id_ptr(const fido_assert_t *assert, size_t index);
size_t cfido2_assert_id_len(const fido_assert_t *assert, size_t index);
const unsigned char *cfido2_assert_user_id_ptr(const fido_assert_t *assert, size_t index);
size_t cfido2_assert_user_id_len(const fido_assert_t *assert, size_t index);
const char *cfido2_assert_user_name(const fido_assert_t *assert, size_t index);
/// The authenticator data as a CBOR byte string (libfido2 1.12 has no raw accessor).
const unsigned char *cfido2_assert_authdata_ptr(const fido_assert_t *assert, size_t index);
size_t cfido2_assert_authdata_len(const fido_assert_t *assert, size_t index);
const unsigned char *cfido2_assert_sig_ptr(const fido_assert_t *assert, size_t index);
size_t cfido2_assert_sig_len(const fido_assert_t *assert, size_t index);

fido_cred_t *cfido2_cred_new(void);
void cfido2_cred_free(fido_cred_t **cred);
int cfido2_cred_set_type(fido_cred_t *cred, int type);
int cfido2_cred_set_clientdata(fido_cred_t *cred, const unsigned char *data, size_t length);
int cfido2_cred_set_rp(fido_cred_t *cred, const char *id, const char *name);
int cfido2_cred_set_user(fido_cred_t *cred, const unsigned char *id, size_t length, const char *name, const char *display_name);
int cfido2_cred_set_rk(fido_cred_t *cred, fido_opt_t rk);
int cfido2_cred_set_uv(fido_cred_t *cred, fido_opt_t uv);
int cfido2_cred_exclude(fido_cred_t *cred, const unsigned char *id, size_t length);
int cfido2_dev_make_cred(fido_dev_t *dev, fido_cred_t *cred, const char *pin);
const unsigned char *cfido2_cred_id_ptr(const fido_cred_t *cred);
size_t cfido2_cred_id_len(const fido_cred_t *cred);
const unsigned char *cfido2_cred_authdata_raw_ptr(const fido_cred_t *cred);
size_t cfido2_cred_authdata_raw_len(const fido_cred_t *cred);
const char *cfido2_cred_fmt(const fido_cred_t *cred);
/// The attestation statement, CBOR-encoded (a map).
const unsigned char *cfido2_cred_attstmt_ptr(const fido_cred_t *cred);
size_t cfido2_cred_attstmt_len(const fido_cred_t *cred);

#endif
