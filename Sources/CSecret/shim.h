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

/// Bounds every D-Bus call libsecret makes through the shared SecretService
/// proxy (GLib's default is 25 s), so a hung keyring daemon fails a command
/// quickly instead of stalling it.
static inline void csecret_service_set_timeout(SecretService *service, gint milliseconds) {
    g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(service), milliseconds);
}

static inline const char *csecret_error_domain(const GError *error) {
    return g_quark_to_string(error->domain);
}

#endif
