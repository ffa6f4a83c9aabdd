// The benchmark's limit: plain C loops on libcurl, loaded as CurlTransport loads it, that send
// the same GETs as the benchmark's scenarios and keep each answer's body in memory, with
// nothing else in the way. Not part of Courier: the benchmark measures Courier against it.
#ifndef COURIER_CCURL_BASELINE_H
#define COURIER_CCURL_BASELINE_H

#ifdef __linux__

/// libcurl could not be loaded, or an argument is out of range.
#define COURIER_BASELINE_UNUSABLE (-1.0)
/// A GET failed, timed out (10 s), or its answer was not a 200 with `expected` bytes.
#define COURIER_BASELINE_FAILED (-2.0)

/// Sends `count` GETs of `url` one after another on one easy handle (one kept-alive
/// connection, opened by an untimed GET first). Returns the seconds taken, or one of the
/// negative values above.
double courier_baseline_sequential(const char *url, int count, long expected);

/// Sends `count` GETs of `url`, `concurrency` at a time, on one multi handle with at most
/// `connections` connections to the host (opened by an untimed round first, kept alive).
/// Returns the seconds taken, or one of the negative values above.
double courier_baseline_concurrent(const char *url, int count, int concurrency, long connections, long expected);

/// Gives this process mounts of its own (a private mount namespace), so that
/// `courier_baseline_trust_only` changes what this process sees and nothing else. It must be
/// called while the process has one thread: a namespace belongs to the thread that makes it and
/// the threads that thread starts later. Returns 0, or -1 (more than one thread, not root, or
/// the kernel refused).
int courier_baseline_private_mounts(void);

/// Shows `authorities` (a PEM file) to this process in place of the system's certificate
/// authority bundle, which Linux URLSession (through libcurl) reads and which no URLSession
/// setting replaces there. Only after `courier_baseline_private_mounts` succeeded. Returns 0,
/// or -1.
int courier_baseline_trust_only(const char *authorities);

#endif
#endif
