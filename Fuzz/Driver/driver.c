#include "CFuzzDriver.h"

#ifdef __linux__
// Weak: present only when libFuzzer's runtime is linked in (scripts/fuzz). Apple's linker wants
// a definition even for a weak reference, so elsewhere the driver is never there.
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *, size_t))
    __attribute__((weak));

int courier_fuzz_driver_available(void) { return LLVMFuzzerRunDriver != 0; }

int courier_fuzz_driver_run(int *argc, char ***argv, courier_fuzz_check check) {
    return LLVMFuzzerRunDriver(argc, argv, check);
}
#else
int courier_fuzz_driver_available(void) { return 0; }

int courier_fuzz_driver_run(int *argc, char ***argv, courier_fuzz_check check) {
    (void)argc;
    (void)argv;
    (void)check;
    return 1;
}
#endif

// libFuzzer's runtime brings its own `main`, which needs this symbol to link; courier-fuzz's
// own entry point is the one that runs, and hands libFuzzer the selected target instead.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    (void)data;
    (void)size;
    return 0;
}
