// libcurl through a table of functions looked up at load (include/CCurl.h
// says why). Nothing here calls libcurl by name.
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "CCurl.h"
#include "CLinux.h"

#define LIBRARY "libcurl.so.4"

#define FUNCTIONS(X)                                                                                       \
    X(curl_global_init) X(curl_easy_init) X(curl_easy_cleanup) X(curl_easy_reset) X(curl_easy_perform) X(curl_easy_strerror) \
    X(curl_slist_append) X(curl_slist_free_all) X(curl_easy_setopt) X(curl_easy_getinfo) X(curl_share_init)              \
    X(curl_share_setopt) X(curl_share_cleanup) X(curl_url) X(curl_url_cleanup) X(curl_url_set) X(curl_url_get)         \
    X(curl_url_strerror) X(curl_free) X(curl_easy_pause) X(curl_multi_init) X(curl_multi_cleanup) X(curl_multi_add_handle) \
    X(curl_multi_remove_handle) X(curl_multi_setopt) X(curl_multi_socket_action) X(curl_multi_info_read)

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

struct ccurl_share {
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

static void lock_share(CURL *handle, curl_lock_data data, curl_lock_access access, void *context) {
    (void)handle;
    (void)access;
    pthread_mutex_lock(&((ccurl_share *)context)->locks[data]);
}

static void unlock_share(CURL *handle, curl_lock_data data, void *context) {
    (void)handle;
    pthread_mutex_unlock(&((ccurl_share *)context)->locks[data]);
}

ccurl_share *ccurl_share_new(void) {
    ccurl_share *shared = calloc(1, sizeof *shared);
    if (!shared) return NULL;
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&shared->locks[i], NULL);
    shared->share = api.curl_share_init();
    if (!shared->share || (api.curl_share_setopt)(shared->share, CURLSHOPT_USERDATA, shared) != CURLSHE_OK ||
        (api.curl_share_setopt)(shared->share, CURLSHOPT_LOCKFUNC, lock_share) != CURLSHE_OK ||
        (api.curl_share_setopt)(shared->share, CURLSHOPT_UNLOCKFUNC, unlock_share) != CURLSHE_OK ||
        (api.curl_share_setopt)(shared->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK ||
        (api.curl_share_setopt)(shared->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK) {
        ccurl_share_free(shared);
        return NULL;
    }
    return shared;
}

void ccurl_share_free(ccurl_share *shared) {
    if (!shared) return;
    if (shared->share) api.curl_share_cleanup(shared->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&shared->locks[i]);
    free(shared);
}

CURLcode ccurl_setopt_share(CURL *handle, ccurl_share *shared) {
    return (api.curl_easy_setopt)(handle, CURLOPT_SHARE, shared->share);
}

CURLU *ccurl_url(void) { return api.curl_url(); }
void ccurl_url_cleanup(CURLU *url) { api.curl_url_cleanup(url); }
CURLUcode ccurl_url_set(CURLU *url, CURLUPart part, const char *content, unsigned int flags) {
    return api.curl_url_set(url, part, content, flags);
}
CURLUcode ccurl_url_get(CURLU *url, CURLUPart part, char **content, unsigned int flags) {
    return api.curl_url_get(url, part, content, flags);
}
const char *ccurl_url_strerror(CURLUcode code) { return api.curl_url_strerror(code); }
void ccurl_free(void *pointer) { api.curl_free(pointer); }

CURLcode ccurl_easy_pause(CURL *handle, int how) { return api.curl_easy_pause(handle, how); }
CURLM *ccurl_multi_init(void) { return api.curl_multi_init(); }
void ccurl_multi_cleanup(CURLM *multi) { api.curl_multi_cleanup(multi); }
CURLMcode ccurl_multi_add(CURLM *multi, CURL *handle) { return api.curl_multi_add_handle(multi, handle); }
CURLMcode ccurl_multi_remove(CURLM *multi, CURL *handle) { return api.curl_multi_remove_handle(multi, handle); }
CURLMcode ccurl_multi_watch(CURLM *multi, ccurl_socket_callback socket, ccurl_timer_callback timer, void *context) {
    CURLMcode result = api.curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, socket);
    if (result == CURLM_OK) result = api.curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, context);
    if (result == CURLM_OK) result = api.curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, timer);
    if (result == CURLM_OK) result = api.curl_multi_setopt(multi, CURLMOPT_TIMERDATA, context);
    return result;
}
CURLMcode ccurl_multi_keep(CURLM *multi, long connections) {
    return api.curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, connections);
}
CURLMcode ccurl_multi_socket_action(CURLM *multi, curl_socket_t s, int events, int *running) {
    return api.curl_multi_socket_action(multi, s, events, running);
}
CURL *ccurl_multi_finished(CURLM *multi, CURLcode *result) {
    int left = 0;
    for (CURLMsg *message = api.curl_multi_info_read(multi, &left); message; message = api.curl_multi_info_read(multi, &left)) {
        if (message->msg == CURLMSG_DONE) {
            *result = message->data.result;
            return message->easy_handle;
        }
    }
    return NULL;
}
