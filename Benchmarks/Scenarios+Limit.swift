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
            let sequential = quick ? 300 : 2000
            let concurrent = quick ? 640 : 4096
            let url = ordersURL.absoluteString
            let bytes = Endpoint<Data>.get("orders", decoding: .data)
            let unsharedBytes = bytes.sharingIdenticalRequests(false)
            let c = { (count: Int, concurrency: Int) throws -> Double in
                let seconds =
                    concurrency == 1
                    ? courier_baseline_sequential(url, Int32(count))
                    : courier_baseline_concurrent(url, Int32(count), Int32(concurrency))
                guard seconds > 0 else { throw BenchmarkError.baselineFailed }
                return Double(count) / seconds
            }
            let medians = try await Harness.interleaved(
                repetitions: repetitions,
                warmUp: {
                    _ = try c(200, 1)
                    _ = try c(640, 64)
                    for _ in 0..<200 {
                        _ = try await courierOrders(client)
                        _ = try await client.send(bytes)
                    }
                    _ = try await Harness.rate(count: 640, concurrency: 64) {
                        _ = try await self.unsharedOrders(self.client)
                    }
                },
                runs: [
                    { try c(sequential, 1) },
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
                    { try c(concurrent, 64) },
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
                ])
            let seq = "\(sequential) sequential GETs, 1 KB envelope, against a C loop on one libcurl easy handle"
            let many = "\(concurrent) GETs, 64 at once, against a C loop on one libcurl multi handle"
            return [
                .ratio(
                    "S17-seq", "\(seq) — decoded", unit: "req/s", courier: medians[1], baseline: medians[0],
                    higherIsBetter: true, minimum: 0.6),
                .ratio(
                    "S17-seq-data", "\(seq) — body kept as Data", unit: "req/s", courier: medians[2],
                    baseline: medians[0], higherIsBetter: true, minimum: 0.8),
                .ratio(
                    "S17-64", "\(many) — decoded", unit: "req/s", courier: medians[4], baseline: medians[3],
                    higherIsBetter: true, minimum: 0.5),
                .ratio(
                    "S17-64-data", "\(many) — body kept as Data", unit: "req/s", courier: medians[5],
                    baseline: medians[3], higherIsBetter: true, minimum: 0.7),
            ]
        }
    }
#endif
