// CCurl: libcurl for Swift.
//
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot
// call. These typed wrappers give each kind of option its own signature, so a
// wrong argument type is a compile error rather than undefined behaviour.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <curl/curl.h>

typedef size_t (*ccurl_write_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_write_callback(CURL *handle, CURLoption option, ccurl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

#endif
