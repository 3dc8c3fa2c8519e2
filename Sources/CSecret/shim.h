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

/// The D-Bus object path of a SecretItem or SecretCollection.
static inline const char *csecret_path(gpointer proxy) {
    return g_dbus_proxy_get_object_path(G_DBUS_PROXY(proxy));
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

static inline SecretCollection *csecret_default_collection(SecretService *service, GCancellable *cancellable, GError **error) {
    return secret_collection_for_alias_sync(service, SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_NONE, cancellable, error);
}

/// Creates an item; its path, to free with g_free. Never "replace": KeePassXC
/// answers a replacing CreateItem with a dialog even with its confirmations
/// off (headless, one that never closes); the store deletes the old item
/// after writing the new one instead.
static inline char *csecret_create(SecretCollection *collection, GHashTable *attributes, const char *label, const char *secret,
                                   GCancellable *cancellable, GError **error) {
    SecretValue *value = secret_value_new(secret, -1, "text/plain");
    SecretItem *item = secret_item_create_sync(collection, NULL, attributes, label, value, SECRET_ITEM_CREATE_NONE,
                                               cancellable, error);
    secret_value_unref(value);
    if (!item) return NULL;
    char *path = g_strdup(csecret_path(item));
    g_object_unref(item);
    return path;
}

/// The items of the default collection whose attributes include these, locked or not.
static inline GList *csecret_search(SecretCollection *collection, GHashTable *attributes, GCancellable *cancellable,
                                    GError **error) {
    return secret_collection_search_sync(collection, NULL, attributes, SECRET_SEARCH_ALL, cancellable, error);
}

static inline gboolean csecret_delete(SecretService *service, const char *path, GCancellable *cancellable, GError **error) {
    SecretItem *item = secret_item_new_for_dbus_path_sync(service, path, SECRET_ITEM_NONE, cancellable, error);
    if (!item) return FALSE;
    gboolean deleted = secret_item_delete_sync(item, cancellable, error);
    g_object_unref(item);
    return deleted;
}

/// Unlocks the collection and the items matching `attributes` (both
/// following the provider's prompt); TRUE when nothing stays locked.
static inline gboolean csecret_unlock(SecretService *service, SecretCollection *collection, GHashTable *attributes,
                                      GCancellable *cancellable, GError **error) {
    GList *objects = g_list_prepend(NULL, g_object_ref(collection));
    GList *items = secret_collection_search_sync(collection, NULL, attributes, SECRET_SEARCH_ALL, cancellable, NULL);
    for (GList *each = items; each; each = each->next) {
        if (secret_item_get_locked(each->data)) objects = g_list_append(objects, g_object_ref(each->data));
    }
    g_list_free_full(items, g_object_unref);
    GList *unlocked = NULL;
    gint count = secret_service_unlock_sync(service, objects, cancellable, &unlocked, error);
    gboolean all = count >= 0 && (guint)count == g_list_length(objects);
    g_list_free_full(unlocked, g_object_unref);
    g_list_free_full(objects, g_object_unref);
    return all;
}

static inline gboolean csecret_is_locked(gpointer item) { return secret_item_get_locked(SECRET_ITEM(item)); }

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

/// Whether the default collection is locked now (a fresh proxy: no cached
/// property); -1 when that cannot be told.
static inline int csecret_default_collection_locked(SecretService *service) {
    SecretCollection *collection = secret_collection_for_alias_sync(service, SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_NONE,
                                                                     NULL, NULL);
    if (!collection) return -1;
    int locked = secret_collection_get_locked(collection) ? 1 : 0;
    g_object_unref(collection);
    return locked;
}

#endif
