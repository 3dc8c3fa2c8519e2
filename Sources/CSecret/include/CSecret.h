// CSecret: libsecret for Swift (cog-cred-cli's writes, deletes and unlocks).
//
// libsecret follows the prompts each provider returns (KeePassXC answers
// CreateItem and Delete with one even when its database is open), through
// GLib's main loop inside its synchronous calls. This shim gives Swift the
// few calls cog-cred makes, by D-Bus path, with a deadline on each (a
// provider's dialog that nobody answers must fail the command, not hang
// it), and no GLib type in sight.
//
// libsecret is loaded when first needed (dlopen), not linked: it brings
// GLib, GIO and libgcrypt, whose loading cost every command of cog-cred-cli
// about 3 ms at start-up, commands that never write included. A write loads
// it on the thread that opens the session while Cognito answers
// (LibsecretWriter.prepare). Nothing links libsecret (Package.swift names
// its headers only), so a direct call to it or GLib fails to link.
#ifndef CSECRET_H
#define CSECRET_H

/// Loads libsecret (libsecret-1.so.0, what Debian's libsecret-1-0 installs)
/// and looks up every function used, once per process; 1 when it is
/// loaded. Every other function here needs it loaded.
int csecret_load(void);
/// Why csecret_load failed.
const char *csecret_load_failure(void);

typedef struct csecret_service csecret_service;       // libsecret's SecretService
typedef struct csecret_deadline csecret_deadline;     // a GCancellable that cancels itself
typedef struct csecret_attributes csecret_attributes; // a GHashTable of strings

/// A failed call: GLib's error domain, code and message (csecret_failure_clear frees them).
typedef struct {
    int set;
    /// The call's deadline passed.
    int cancelled;
    /// The Secret Service said the object is locked.
    int locked;
    int code;
    char *domain;
    char *message;
} csecret_failure;
void csecret_failure_clear(csecret_failure *failure);

csecret_attributes *csecret_attributes_new(void);
void csecret_attributes_add(csecret_attributes *attributes, const char *name, const char *value);
void csecret_attributes_free(csecret_attributes *attributes);

/// A deadline `milliseconds` from now for the calls it is given to; end it
/// when they are done.
csecret_deadline *csecret_deadline_start(int milliseconds);
void csecret_deadline_end(csecret_deadline *deadline);

/// libsecret's shared service, with a session open; NULL on failure.
csecret_service *csecret_service_open(csecret_deadline *deadline, csecret_failure *failure);
/// Drops the service (its connection and session): the next open makes new ones.
void csecret_service_close(csecret_service *service);

/// The default collection's path; NULL with no failure when there is none.
/// Free with csecret_free.
char *csecret_default_collection(csecret_service *service, csecret_deadline *deadline, csecret_failure *failure);

/// Creates an item in `collection`, or with `replace` updates the one with
/// exactly these attributes in place; its path (csecret_free), NULL on failure.
char *csecret_create(csecret_service *service, const char *collection, csecret_attributes *attributes, const char *label,
                     const char *secret, int replace, csecret_deadline *deadline, csecret_failure *failure);

/// The paths of the items whose attributes include these, unlocked and
/// locked (all collections); csecret_strfreev both. 0 on failure.
int csecret_search(csecret_service *service, csecret_attributes *attributes, char ***unlocked, char ***locked,
                   csecret_deadline *deadline, csecret_failure *failure);

/// 0 on failure.
int csecret_delete(csecret_service *service, const char *path, csecret_deadline *deadline, csecret_failure *failure);

/// Unlocks these objects (the collection first, then items; NULL-terminated),
/// following the provider's prompt; 1 when the collection, or every object,
/// is among those unlocked (a service may name only the collection).
int csecret_unlock(csecret_service *service, const char **paths, csecret_deadline *deadline, csecret_failure *failure);

/// What gnome-keyring said to a password (csecret_unlock_with_password).
/// The collection is unlocked (or already was).
#define CSECRET_PASSWORD_UNLOCKED 1
/// The password was wrong: the collection stays locked.
#define CSECRET_PASSWORD_DENIED 2
/// The service has no such method: not gnome-keyring.
#define CSECRET_PASSWORD_NOT_SUPPORTED 3
/// Unlocks `collection` with its password, without a prompt, through
/// gnome-keyring's own interface on the service's path
/// (org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface.
/// UnlockWithMasterPassword, what its own tools use), the password sent as
/// a Secret of libsecret's session. One of the CSECRET_PASSWORD_ values, or
/// 0 on another failure (in `failure`).
int csecret_unlock_with_password(csecret_service *service, const char *collection, const char *password, long length,
                                 csecret_deadline *deadline, csecret_failure *failure);

/// Whether the collection at `path` is locked now (asked of the service:
/// no cached property); -1 when that cannot be told.
int csecret_collection_locked(csecret_service *service, const char *path);

/// The process id of whoever owns org.freedesktop.secrets on the session
/// bus (the bus daemon knows it); 0 when there is none, the bus does not
/// answer within 500 ms, or libsecret cannot be loaded.
unsigned int csecret_provider_pid(void);

void csecret_free(void *memory);
void csecret_strfreev(char **list);

#endif
