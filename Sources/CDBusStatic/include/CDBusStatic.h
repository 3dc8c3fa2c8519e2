// CDBusStatic: what a fully static link of libdbus-1 needs besides it.
//
// Debian's libdbus-1.a calls two libsystemd functions, sd_listen_fds and
// sd_is_socket, and only when a D-Bus *server* takes its sockets from
// systemd's socket activation. Debian ships no static libsystemd, so the
// front binary (a client only) defines them here: no sockets are passed.
// It also defines glibc's user and host lookups as "not found":
// stubs.c says why. Compiled by scripts/build only (not a SwiftPM target).
#ifndef CDBUSSTATIC_H
#define CDBUSSTATIC_H
#endif
