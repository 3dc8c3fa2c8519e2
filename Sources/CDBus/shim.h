// CDBus: libdbus-1, the reference D-Bus library, for Swift.
//
// libdbus takes basic values by address (`const void *`) and hands them back
// the same way; these helpers give each one a typed signature so Swift can
// call them without pointer casts. Nothing here allocates.
#ifndef CDBUS_SHIM_H
#define CDBUS_SHIM_H

#include <dbus/dbus.h>
#include <stdint.h>

static inline dbus_bool_t cdbus_append_string(DBusMessageIter *iter, int type, const char *value) {
    return dbus_message_iter_append_basic(iter, type, &value);
}

static inline dbus_bool_t cdbus_append_bool(DBusMessageIter *iter, dbus_bool_t value) {
    return dbus_message_iter_append_basic(iter, DBUS_TYPE_BOOLEAN, &value);
}

static inline dbus_bool_t cdbus_append_bytes(DBusMessageIter *iter, const uint8_t *bytes, int count) {
    return dbus_message_iter_append_fixed_array(iter, DBUS_TYPE_BYTE, &bytes, count);
}

/// The string or object path the iterator is on (owned by the message).
static inline const char *cdbus_get_string(DBusMessageIter *iter) {
    const char *value = NULL;
    dbus_message_iter_get_basic(iter, &value);
    return value;
}

static inline dbus_bool_t cdbus_get_bool(DBusMessageIter *iter) {
    dbus_bool_t value = FALSE;
    dbus_message_iter_get_basic(iter, &value);
    return value;
}

/// The bytes of the `ay` whose elements the iterator is on (owned by the message).
static inline const uint8_t *cdbus_get_bytes(DBusMessageIter *iter, int *count) {
    const uint8_t *bytes = NULL;
    dbus_message_iter_get_fixed_array(iter, &bytes, count);
    return bytes;
}

#endif
