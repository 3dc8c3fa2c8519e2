// libcurl through a table of functions looked up at load (include/CCurl.h
// says why). Nothing here calls libcurl by name.
#include <pthread.h>
#include <sys/socket.h>

#include "CCurl.h"
#include "CLinux.h"

#define LIBRARY "libcurl.so.4"

#define FUNCTIONS(X)                                                                                       \
    X(curl_global_init) X(curl_easy_init) X(curl_easy_cleanup) X(curl_easy_reset) X(curl_easy_perform) X(curl_easy_strerror) \
    X(curl_slist_append) X(curl_slist_free_all) X(curl_easy_setopt) X(curl_easy_getinfo)

CLINUX_LIBRARY_TABLE(FUNCTIONS);
static clinux_library library = CLINUX_LIBRARY_INIT;

static void *load_on_thread(void *unused) {
    ccurl_load();
    return NULL;
}

void ccurl_load_in_background(void) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, load_on_thread, NULL) == 0) pthread_detach(thread);
}

int ccurl_load(void) {
    return CLINUX_LIBRARY_LOAD(library, LIBRARY, NULL) == NULL;
}

const char *ccurl_load_failure(void) {
    return CLINUX_LIBRARY_LOAD(library, LIBRARY, NULL);
}

CURLcode ccurl_global_init(long flags) { return api.curl_global_init(flags); }
CURL *ccurl_easy_init(void) { return api.curl_easy_init(); }
void ccurl_easy_cleanup(CURL *handle) { api.curl_easy_cleanup(handle); }
void ccurl_easy_reset(CURL *handle) { api.curl_easy_reset(handle); }
CURLcode ccurl_easy_perform(CURL *handle) { return api.curl_easy_perform(handle); }
const char *ccurl_easy_strerror(CURLcode code) { return api.curl_easy_strerror(code); }
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *text) { return api.curl_slist_append(list, text); }
void ccurl_slist_free_all(struct curl_slist *list) { api.curl_slist_free_all(list); }

CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value) { return (api.curl_easy_setopt)(handle, option, value); }
CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return (api.curl_easy_setopt)(handle, option, value);
}
CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value) { return (api.curl_easy_setopt)(handle, option, value); }
CURLcode ccurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return (api.curl_easy_setopt)(handle, option, value);
}
CURLcode ccurl_setopt_write_callback(CURL *handle, CURLoption option, ccurl_write_callback value) {
    return (api.curl_easy_setopt)(handle, option, value);
}
CURLcode ccurl_setopt_prereq_callback(CURL *handle, ccurl_prereq_callback value) {
    return (api.curl_easy_setopt)(handle, CURLOPT_PREREQFUNCTION, value);
}
static curl_socket_t open_cloexec_socket(void *context, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)context;
    (void)purpose;
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}
CURLcode ccurl_setopt_cloexec_sockets(CURL *handle) {
    return (api.curl_easy_setopt)(handle, CURLOPT_OPENSOCKETFUNCTION, open_cloexec_socket);
}
CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value) { return (api.curl_easy_getinfo)(handle, info, value); }
