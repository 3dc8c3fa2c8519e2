// CSecret: libsecret and glib for Swift.
//
// Swift cannot call C functions that take `...`, and libsecret's convenient
// calls all do. These helpers build the GHashTable of attributes and the
// schema that the `v` variants (secret_password_storev_sync and friends) take,
// so the Swift side never touches glib's hash and equality function pointers.
#ifndef CSECRET_SHIM_H
#define CSECRET_SHIM_H

#include <libsecret/secret.h>
#include <glib.h>

/// A new attribute table that owns copies of its keys and values.
static inline GHashTable *csecret_attributes_new(void) {
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

static inline void csecret_attributes_insert(GHashTable *table, const char *key, const char *value) {
    g_hash_table_insert(table, g_strdup(key), g_strdup(value));
}

/// A table of attribute name -> SECRET_SCHEMA_ATTRIBUTE_STRING for secret_schema_newv.
static inline GHashTable *csecret_schema_types_new(void) {
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

static inline void csecret_schema_types_add_string(GHashTable *table, const char *name) {
    g_hash_table_insert(table, g_strdup(name), GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING));
}

static inline void csecret_hash_table_unref(GHashTable *table) {
    g_hash_table_unref(table);
}

static inline void csecret_object_unref(gpointer object) {
    g_object_unref(object);
}

/// A watchdog that cancels a GCancellable when a deadline passes, so that
/// libsecret's synchronous calls (which wait up to GLib's 25 s default for a
/// D-Bus answer, and longer for a stuck proxy set-up) fail fast when the
/// keyring daemon hangs. One short-lived thread per guarded call.
typedef struct {
    GMutex lock;
    GCond cond;
    gboolean done;
    gint64 deadline;
    GCancellable *cancellable;
    GThread *thread;
} CSecretWatchdog;

static inline gpointer csecret_watchdog_run(gpointer data) {
    CSecretWatchdog *w = data;
    g_mutex_lock(&w->lock);
    while (!w->done) {
        if (!g_cond_wait_until(&w->cond, &w->lock, w->deadline)) {
            if (!w->done) g_cancellable_cancel(w->cancellable);
            break;
        }
    }
    g_mutex_unlock(&w->lock);
    return NULL;
}

static inline CSecretWatchdog *csecret_watchdog_start(gint milliseconds) {
    CSecretWatchdog *w = g_new0(CSecretWatchdog, 1);
    g_mutex_init(&w->lock);
    g_cond_init(&w->cond);
    w->cancellable = g_cancellable_new();
    w->deadline = g_get_monotonic_time() + (gint64)milliseconds * 1000;
    w->thread = g_thread_new("cog-cred-watchdog", csecret_watchdog_run, w);
    return w;
}

static inline GCancellable *csecret_watchdog_cancellable(CSecretWatchdog *w) {
    return w->cancellable;
}

/// Stops the watchdog; returns TRUE when it had fired (the call was cancelled).
static inline gboolean csecret_watchdog_stop(CSecretWatchdog *w) {
    g_mutex_lock(&w->lock);
    w->done = TRUE;
    g_cond_signal(&w->cond);
    g_mutex_unlock(&w->lock);
    g_thread_join(w->thread);
    gboolean fired = g_cancellable_is_cancelled(w->cancellable);
    g_object_unref(w->cancellable);
    g_mutex_clear(&w->lock);
    g_cond_clear(&w->cond);
    g_free(w);
    return fired;
}

static inline const char *csecret_error_domain(const GError *error) {
    return g_quark_to_string(error->domain);
}

#endif
