import Courier
import Foundation

extension Scenarios {
    /// S11: the response cache and shared transfers against raw URLSession.
    ///
    /// - S11-hit: sequential `send`s answered from a fresh entry (cache first, in memory) against
    ///   raw URLSession's round trips to the peer, and against Courier's own round trips
    ///   (`S11-hit-network`, the same client and endpoint without the cache policy).
    /// - S11-shared: 1,000 identical `GET`s started at once: Courier, whose identical requests
    ///   share one transfer by default, against raw URLSession sending all of them.
    func s11Cache() async throws -> [Measurement] {
        var configuration = NetworkClient.Configuration(
            baseURL: peer.baseURL.appendingPathComponent("api/"), transport: transport)
        configuration.cache = ResponseCache(store: MemoryCacheStore())
        let cached = NetworkClient(configuration: configuration)
        let network = Endpoint<[Order]>.get("orders")
        let hit = network.caching(.cacheFirst(maxAge: .seconds(3_600)))
        let count = quick ? 300 : 2_000
        let medians = try await Harness.interleaved(
            repetitions: repetitions,
            warmUp: {
                for _ in 0..<100 {
                    _ = try await cached.send(hit)
                    _ = try await cached.send(network)
                    _ = try await rawOrders()
                }
            },
            runs: [
                { try await Harness.rate(count: count, concurrency: 1) { _ = try await cached.send(hit) } },
                { try await Harness.rate(count: count, concurrency: 1) { _ = try await cached.send(network) } },
                { try await Harness.rate(count: count, concurrency: 1) { _ = try await self.rawOrders() } },
            ])
        guard try await cached.reply(to: hit).cached != nil else { throw BenchmarkError.notFromCache }

        let burst = 1_000
        let (shared, raw) = try await Harness.interleaved(
            repetitions: repetitions,
            warmUp: {
                _ = try await Harness.rate(count: burst, concurrency: burst) {
                    _ = try await self.courierOrders(self.client)
                }
                _ = try await Harness.rate(count: burst, concurrency: burst) { _ = try await self.rawOrders() }
            },
            courier: {
                try await Harness.seconds {
                    _ = try await Harness.rate(count: burst, concurrency: burst) {
                        _ = try await self.courierOrders(self.client)
                    }
                } * 1_000
            },
            baseline: {
                try await Harness.seconds {
                    _ = try await Harness.rate(count: burst, concurrency: burst) { _ = try await self.rawOrders() }
                } * 1_000
            })
        return [
            .ratio(
                "S11-hit", "\(count) sequential sends answered from the cache vs raw URLSession round trips",
                unit: "req/s", courier: medians[0], baseline: medians[2], higherIsBetter: true, minimum: 5),
            .ratio(
                "S11-hit-network", "the same sends from the cache vs Courier's own round trips (\(transportName))",
                unit: "req/s", courier: medians[0], baseline: medians[1], higherIsBetter: true, minimum: nil),
            .ratio(
                "S11-shared", "\(burst) identical GETs at once, one transfer shared, vs raw URLSession sending each",
                unit: "ms", courier: shared, baseline: raw, higherIsBetter: false, minimum: 2),
        ]
    }

    enum BenchmarkError: Error {
        /// The cache-hit run was not answered from the cache, so its figure would be a lie.
        case notFromCache
        /// The plain C loop on libcurl could not load libcurl, or a GET of it failed: why.
        case baselineFailed(String)
    }
}
