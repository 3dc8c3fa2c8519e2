// CFuzzer: libFuzzer's driver (CFuzzerReplay/replay.c's for scripts/fuzz --replay),
// called from each fuzz target's main.swift. SwiftPM renames an executable's entry point
// and links it as `main`, so the targets run the driver themselves.
#ifndef CFUZZER_H
#define CFUZZER_H
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
