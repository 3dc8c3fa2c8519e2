// libsecret through a table of functions looked up when first needed
// (include/CSecret.h says why). Nothing here calls libsecret or GLib by
// name: each call goes through `api`, so the linker never records them.

// The D-Bus path functions (secret-paths.h: an item by its path, for the
// store, which keeps paths) are behind this switch; stable since 0.7.
#define SECRET_API_SUBJECT_TO_CHANGE
// GLib's casts (G_OBJECT() and the like) would call g_type_check_instance_cast.
#define G_DISABLE_CAST_CHECKS
#include <libsecret/secret.h>

#include <pthread.h>
#include <string.h>

#include "CSecret.h"
#include "CLinux.h"

#define LIBRARY "libsecret-1.so.0"

// Every function used, looked up in libsecret and the GLib it loads.
#define FUNCTIONS(X)                                                                                                   \
    X(g_free) X(g_strdup) X(g_strfreev) X(g_strv_length) X(g_strv_contains) X(g_str_hash) X(g_str_equal)              \
    X(g_hash_table_new_full) X(g_hash_table_insert) X(g_hash_table_unref) X(g_hash_table_iter_init)                   \
    X(g_hash_table_iter_next) X(g_log_set_writer_func) X(g_get_monotonic_time) X(g_usleep) X(g_thread_new)           \
    X(g_thread_unref) X(g_error_free) X(g_quark_to_string) X(g_variant_builder_init) X(g_variant_builder_add)          \
    X(g_variant_builder_end) X(g_variant_new_string) X(g_variant_new) X(g_variant_get) X(g_variant_ref_sink)          \
    X(g_variant_unref) X(g_variant_is_of_type) X(g_variant_get_boolean) X(g_object_ref) X(g_object_unref)             \
    X(g_object_get_data) X(g_object_set_data) X(g_cancellable_new) X(g_cancellable_cancel)                            \
    X(g_cancellable_is_cancelled) X(g_io_error_quark) X(g_bus_get_sync) X(g_dbus_connection_call_sync)                \
    X(g_dbus_proxy_get_connection) X(g_dbus_proxy_get_name) X(secret_service_get_sync)                               \
    X(secret_service_read_alias_dbus_path_sync) X(secret_service_create_item_dbus_path_sync)                          \
    X(secret_service_search_for_dbus_paths_sync) X(secret_service_delete_item_dbus_path_sync)                         \
    X(secret_service_unlock_dbus_paths_sync) X(secret_service_disconnect) X(secret_value_new) X(secret_value_unref)  \
    X(secret_error_get_quark) X(secret_service_encode_dbus_secret) X(g_dbus_error_get_remote_error)

CLINUX_LIBRARY_TABLE(FUNCTIONS);
static clinux_library library = CLINUX_LIBRARY_INIT;

static GLogWriterOutput drop_log(GLogLevelFlags level, const GLogField *fields, gsize count, gpointer data) {
    return G_LOG_WRITER_HANDLED;
}

// GLib's and libsecret's own warnings (a provider that answers out of spec
// makes libsecret log "CRITICAL" lines) are for their developers:
// cog-cred's stderr carries its own one-line errors only.
static void quiet(void) {
    api.g_log_set_writer_func(drop_log, NULL, NULL);
}

int csecret_load(void) {
    return CLINUX_LIBRARY_LOAD(library, LIBRARY, quiet) == NULL;
}

const char *csecret_load_failure(void) {
    return CLINUX_LIBRARY_LOAD(library, LIBRARY, quiet);
}

/// Moves a GError into `failure` and frees it.
static void take(GError *error, csecret_failure *failure) {
    if (!error) return;
    failure->set = 1;
    failure->cancelled = error->domain == api.g_io_error_quark() && error->code == G_IO_ERROR_CANCELLED;
    failure->locked = error->domain == api.secret_error_get_quark() && error->code == SECRET_ERROR_IS_LOCKED;
    failure->code = error->code;
    failure->domain = strdup(api.g_quark_to_string(error->domain));
    failure->message = strdup(error->message ? error->message : "");
    api.g_error_free(error);
}

void csecret_failure_clear(csecret_failure *failure) {
    free(failure->domain);
    free(failure->message);
    memset(failure, 0, sizeof *failure);
}

csecret_attributes *csecret_attributes_new(void) {
    return (csecret_attributes *)api.g_hash_table_new_full(api.g_str_hash, api.g_str_equal, api.g_free, api.g_free);
}

void csecret_attributes_add(csecret_attributes *attributes, const char *name, const char *value) {
    api.g_hash_table_insert((GHashTable *)attributes, api.g_strdup(name), api.g_strdup(value));
}

