// CJSON: json-c, the C JSON library (Debian's libjson-c5), for the read side.
//
// The read path runs in a fresh process for every answer; there json-c
// parses and prints in a fraction of the time Codable's JSONDecoder and
// JSONEncoder take to set up (docs/performance.md). Its API is plain C, so
// this header only includes it.
#ifndef CJSON_SHIM_H
#define CJSON_SHIM_H

#include <json-c/json.h>

#endif
