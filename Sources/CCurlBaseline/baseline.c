// See include/CCurlBaseline.h.
#ifdef __linux__
#include "CCurlBaseline.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "CCurl.h"

/// One GET's answer body, grown as it arrives and emptied for the next GET.
typedef struct {
    char *bytes;
    size_t count;
    size_t capacity;
    int failed;
} body;

static size_t keep(char *data, size_t size, size_t items, void *context) {
    body *kept = context;
    size_t length = size * items;
    if (length == 0) return 0;
    if (kept->count + length > kept->capacity) {
        size_t capacity = kept->capacity ? kept->capacity : 4096;
        while (capacity < kept->count + length && capacity < ((size_t)1 << 30)) capacity *= 2;
        char *grown = capacity < kept->count + length ? NULL : realloc(kept->bytes, capacity);
        if (grown == NULL) {
            kept->failed = 1;
            return 0;
        }
        kept->bytes = grown;
        kept->capacity = capacity;
    }
    memcpy(kept->bytes + kept->count, data, length);
    kept->count += length;
    return length;
}

static double now(void) {
    struct timespec moment;
    clock_gettime(CLOCK_MONOTONIC, &moment);
    return (double)moment.tv_sec + (double)moment.tv_nsec / 1e9;
}

static courier_curl_easy *make_handle(const char *url, body *kept) {
    courier_curl_easy *easy = courier_curl_easy_init();
    if (easy == NULL) return NULL;
    if (courier_curl_setopt_pointer(easy, COURIER_CURLOPT_URL, url) != 0 ||
        courier_curl_setopt_function(easy, COURIER_CURLOPT_WRITEFUNCTION, (void (*)(void))keep) != 0 ||
        courier_curl_setopt_pointer(easy, COURIER_CURLOPT_WRITEDATA, kept) != 0 ||
        courier_curl_setopt_long(easy, COURIER_CURLOPT_NOSIGNAL, 1) != 0 ||
        courier_curl_setopt_long(easy, COURIER_CURLOPT_TCP_NODELAY, 1) != 0 ||
        courier_curl_setopt_long(easy, COURIER_CURLOPT_CONNECTTIMEOUT_MS, 5000) != 0 ||
        courier_curl_setopt_long(easy, COURIER_CURLOPT_TIMEOUT_MS, 10000) != 0) {
        courier_curl_easy_cleanup(easy);
        return NULL;
    }
    return easy;
}

/// Whether a finished GET succeeded with 200 and the expected body.
static int answered(courier_curl_easy *easy, int result, const body *kept, long expected) {
    long status = 0;
    courier_curl_getinfo_long(easy, COURIER_CURLINFO_RESPONSE_CODE, &status);
    return result == COURIER_CURLE_OK && status == 200 && !kept->failed && (long)kept->count == expected;
}

double courier_baseline_sequential(const char *url, int count, long expected) {
    if (courier_curl_load() != 0 || count < 1) return COURIER_BASELINE_UNUSABLE;
    body kept = {0};
    courier_curl_easy *easy = make_handle(url, &kept);
    if (easy == NULL) return COURIER_BASELINE_UNUSABLE;
    // The connection is opened before the clock starts, as the client's is by its warm-up.
    int ok = answered(easy, courier_curl_easy_perform(easy), &kept, expected);
    double start = now();
    for (int sent = 0; sent < count && ok; sent++) {
        kept.count = 0;
        ok = answered(easy, courier_curl_easy_perform(easy), &kept, expected);
    }
    double seconds = now() - start;
    courier_curl_easy_cleanup(easy);
    free(kept.bytes);
    return ok ? seconds : COURIER_BASELINE_FAILED;
}

/// Runs `count` GETs on `handles` through `multi`, `concurrency` at a time, each handle
/// re-added as its GET ends. Returns whether every one answered as expected.
static int run_round(courier_curl_multi *multi, courier_curl_easy **handles, body *kept, int concurrency,
                     int count, long expected) {
    int started = 0, finished = 0, ok = 1;
    for (int slot = 0; ok && slot < concurrency && started < count; slot++, started++) {
        kept[slot].count = 0;
        ok = courier_curl_multi_add_handle(multi, handles[slot]) == 0;
    }
    while (ok && finished < started) {
        int running = 0;
        if (courier_curl_multi_perform(multi, &running) != 0) return 0;
        courier_curl_easy *done;
        int result;
        while (ok && courier_curl_multi_next_done(multi, &done, &result)) {
            int slot = 0;
            while (slot < concurrency && handles[slot] != done) slot++;
            if (slot == concurrency) return 0;
            ok = answered(done, result, &kept[slot], expected);
            finished++;
            courier_curl_multi_remove_handle(multi, done);
            if (ok && started < count) {
                // The same handle again: its connection went back to the pool for reuse.
                kept[slot].count = 0;
                ok = courier_curl_multi_add_handle(multi, done) == 0;
                started++;
            }
        }
        if (ok && finished < started && courier_curl_multi_poll(multi, 1000) != 0) return 0;
    }
    return ok && finished == count;
}

double courier_baseline_concurrent(const char *url, int count, int concurrency, long connections, long expected) {
    if (courier_curl_load() != 0 || count < 1 || concurrency < 1 || connections < 1) return COURIER_BASELINE_UNUSABLE;
    if (concurrency > count) concurrency = count;
    courier_curl_multi *multi = courier_curl_multi_init();
    body *kept = calloc((size_t)concurrency, sizeof(body));
    courier_curl_easy **handles = calloc((size_t)concurrency, sizeof(courier_curl_easy *));
    int usable = multi != NULL && kept != NULL && handles != NULL &&
                 courier_curl_multi_setopt_long(multi, COURIER_CURLMOPT_MAX_HOST_CONNECTIONS, connections) == 0;
    for (int slot = 0; usable && slot < concurrency; slot++) {
        handles[slot] = make_handle(url, &kept[slot]);
        usable = handles[slot] != NULL;
    }
    double seconds = COURIER_BASELINE_UNUSABLE;
    // An untimed round first opens the connections, as the client's warm-up opens its own.
    if (usable) {
        seconds = COURIER_BASELINE_FAILED;
        if (run_round(multi, handles, kept, concurrency, concurrency, expected)) {
            double start = now();
            if (run_round(multi, handles, kept, concurrency, count, expected)) seconds = now() - start;
        }
    }
    // Removing a handle that is in no multi handle does nothing: a failed round may leave some in.
    for (int slot = 0; handles != NULL && slot < concurrency; slot++) {
        if (handles[slot] == NULL) continue;
        if (multi != NULL) courier_curl_multi_remove_handle(multi, handles[slot]);
        courier_curl_easy_cleanup(handles[slot]);
        free(kept[slot].bytes);
    }
    if (multi != NULL) courier_curl_multi_cleanup(multi);
    free(handles);
    free(kept);
    return seconds;
}
#endif
