// CCurl: libcurl for Swift.
//
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot
// call. These typed wrappers give each kind of option its own signature, so a
// wrong argument type is a compile error rather than undefined behaviour.
//
// libcurl is loaded by dlopen, not linked: with the libraries it brings
// (33, TLS, LDAP, Kerberos, SSH among them) its loading costs about 5 ms,
// which every command of cog-cred-cli paid at start-up before doing
// anything, commands that never go to the network included.
// `ccurl_load_in_background` starts the load on a thread as the command
// starts; the first call here waits for it. Nothing links libcurl
// (Package.swift), so a direct call to it fails to link; its header is
// here for the types and constants.
#ifndef CCURL_H
#define CCURL_H

#include <curl/curl.h>

/// Starts loading libcurl (libcurl.so.4, Debian's libcurl4) on a thread.
void ccurl_load_in_background(void);
/// Loads libcurl (or waits for the load under way); 1 when it is loaded.
/// Every other function here needs it loaded.
int ccurl_load(void);
/// Why ccurl_load failed.
const char *ccurl_load_failure(void);

CURLcode ccurl_global_init(long flags);
CURL *ccurl_easy_init(void);
void ccurl_easy_cleanup(CURL *handle);
/// Every option back to its default; the handle's connections and TLS
/// sessions are kept.
void ccurl_easy_reset(CURL *handle);
CURLcode ccurl_easy_perform(CURL *handle);
const char *ccurl_easy_strerror(CURLcode code);
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *text);
void ccurl_slist_free_all(struct curl_slist *list);

typedef size_t (*ccurl_write_callback)(char *data, size_t size, size_t count, void *context);
/// Called once a connection is ready, before each time the request is sent
/// on it (libcurl >= 7.80): CURL_PREREQFUNC_ABORT stops the transfer.
typedef int (*ccurl_prereq_callback)(void *context, char *primary_ip, char *local_ip, int primary_port, int local_port);

CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode ccurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode ccurl_setopt_write_callback(CURL *handle, CURLoption option, ccurl_write_callback value);
CURLcode ccurl_setopt_prereq_callback(CURL *handle, ccurl_prereq_callback value);
/// Has libcurl open its sockets close-on-exec (CURLOPT_OPENSOCKETFUNCTION):
/// a kept connection must not live on in a program cog-cred starts (exec's
/// command, the browser, qrencode).
CURLcode ccurl_setopt_cloexec_sockets(CURL *handle);
CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value);

/// A share of DNS lookups and TLS sessions between easy handles used on
/// several threads at once, with a lock for each kind of data (libcurl's
/// share interface). Connections are not shared: libcurl 7.88, Debian 12's,
/// documents sharing them between concurrent threads as unsafe. NULL when
/// libcurl refused it.
typedef struct ccurl_share ccurl_share;
ccurl_share *ccurl_share_new(void);
/// Frees the share, once no handle uses it any more.
void ccurl_share_free(ccurl_share *share);
CURLcode ccurl_setopt_share(CURL *handle, ccurl_share *share);

/// libcurl's URL API (curl_url, curl_url_set, curl_url_get): URLs parsed
/// and rebuilt by the parser that sends them.
CURLU *ccurl_url(void);
void ccurl_url_cleanup(CURLU *url);
CURLUcode ccurl_url_set(CURLU *url, CURLUPart part, const char *content, unsigned int flags);
/// `*content` is libcurl's, freed with ccurl_free.
CURLUcode ccurl_url_get(CURLU *url, CURLUPart part, char **content, unsigned int flags);
const char *ccurl_url_strerror(CURLUcode code);
void ccurl_free(void *pointer);

/// The multi interface with libcurl's socket API (curl_multi_socket_action),
/// for transfers run by an event loop of the caller's (`cog-cred proxy`:
/// many transfers on one thread, each streamed while its client is served).
CURLcode ccurl_easy_pause(CURL *handle, int how);
CURLM *ccurl_multi_init(void);
void ccurl_multi_cleanup(CURLM *multi);
CURLMcode ccurl_multi_add(CURLM *multi, CURL *handle);
CURLMcode ccurl_multi_remove(CURLM *multi, CURL *handle);
/// CURLMOPT_SOCKETFUNCTION: the socket `s` is to be watched for `what`
/// (CURL_POLL_IN, _OUT, _INOUT) or no more (CURL_POLL_REMOVE).
typedef int (*ccurl_socket_callback)(CURL *easy, curl_socket_t s, int what, void *context, void *socket_context);
/// CURLMOPT_TIMERFUNCTION: call ccurl_multi_socket_action with
/// CURL_SOCKET_TIMEOUT in `milliseconds` (-1: no timer).
typedef int (*ccurl_timer_callback)(CURLM *multi, long milliseconds, void *context);
CURLMcode ccurl_multi_watch(CURLM *multi, ccurl_socket_callback socket, ccurl_timer_callback timer, void *context);
/// CURLMOPT_MAXCONNECTS: idle connections the multi keeps for later transfers.
CURLMcode ccurl_multi_keep(CURLM *multi, long connections);
/// `events`: CURL_CSELECT_IN, _OUT, _ERR of `s`, or CURL_SOCKET_TIMEOUT with 0.
CURLMcode ccurl_multi_socket_action(CURLM *multi, curl_socket_t s, int events, int *running);
/// The next finished transfer's handle, and its result; NULL when none is.
CURL *ccurl_multi_finished(CURLM *multi, CURLcode *result);

#endif
