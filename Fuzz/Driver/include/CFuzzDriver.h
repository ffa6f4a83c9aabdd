// libFuzzer's driver, when courier-fuzz is linked with it on Linux (-sanitize=fuzzer, see
// scripts/fuzz). In an ordinary build the driver is absent and courier-fuzz replays inputs.
#ifndef COURIER_CFUZZDRIVER_H
#define COURIER_CFUZZDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// Checks one input; returns 0.
typedef int (*courier_fuzz_check)(const uint8_t *data, size_t size);

/// Whether libFuzzer is linked in.
int courier_fuzz_driver_available(void);

/// Runs libFuzzer with `check` on the given arguments; returns its exit status. Only when
/// `courier_fuzz_driver_available()`.
int courier_fuzz_driver_run(int *argc, char ***argv, courier_fuzz_check check);

#endif
