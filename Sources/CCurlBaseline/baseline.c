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
    if (kept->count + length > kept->capacity) {
        size_t capacity = kept->capacity ? kept->capacity : 4096;
        while (capacity < kept->count + length) capacity *= 2;
        char *grown = realloc(kept->bytes, capacity);
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
        courier_curl_setopt_long(easy, COURIER_CURLOPT_TCP_NODELAY, 1) != 0) {
        courier_curl_easy_cleanup(easy);
        return NULL;
    }
    return easy;
}

/// Whether a finished GET succeeded with 200 and a body.
static int answered(courier_curl_easy *easy, int result, const body *kept) {
    long status = 0;
    courier_curl_getinfo_long(easy, COURIER_CURLINFO_RESPONSE_CODE, &status);
    return result == COURIER_CURLE_OK && status == 200 && !kept->failed && kept->count > 0;
}

double courier_baseline_sequential(const char *url, int count) {
    if (courier_curl_load() != 0 || count < 1) return -1;
    body kept = {0};
    courier_curl_easy *easy = make_handle(url, &kept);
    if (easy == NULL) return -1;
    double start = now();
    int ok = 1;
    for (int sent = 0; sent < count && ok; sent++) {
        kept.count = 0;
        int result = courier_curl_easy_perform(easy);
        ok = answered(easy, result, &kept);
    }
    double seconds = now() - start;
    courier_curl_easy_cleanup(easy);
    free(kept.bytes);
    return ok ? seconds : -1;
}

double courier_baseline_concurrent(const char *url, int count, int concurrency) {
    if (courier_curl_load() != 0 || count < 1 || concurrency < 1) return -1;
    if (concurrency > count) concurrency = count;
    courier_curl_multi *multi = courier_curl_multi_init();
    body *kept = calloc((size_t)concurrency, sizeof(body));
    courier_curl_easy **handles = calloc((size_t)concurrency, sizeof(courier_curl_easy *));
    int ok = multi != NULL && kept != NULL && handles != NULL;
    for (int slot = 0; ok && slot < concurrency; slot++) {
        handles[slot] = make_handle(url, &kept[slot]);
        ok = handles[slot] != NULL;
    }
    double start = now();
    int started = 0, finished = 0;
    for (int slot = 0; ok && slot < concurrency; slot++, started++) {
        ok = courier_curl_multi_add_handle(multi, handles[slot]) == 0;
    }
    while (ok && finished < count) {
        int running = 0;
        if (courier_curl_multi_perform(multi, &running) != 0) break;
        courier_curl_easy *done;
        int result;
        while (ok && courier_curl_multi_next_done(multi, &done, &result)) {
            int slot = 0;
            while (handles[slot] != done) slot++;
            ok = answered(done, result, &kept[slot]);
            finished++;
            courier_curl_multi_remove_handle(multi, done);
            if (ok && started < count) {
                // The same handle again: its connection goes back to the pool and is reused.
                kept[slot].count = 0;
                ok = courier_curl_multi_add_handle(multi, done) == 0;
                started++;
            }
        }
        if (ok && finished < count && courier_curl_multi_poll(multi, 1000) != 0) ok = 0;
    }
    double seconds = now() - start;
    for (int slot = 0; handles != NULL && slot < concurrency; slot++) {
        if (handles[slot] == NULL) continue;
        courier_curl_multi_remove_handle(multi, handles[slot]);
        courier_curl_easy_cleanup(handles[slot]);
        free(kept[slot].bytes);
    }
    if (multi != NULL) courier_curl_multi_cleanup(multi);
    free(handles);
    free(kept);
    return ok && finished == count ? seconds : -1;
}
#endif
