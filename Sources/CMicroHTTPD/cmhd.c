// libmicrohttpd through a table of functions looked up at load
// (include/CMicroHTTPD.h says why). Nothing here calls it by name.
#include "CMicroHTTPD.h"
#include "CLinux.h"

#define LIBRARY "libmicrohttpd.so.12"

#define FUNCTIONS(X)                                                                                                \
    X(MHD_start_daemon) X(MHD_stop_daemon) X(MHD_get_daemon_info) X(MHD_get_connection_info) \
    X(MHD_get_connection_values) X(MHD_create_response_from_callback) X(MHD_create_response_from_buffer)        \
    X(MHD_add_response_header) X(MHD_queue_response) X(MHD_destroy_response) X(MHD_set_connection_option)        \
    X(MHD_run) X(MHD_get_timeout) X(MHD_suspend_connection) X(MHD_resume_connection) X(MHD_add_connection)

CLINUX_LIBRARY_TABLE(FUNCTIONS);
static clinux_library library = CLINUX_LIBRARY_INIT;

int cmhd_load(void) { return CLINUX_LIBRARY_LOAD(library, LIBRARY, NULL) == NULL; }

const char *cmhd_load_failure(void) { return CLINUX_LIBRARY_LOAD(library, LIBRARY, NULL); }

struct MHD_Daemon *cmhd_start(unsigned int connection_limit, unsigned int idle_seconds,
                              MHD_AcceptPolicyCallback accepts, void *accepts_context,
                              cmhd_request_start started, void *started_context,
                              MHD_AccessHandlerCallback handler, void *handler_context,
                              MHD_RequestCompletedCallback completed, void *completed_context,
                              MHD_NotifyConnectionCallback connections, void *connections_context) {
    // Run by the caller's event loop (cmhd_epoll_fd, cmhd_run), with
    // epoll: a connection waiting on its upstream is suspended, not a
    // thread. Suspending is allowed without libmicrohttpd's inter-thread
    // channel (8192 is MHD_ALLOW_SUSPEND_RESUME less MHD_USE_ITC): every
    // resume comes from the loop's own thread, which runs the daemon
    // next, so no eventfd is written and read for each request.
    // The loops accept for themselves and hand each connection to one
    // daemon in turn (cmhd_add_connection): daemons that shared a listening
    // socket took them unevenly, one often taking all.
    unsigned int flags = MHD_USE_EPOLL | MHD_USE_TURBO | MHD_USE_NO_LISTEN_SOCKET | (MHD_ALLOW_SUSPEND_RESUME & ~MHD_USE_ITC);
    return api.MHD_start_daemon(flags, 0, accepts, accepts_context, handler, handler_context,
                                MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                MHD_OPTION_CONNECTION_TIMEOUT, idle_seconds,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                                MHD_OPTION_NOTIFY_CONNECTION, connections, connections_context,
                                MHD_OPTION_URI_LOG_CALLBACK, started, started_context,
                                MHD_OPTION_END);
}

void cmhd_stop(struct MHD_Daemon *daemon) { api.MHD_stop_daemon(daemon); }

int cmhd_epoll_fd(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = api.MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info ? info->epoll_fd : -1;
}

void cmhd_run(struct MHD_Daemon *daemon) { (void)api.MHD_run(daemon); }

long cmhd_timeout(struct MHD_Daemon *daemon) {
    MHD_UNSIGNED_LONG_LONG milliseconds = 0;
    if (api.MHD_get_timeout(daemon, &milliseconds) != MHD_YES) return -1;
    return milliseconds > 60000 ? 60000 : (long)milliseconds;
}

int cmhd_add_connection(struct MHD_Daemon *daemon, int fd, const struct sockaddr *address, unsigned int length) {
    return api.MHD_add_connection(daemon, fd, address, length) == MHD_YES;
}

void cmhd_suspend(struct MHD_Connection *connection) { api.MHD_suspend_connection(connection); }

void cmhd_resume(struct MHD_Connection *connection) { api.MHD_resume_connection(connection); }

int cmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = api.MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

void cmhd_set_timeout(struct MHD_Connection *connection, unsigned int seconds) {
    (void)api.MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}

void *cmhd_connection_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = api.MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

int cmhd_headers(struct MHD_Connection *connection, MHD_KeyValueIterator each, void *context) {
    return api.MHD_get_connection_values(connection, MHD_HEADER_KIND, each, context);
}

struct MHD_Response *cmhd_response_from_callback(uint64_t size, size_t block, MHD_ContentReaderCallback read, void *context,
                                                 MHD_ContentReaderFreeCallback done) {
    return api.MHD_create_response_from_callback(size, block, read, context, done);
}

struct MHD_Response *cmhd_response_from_copy(size_t size, const void *data) {
    return api.MHD_create_response_from_buffer(size, (void *)data, MHD_RESPMEM_MUST_COPY);
}

int cmhd_add_header(struct MHD_Response *response, const char *name, const char *value) {
    return api.MHD_add_response_header(response, name, value) == MHD_YES;
}

int cmhd_queue(struct MHD_Connection *connection, unsigned int status, struct MHD_Response *response) {
    return api.MHD_queue_response(connection, status, response) == MHD_YES;
}

void cmhd_destroy(struct MHD_Response *response) { api.MHD_destroy_response(response); }
