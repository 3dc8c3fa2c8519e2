// CSecret: libsecret for Swift (cog-cred-cli's writes, deletes and unlocks).
//
// libsecret follows the prompts each provider returns (KeePassXC answers
// CreateItem and Delete with one even when its database is open), through
// GLib's main loop inside its synchronous calls. What Swift cannot do
// directly is here: GLib's type-casting macros, the GHashTable and GList
// plumbing, and a call deadline (a GCancellable cancelled from a thread: a
// provider's dialog that nobody answers must fail the command, not hang it).
#ifndef CSECRET_SHIM_H
#define CSECRET_SHIM_H

// The D-Bus path functions (secret-paths.h: an item by its path, for the
// store, which keeps paths) are behind this switch; stable since 0.7.
#define SECRET_API_SUBJECT_TO_CHANGE
#include <libsecret/secret.h>
#include <string.h>

static GLogWriterOutput csecret_drop_log(GLogLevelFlags level, const GLogField *fields, gsize count, gpointer data) {
    return G_LOG_WRITER_HANDLED;
}

/// GLib's and libsecret's own warnings (a provider that answers out of
/// spec makes libsecret log "CRITICAL" lines) are for their developers:
/// cog-cred's stderr carries its own one-line errors only.
static inline void csecret_quiet(void) {
    static gsize done = 0;
    if (g_once_init_enter(&done)) {
        g_log_set_writer_func(csecret_drop_log, NULL, NULL);
        g_once_init_leave(&done, 1);
    }
}

static inline GHashTable *csecret_attributes_new(void) {
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

static inline void csecret_attributes_add(GHashTable *table, const char *name, const char *value) {
    g_hash_table_insert(table, g_strdup(name), g_strdup(value));
}

static inline void csecret_unref(gpointer object) {
    if (object) g_object_unref(object);
}

static gpointer csecret_cancel_later(gpointer data) {
    GCancellable *cancellable = G_CANCELLABLE(data);
    gint64 until = GPOINTER_TO_SIZE(g_object_get_data(G_OBJECT(cancellable), "csecret-until"));
    while (!g_cancellable_is_cancelled(cancellable) && g_get_monotonic_time() < until) g_usleep(10000);
    g_cancellable_cancel(cancellable);
    g_object_unref(cancellable);
    return NULL;
}

/// A GCancellable that cancels itself after `milliseconds`; cancel it
/// yourself when the call is done, then unref it.
static inline GCancellable *csecret_deadline(int milliseconds) {
    GCancellable *cancellable = g_cancellable_new();
    g_object_set_data(G_OBJECT(cancellable), "csecret-until",
                      GSIZE_TO_POINTER((gsize)(g_get_monotonic_time() + (gint64)milliseconds * 1000)));
    g_object_ref(cancellable);  // the thread's
    g_thread_unref(g_thread_new("csecret-deadline", csecret_cancel_later, cancellable));
    return cancellable;
}

/// The service, with a session open (libsecret's shared one).
static inline SecretService *csecret_service(GCancellable *cancellable, GError **error) {
    return secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, cancellable, error);
}

/// The default collection's path (the alias's target: no proxy made); NULL
/// with no error when there is none. Free with g_free.
static inline char *csecret_default_collection(SecretService *service, GCancellable *cancellable, GError **error) {
    char *path = secret_service_read_alias_dbus_path_sync(service, "default", cancellable, error);
    if (path && (strcmp(path, "/") == 0 || path[0] == 0)) {
        g_free(path);
        return NULL;
    }
    return path;
}

