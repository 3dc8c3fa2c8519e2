// CMicroHTTPD: libmicrohttpd, the HTTP/1.1 server under `cog-cred proxy`.
//
// MHD_start_daemon and MHD_get_connection_info are variadic, which Swift
// cannot call: the wrappers here give them fixed signatures. Like libcurl
// (CCurl.h), libmicrohttpd is loaded by dlopen the first time the proxy
// starts, not linked: no other command pays for its loading, and a system
// without it (Debian's libmicrohttpd12) lacks only `proxy`. Its header
// (libmicrohttpd-dev) is here for the types and constants.
#ifndef CMICROHTTPD_H
#define CMICROHTTPD_H

#include <stdint.h>
#include <sys/types.h>
#include <microhttpd.h>

/// Loads libmicrohttpd (libmicrohttpd.so.12); 1 when loaded. Every other
/// function here needs it loaded.
int cmhd_load(void);
/// Why cmhd_load failed.
const char *cmhd_load_failure(void);

/// Called with each request's target as the client sent it (path and
/// query, undecoded), before its headers are read; what it returns is the
/// request's context (`*con_cls` in the handler).
typedef void *(*cmhd_request_start)(void *context, const char *target, struct MHD_Connection *connection);

/// A server of the connections cmhd_add_connection gives it, run by the
/// caller's event loop: at most `connection_limit` connections, each
/// closed after `idle_seconds` without traffic. NULL when it cannot start.
struct MHD_Daemon *cmhd_start(unsigned int connection_limit, unsigned int idle_seconds,
                              MHD_AcceptPolicyCallback accepts, void *accepts_context,
                              cmhd_request_start started, void *started_context,
                              MHD_AccessHandlerCallback handler, void *handler_context,
                              MHD_RequestCompletedCallback completed, void *completed_context,
                              MHD_NotifyConnectionCallback connections, void *connections_context);
/// Stops, closing every connection.
void cmhd_stop(struct MHD_Daemon *daemon);
/// Serves a connection the caller accepted (non-blocking), on the loop's
/// thread; 0 when refused (at the limit, or by `accepts`): it is closed.
int cmhd_add_connection(struct MHD_Daemon *daemon, int fd, const struct sockaddr *address, unsigned int length);
/// The daemon's epoll descriptor: readable when cmhd_run has work.
int cmhd_epoll_fd(struct MHD_Daemon *daemon);
/// Does what is ready (accepts, reads, calls the handlers, sends), without waiting.
void cmhd_run(struct MHD_Daemon *daemon);
/// Milliseconds until cmhd_run must run again (a connection's timeout, or
/// 0: work is pending), at most a minute; -1: none.
long cmhd_timeout(struct MHD_Daemon *daemon);
/// Takes the connection out of the loop until cmhd_resume (called on the
/// loop's thread, before its next cmhd_run): its request waits on the upstream.
void cmhd_suspend(struct MHD_Connection *connection);
void cmhd_resume(struct MHD_Connection *connection);

/// The connection's socket.
int cmhd_connection_fd(struct MHD_Connection *connection);
/// Closes the connection after `seconds` without traffic (instead of the daemon's).
void cmhd_set_timeout(struct MHD_Connection *connection, unsigned int seconds);
/// What the connections callback set for the connection (its `socket_context`).
void *cmhd_connection_context(struct MHD_Connection *connection);
/// Calls `each` with every request header (MHD_HEADER_KIND) in order.
int cmhd_headers(struct MHD_Connection *connection, MHD_KeyValueIterator each, void *context);

/// A response whose body `read` gives as it comes (`size`: MHD_SIZE_UNKNOWN
/// for chunked), in blocks of up to `block` bytes.
struct MHD_Response *cmhd_response_from_callback(uint64_t size, size_t block, MHD_ContentReaderCallback read, void *context,
                                                 MHD_ContentReaderFreeCallback done);
/// A response with a body of `size` bytes, copied.
struct MHD_Response *cmhd_response_from_copy(size_t size, const void *data);
int cmhd_add_header(struct MHD_Response *response, const char *name, const char *value);
int cmhd_queue(struct MHD_Connection *connection, unsigned int status, struct MHD_Response *response);
void cmhd_destroy(struct MHD_Response *response);

#endif
