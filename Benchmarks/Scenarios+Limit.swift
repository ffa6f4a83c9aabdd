#if os(Linux)
    import CCurlBaseline
    import Courier
    import Foundation

    extension Scenarios {
        /// S17: the limit. S1's sequential GETs and S2's 64 at once on the default transport,
        /// against plain C loops on the same libcurl (loaded the same way) sending the same GETs
        /// to the same route, interleaved in one run: each with the envelope decoded, as S1 and
        /// S2 do, and with the body kept as `Data`, as the C loops keep theirs.
        func s17Limit() async throws -> [Measurement] {
            let sequential = quick ? 300 : 4000
            let concurrent = quick ? 640 : 16384
            let url = ordersURL.absoluteString
            let bytes = Endpoint<Data>.get("orders", decoding: .data)
            let unsharedBytes = bytes.sharingIdenticalRequests(false)
            let expected = ordersBody.count
            // As many connections as the client's transport opens to a host by default.
            let connections = CurlTransport.Options().maximumConnectionsPerHost
            // On a thread of its own: a C loop blocks, and the pool's threads are the client's.
            let c = { (count: Int, concurrency: Int) async throws -> Double in
                let seconds = await withCheckedContinuation { continuation in
                    Thread.detachNewThread {
                        continuation.resume(
                            returning: concurrency == 1
                                ? courier_baseline_sequential(url, Int32(count), expected)
                                : courier_baseline_concurrent(
                                    url, Int32(count), Int32(concurrency), connections, expected))
                    }
                }
                guard seconds > 0 else {
                    throw BenchmarkError.baselineFailed(
                        seconds == COURIER_BASELINE_UNUSABLE
                            ? "libcurl could not be loaded"
                            : "a GET failed, timed out, or was not answered with the envelope")
                }
                return Double(count) / seconds
            }
            let hop = ThreadHop()
            defer { hop.stop() }
            let medians = try await Harness.interleaved(
                repetitions: repetitions,
                warmUp: {
                    _ = try await c(200, 1)
                    _ = try await c(640, 64)
                    for _ in 0..<200 {
                        _ = try await courierOrders(client)
                        _ = try await client.send(bytes)
                    }
                    _ = try await Harness.rate(count: 640, concurrency: 64) {
                        _ = try await self.unsharedOrders(self.client)
                    }
                    _ = try await Harness.rate(count: 200, concurrency: 1) { await hop.roundTrip() }
                },
                runs: [
                    { try await c(sequential, 1) },
                    {
                        try await Harness.rate(count: sequential, concurrency: 1) {
                            _ = try await self.courierOrders(self.client)
                        }
                    },
                    {
                        try await Harness.rate(count: sequential, concurrency: 1) {
                            _ = try await self.client.send(bytes)
                        }
                    },
                    { try await c(concurrent, 64) },
                    {
                        try await Harness.rate(count: concurrent, concurrency: 64) {
                            _ = try await self.unsharedOrders(self.client)
                        }
                    },
                    {
                        try await Harness.rate(count: concurrent, concurrency: 64) {
                            _ = try await self.client.send(unsharedBytes)
                        }
                    },
                    { try await Harness.rate(count: sequential, concurrency: 1) { await hop.roundTrip() } },
                ])
            // A request that goes to an I/O thread and comes back costs at least the C loop's time
            // and one round trip between a task and a thread that sleeps until work comes.
            let ceiling = 1 / (1 / medians[0] + 1 / medians[6])
            let seq = "\(sequential) sequential GETs, 1 KB envelope, against a C loop on one libcurl easy handle"
            let many =
                "\(concurrent) GETs, 64 at once, against a C loop on one libcurl multi handle (\(connections) connections)"
            return [
                .ratio(
                    "S17-seq", "\(seq) — decoded", unit: "req/s", courier: medians[1], baseline: medians[0],
                    higherIsBetter: true, minimum: 0.6),
                .ratio(
                    "S17-seq-data", "\(seq) — body kept as Data", unit: "req/s", courier: medians[2],
                    baseline: medians[0], higherIsBetter: true, minimum: 0.8),
                .ratio(
                    "S17-ceiling",
                    "the most S17-seq-data can reach with an I/O thread of its own: the C loop's time plus one "
                        + "round trip from a task to a sleeping thread and back (\(Report.format(1e6 / medians[6])) µs)",
                    unit: "req/s", courier: ceiling, baseline: medians[0], higherIsBetter: true, minimum: nil),
                .ratio(
                    "S17-64", "\(many) — decoded", unit: "req/s", courier: medians[4], baseline: medians[3],
                    higherIsBetter: true, minimum: 0.5),
                .ratio(
                    "S17-64-data", "\(many) — body kept as Data", unit: "req/s", courier: medians[5],
                    baseline: medians[3], higherIsBetter: true, minimum: 0.7),
            ]
        }
    }

    /// A thread that sleeps until a task hands it work, then answers the task: what a transport
    /// with its own I/O thread does for every request, without the I/O.
    private final class ThreadHop: @unchecked Sendable {
        private let work = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var waiting: CheckedContinuation<Void, Never>?
        private var stopping = false

        init() {
            Thread.detachNewThread { [self] in
                while true {
                    work.wait()
                    let (task, stop) = lock.withLock {
                        defer { waiting = nil }
                        return (waiting, stopping)
                    }
                    task?.resume()
                    if stop { return }
                }
            }
        }

        /// Wakes the thread and waits for its answer.
        func roundTrip() async {
            await withCheckedContinuation { continuation in
                lock.withLock { waiting = continuation }
                work.signal()
            }
        }

        /// Ends the thread.
        func stop() {
            lock.withLock { stopping = true }
            work.signal()
        }
    }
#endif