void csecret_attributes_free(csecret_attributes *attributes) {
    api.g_hash_table_unref((GHashTable *)attributes);
}

static gpointer cancel_later(gpointer data) {
    GCancellable *cancellable = data;
    gint64 until = GPOINTER_TO_SIZE(api.g_object_get_data(G_OBJECT(cancellable), "csecret-until"));
    while (!api.g_cancellable_is_cancelled(cancellable) && api.g_get_monotonic_time() < until) api.g_usleep(10000);
    api.g_cancellable_cancel(cancellable);
    api.g_object_unref(cancellable);
    return NULL;
}

csecret_deadline *csecret_deadline_start(int milliseconds) {
    GCancellable *cancellable = api.g_cancellable_new();
    api.g_object_set_data(G_OBJECT(cancellable), "csecret-until",
                          GSIZE_TO_POINTER((gsize)(api.g_get_monotonic_time() + (gint64)milliseconds * 1000)));
    (api.g_object_ref)(cancellable);  // the thread's
    api.g_thread_unref(api.g_thread_new("csecret-deadline", cancel_later, cancellable));
    return (csecret_deadline *)cancellable;
}

void csecret_deadline_end(csecret_deadline *deadline) {
    api.g_cancellable_cancel((GCancellable *)deadline);
    api.g_object_unref(deadline);
}

csecret_service *csecret_service_open(csecret_deadline *deadline, csecret_failure *failure) {
    GError *error = NULL;
    SecretService *service = api.secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, (GCancellable *)deadline, &error);
    take(error, failure);
    return (csecret_service *)service;
}

void csecret_service_close(csecret_service *service) {
    if (service) api.g_object_unref(service);
    api.secret_service_disconnect();
}

char *csecret_default_collection(csecret_service *service, csecret_deadline *deadline, csecret_failure *failure) {
    GError *error = NULL;
    char *path =
        api.secret_service_read_alias_dbus_path_sync((SecretService *)service, "default", (GCancellable *)deadline, &error);
    take(error, failure);
    if (path && (strcmp(path, "/") == 0 || path[0] == 0)) {
        api.g_free(path);
        return NULL;
    }
    return path;
}

char *csecret_create(csecret_service *service, const char *collection, csecret_attributes *attributes, const char *label,
                     const char *secret, int replace, csecret_deadline *deadline, csecret_failure *failure) {
    GVariantBuilder builder;
    api.g_variant_builder_init(&builder, (const GVariantType *)"a{ss}");
    GHashTableIter iter;
    gpointer name, value;
    api.g_hash_table_iter_init(&iter, (GHashTable *)attributes);
    while (api.g_hash_table_iter_next(&iter, &name, &value)) api.g_variant_builder_add(&builder, "{ss}", name, value);
    GHashTable *properties = api.g_hash_table_new_full(api.g_str_hash, api.g_str_equal, NULL, (GDestroyNotify)api.g_variant_unref);
    api.g_hash_table_insert(properties, "org.freedesktop.Secret.Item.Label",
                            api.g_variant_ref_sink(api.g_variant_new_string(label)));
    api.g_hash_table_insert(properties, "org.freedesktop.Secret.Item.Attributes",
                            api.g_variant_ref_sink(api.g_variant_builder_end(&builder)));
    SecretValue *secret_value = api.secret_value_new(secret, -1, "text/plain");
    GError *error = NULL;
    char *path = api.secret_service_create_item_dbus_path_sync(
        (SecretService *)service, collection, properties, secret_value,
        replace ? SECRET_ITEM_CREATE_REPLACE : SECRET_ITEM_CREATE_NONE, (GCancellable *)deadline, &error);
    api.secret_value_unref(secret_value);
    api.g_hash_table_unref(properties);
    take(error, failure);
    return path;
}

int csecret_search(csecret_service *service, csecret_attributes *attributes, char ***unlocked, char ***locked,
                   csecret_deadline *deadline, csecret_failure *failure) {
    GError *error = NULL;
    gboolean done = api.secret_service_search_for_dbus_paths_sync((SecretService *)service, NULL, (GHashTable *)attributes,
                                                                  (GCancellable *)deadline, unlocked, locked, &error);
    take(error, failure);
    return done;
}

int csecret_delete(csecret_service *service, const char *path, csecret_deadline *deadline, csecret_failure *failure) {
    GError *error = NULL;
    gboolean done = api.secret_service_delete_item_dbus_path_sync((SecretService *)service, path, (GCancellable *)deadline, &error);
    take(error, failure);
    return done;
}

