#include "CFuzzDriver.h"

// Weak: present only when libFuzzer's runtime is linked in.
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *, size_t))
    __attribute__((weak));

int courier_fuzz_driver_available(void) { return LLVMFuzzerRunDriver != 0; }

int courier_fuzz_driver_run(int *argc, char ***argv, courier_fuzz_check check) {
    return LLVMFuzzerRunDriver(argc, argv, check);
}

// libFuzzer's runtime brings its own `main`, which needs this symbol to link; courier-fuzz's
// own entry point is the one that runs, and hands libFuzzer the selected target instead.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    (void)data;
    (void)size;
    return 0;
}
