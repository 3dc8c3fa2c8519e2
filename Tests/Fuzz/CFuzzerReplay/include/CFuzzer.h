// CFuzzer: libFuzzer's driver, called from each fuzz target's main.swift.
// SwiftPM renames an executable's entry point and links it as `main`, so the
// targets run libFuzzer themselves instead of using libFuzzer's own main.
#ifndef CFUZZER_H
#define CFUZZER_H
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