int csecret_unlock(csecret_service *service, const char **paths, csecret_deadline *deadline, csecret_failure *failure) {
    gchar **unlocked = NULL;
    GError *error = NULL;
    gint count = api.secret_service_unlock_dbus_paths_sync((SecretService *)service, paths, (GCancellable *)deadline,
                                                          &unlocked, &error);
    take(error, failure);
    gboolean done = count >= 0 && ((guint)count == api.g_strv_length((gchar **)paths) ||
                                   (unlocked && api.g_strv_contains((const gchar *const *)unlocked, paths[0])));
    api.g_strfreev(unlocked);
    return done;
}

int csecret_collection_locked(csecret_service *service, const char *path) {
    GDBusConnection *bus = api.g_dbus_proxy_get_connection(G_DBUS_PROXY(service));
    GVariant *reply = api.g_dbus_connection_call_sync(
        bus, api.g_dbus_proxy_get_name(G_DBUS_PROXY(service)), path, "org.freedesktop.DBus.Properties", "Get",
        api.g_variant_new("(ss)", "org.freedesktop.Secret.Collection", "Locked"), (const GVariantType *)"(v)",
        G_DBUS_CALL_FLAGS_NONE, 1500, NULL, NULL);
    if (!reply) return -1;
    GVariant *value = NULL;
    api.g_variant_get(reply, "(v)", &value);
    int locked = api.g_variant_is_of_type(value, G_VARIANT_TYPE_BOOLEAN) ? (api.g_variant_get_boolean(value) ? 1 : 0) : -1;
    api.g_variant_unref(value);
    api.g_variant_unref(reply);
    return locked;
}

int csecret_unlock_with_password(csecret_service *service, const char *collection, const char *password, long length,
                                 csecret_deadline *deadline, csecret_failure *failure) {
    // Copied into libsecret's secure memory, and encrypted for the session
    // libsecret opened (dh-ietf1024-sha256-aes128-cbc-pkcs7 where the
    // service offers it, as for every secret cog-cred-cli sends).
    SecretValue *value = api.secret_value_new(password, length, "text/plain");
    GVariant *secret = api.secret_service_encode_dbus_secret((SecretService *)service, value);
    api.secret_value_unref(value);
    if (!secret) {
        failure->set = 1;
        failure->domain = strdup("cog-cred");
        failure->message = strdup("libsecret could not encode the password for the session");
        return 0;
    }
    GDBusConnection *bus = api.g_dbus_proxy_get_connection(G_DBUS_PROXY(service));
    GError *error = NULL;
    GVariant *reply = api.g_dbus_connection_call_sync(
        bus, api.g_dbus_proxy_get_name(G_DBUS_PROXY(service)), "/org/freedesktop/secrets",
        "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface", "UnlockWithMasterPassword",
        api.g_variant_new("(o@(oayays))", collection, secret), NULL, G_DBUS_CALL_FLAGS_NONE, -1,
        (GCancellable *)deadline, &error);
    if (reply) {
        api.g_variant_unref(reply);
        return CSECRET_PASSWORD_UNLOCKED;
    }
    gchar *remote = error ? api.g_dbus_error_get_remote_error(error) : NULL;
    int outcome = 0;
    if (remote && strcmp(remote, "org.gnome.keyring.Error.Denied") == 0) {
        outcome = CSECRET_PASSWORD_DENIED;
    } else if (remote && (strcmp(remote, "org.freedesktop.DBus.Error.UnknownMethod") == 0 ||
                          strcmp(remote, "org.freedesktop.DBus.Error.UnknownInterface") == 0 ||
                          strcmp(remote, "org.freedesktop.DBus.Error.UnknownObject") == 0 ||
                          strcmp(remote, "org.freedesktop.DBus.Error.NotSupported") == 0)) {
        outcome = CSECRET_PASSWORD_NOT_SUPPORTED;
    }
    api.g_free(remote);
    if (outcome) {
        api.g_error_free(error);
        return outcome;
    }
    take(error, failure);
    return 0;
}

unsigned int csecret_provider_pid(void) {
    if (!csecret_load()) return 0;
    GDBusConnection *bus = api.g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, NULL);
    if (!bus) return 0;
    GVariant *reply = api.g_dbus_connection_call_sync(
        bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
        api.g_variant_new("(s)", "org.freedesktop.secrets"), (const GVariantType *)"(u)", G_DBUS_CALL_FLAGS_NONE, 500, NULL,
        NULL);
    guint32 pid = 0;
    if (reply) {
        api.g_variant_get(reply, "(u)", &pid);
        api.g_variant_unref(reply);
    }
    api.g_object_unref(bus);
    return pid;
}

void csecret_free(void *memory) {
    api.g_free(memory);
}

void csecret_strfreev(char **list) {
    api.g_strfreev(list);
}