/// Creates an item in `collection`; its path, to free with g_free. Never
/// "replace": KeePassXC answers a replacing CreateItem with a dialog even
/// with its confirmations off (headless, one that never closes); the store
/// deletes the old item after writing the new one instead. By path, as
/// every call here: no proxy (and no property round trip) per object.
static inline char *csecret_create(SecretService *service, const char *collection, GHashTable *attributes, const char *label,
                                   const char *secret, GCancellable *cancellable, GError **error) {
    GVariantBuilder builder;
    g_variant_builder_init(&builder, G_VARIANT_TYPE("a{ss}"));
    GHashTableIter iter;
    gpointer name, value;
    g_hash_table_iter_init(&iter, attributes);
    while (g_hash_table_iter_next(&iter, &name, &value)) g_variant_builder_add(&builder, "{ss}", name, value);
    GHashTable *properties = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)g_variant_unref);
    g_hash_table_insert(properties, "org.freedesktop.Secret.Item.Label", g_variant_ref_sink(g_variant_new_string(label)));
    g_hash_table_insert(properties, "org.freedesktop.Secret.Item.Attributes", g_variant_ref_sink(g_variant_builder_end(&builder)));
    SecretValue *secret_value = secret_value_new(secret, -1, "text/plain");
    char *path = secret_service_create_item_dbus_path_sync(service, collection, properties, secret_value, SECRET_ITEM_CREATE_NONE,
                                                           cancellable, error);
    secret_value_unref(secret_value);
    g_hash_table_unref(properties);
    return path;
}

/// The paths of the items whose attributes include these, unlocked and
/// locked (all collections: the caller keeps the default one's). g_strfreev both.
static inline gboolean csecret_search(SecretService *service, GHashTable *attributes, gchar ***unlocked, gchar ***locked,
                                      GCancellable *cancellable, GError **error) {
    return secret_service_search_for_dbus_paths_sync(service, NULL, attributes, cancellable, unlocked, locked, error);
}

static inline gboolean csecret_delete(SecretService *service, const char *path, GCancellable *cancellable, GError **error) {
    return secret_service_delete_item_dbus_path_sync(service, path, cancellable, error);
}

/// Unlocks these objects (the collection first, then items), following the
/// provider's prompt; TRUE when the collection, or every object, is among
/// those unlocked (a service may name only the collection). The read that
/// follows finds out whether any item is still locked.
static inline gboolean csecret_unlock(SecretService *service, const gchar **paths, GCancellable *cancellable, GError **error) {
    gchar **unlocked = NULL;
    gint count = secret_service_unlock_dbus_paths_sync(service, paths, cancellable, &unlocked, error);
    gboolean done = count >= 0 && ((guint)count == g_strv_length((gchar **)paths) ||
                                   (unlocked && g_strv_contains((const gchar *const *)unlocked, paths[0])));
    g_strfreev(unlocked);
    return done;
}

/// The process id of whoever owns org.freedesktop.secrets on the session
/// bus (the bus daemon knows it); 0 when there is none or the bus does not
/// answer within 500 ms.
static inline guint32 csecret_provider_pid(void) {
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, NULL);
    if (!bus) return 0;
    GVariant *reply = g_dbus_connection_call_sync(
        bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
        g_variant_new("(s)", "org.freedesktop.secrets"), G_VARIANT_TYPE("(u)"), G_DBUS_CALL_FLAGS_NONE, 500, NULL, NULL);
    guint32 pid = 0;
    if (reply) {
        g_variant_get(reply, "(u)", &pid);
        g_variant_unref(reply);
    }
    g_object_unref(bus);
    return pid;
}

/// Whether the collection at `path` is locked now (asked of the service:
/// no cached property); -1 when that cannot be told.
static inline int csecret_collection_locked(SecretService *service, const char *path) {
    GDBusConnection *bus = g_dbus_proxy_get_connection(G_DBUS_PROXY(service));
    GVariant *reply = g_dbus_connection_call_sync(
        bus, g_dbus_proxy_get_name(G_DBUS_PROXY(service)), path, "org.freedesktop.DBus.Properties", "Get",
        g_variant_new("(ss)", "org.freedesktop.Secret.Collection", "Locked"), G_VARIANT_TYPE("(v)"), G_DBUS_CALL_FLAGS_NONE,
        1500, NULL, NULL);
    if (!reply) return -1;
    GVariant *value = NULL;
    g_variant_get(reply, "(v)", &value);
    int locked = g_variant_is_of_type(value, G_VARIANT_TYPE_BOOLEAN) ? (g_variant_get_boolean(value) ? 1 : 0) : -1;
    g_variant_unref(value);
    g_variant_unref(reply);
    return locked;
}

#endif
