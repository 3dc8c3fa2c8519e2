// CGio: GLib's D-Bus client (gio) for Swift, to talk to the Secret Service
// (org.freedesktop.secrets) directly.
//
// GVariant is built and taken apart with variadic calls (g_variant_new,
// g_variant_get) that Swift cannot make; each helper here is one such call
// for one message shape of the Secret Service API, nothing more.
#ifndef CGIO_SHIM_H
#define CGIO_SHIM_H

#include <gio/gio.h>
#include <string.h>

/// An a{ss} of attributes from parallel arrays of keys and values.
static inline GVariant *cgio_attributes(const char *const *keys, const char *const *values, size_t count) {
    GVariantBuilder builder;
    g_variant_builder_init(&builder, G_VARIANT_TYPE("a{ss}"));
    for (size_t i = 0; i < count; i++) g_variant_builder_add(&builder, "{ss}", keys[i], values[i]);
    return g_variant_builder_end(&builder);
}

/// (sv): OpenSession(algorithm, input), the input a byte array.
static inline GVariant *cgio_open_session_args(const char *algorithm, const guint8 *input, size_t length) {
    GVariant *bytes = g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, input, length, 1);
    return g_variant_new("(sv)", algorithm, bytes);
}

/// (sv): OpenSession("plain", ""): secrets travel as they are.
static inline GVariant *cgio_open_plain_session_args(void) {
    return g_variant_new("(sv)", "plain", g_variant_new_string(""));
}

/// (a{ss}): SearchItems(attributes).
static inline GVariant *cgio_search_args(GVariant *attributes) {
    return g_variant_new("(@a{ss})", attributes);
}

/// (aoo): GetSecrets([item], session).
static inline GVariant *cgio_get_secrets_args(const char *item, const char *session) {
    const char *items[] = {item};
    return g_variant_new("(@aoo)", g_variant_new_objv(items, 1), session);
}

/// (a{sv}(oayays)b): CreateItem(properties, secret, replace=true).
static inline GVariant *cgio_create_item_args(const char *label, GVariant *attributes, const char *session,
                                              const guint8 *parameters, size_t parameters_length,
                                              const guint8 *value, size_t value_length, const char *content_type) {
    GVariantBuilder properties;
    g_variant_builder_init(&properties, G_VARIANT_TYPE("a{sv}"));
    g_variant_builder_add(&properties, "{sv}", "org.freedesktop.Secret.Item.Label", g_variant_new_string(label));
    g_variant_builder_add(&properties, "{sv}", "org.freedesktop.Secret.Item.Attributes", attributes);
    GVariant *secret = g_variant_new("(o@ay@ays)", session,
                                     g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, parameters, parameters_length, 1),
                                     g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, value, value_length, 1),
                                     content_type);
    return g_variant_new("(@a{sv}@(oayays)b)", g_variant_builder_end(&properties), secret, TRUE);
}

/// (s) and (ss): ReadAlias(name), Properties.Get(interface, name).
static inline GVariant *cgio_string_args(const char *value) { return g_variant_new("(s)", value); }
static inline GVariant *cgio_two_strings_args(const char *a, const char *b) { return g_variant_new("(ss)", a, b); }

/// The bytes of an `ay`, or of the `ay` inside a `v`; *length set.
static inline const guint8 *cgio_bytes(GVariant *value, size_t *length) {
    gsize n = 0;
    const guint8 *data = NULL;
    if (g_variant_is_of_type(value, G_VARIANT_TYPE_VARIANT)) {
        GVariant *inner = g_variant_get_variant(value);
        // The reply that owns `value` also owns `inner`'s data.
        if (g_variant_is_of_type(inner, G_VARIANT_TYPE_BYTESTRING)) data = g_variant_get_fixed_array(inner, &n, 1);
        g_variant_unref(inner);
    } else if (g_variant_is_of_type(value, G_VARIANT_TYPE_BYTESTRING)) {
        data = g_variant_get_fixed_array(value, &n, 1);
    }
    *length = n;
    return data;
}

/// Child `index` of a tuple or array (a new reference).
static inline GVariant *cgio_child(GVariant *value, size_t index) { return g_variant_get_child_value(value, index); }

/// How many children a tuple or array has.
static inline size_t cgio_count(GVariant *value) { return g_variant_n_children(value); }

/// The string or object path in `value` (borrowed from it).
static inline const char *cgio_string(GVariant *value) { return g_variant_get_string(value, NULL); }

/// The boolean inside a `v` (Properties.Get's answer), or FALSE.
static inline gboolean cgio_variant_boolean(GVariant *value) {
    GVariant *inner = g_variant_get_variant(value);
    gboolean result = g_variant_is_of_type(inner, G_VARIANT_TYPE_BOOLEAN) && g_variant_get_boolean(inner);
    g_variant_unref(inner);
    return result;
}

/// From GetSecrets' a{o(oayays)}: the secret of `item` as its parameters and
/// value (new references in *parameters and *value); FALSE when absent.
static inline gboolean cgio_secret_of(GVariant *secrets, const char *item, GVariant **parameters, GVariant **value) {
    GVariant *secret = g_variant_lookup_value(secrets, item, G_VARIANT_TYPE("(oayays)"));
    if (secret == NULL) return FALSE;
    *parameters = g_variant_get_child_value(secret, 1);
    *value = g_variant_get_child_value(secret, 2);
    g_variant_unref(secret);
    return TRUE;
}

static inline const char *cgio_error_domain(const GError *error) { return g_quark_to_string(error->domain); }

/// g_dbus_error_get_remote_error: the D-Bus error name, or NULL (free with g_free).
static inline gchar *cgio_remote_error(const GError *error) { return g_dbus_error_get_remote_error(error); }

#endif
