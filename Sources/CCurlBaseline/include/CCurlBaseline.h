// The benchmark's limit: plain C loops on libcurl, loaded as CurlTransport loads it, that send
// the same GETs as the benchmark's scenarios and keep each answer's body in memory, with
// nothing else in the way. Not part of Courier: the benchmark measures Courier against it.
#ifndef COURIER_CCURL_BASELINE_H
#define COURIER_CCURL_BASELINE_H

#ifdef __linux__

/// Sends `count` GETs of `url` one after another on one easy handle (one kept-alive
/// connection). Returns the seconds taken, or -1 when libcurl cannot be loaded or any GET fails
/// or answers other than 200.
double courier_baseline_sequential(const char *url, int count);

/// Sends `count` GETs of `url`, `concurrency` at a time, on one multi handle (a connection for
/// each GET in flight, kept alive). Returns the seconds taken, or -1 as above.
double courier_baseline_concurrent(const char *url, int count, int concurrency);

#endif
#endif
