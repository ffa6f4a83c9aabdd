import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Order: Codable, Sendable {
    let id: Int
    let title: String
    let price: Double
    let tags: [String]
}

/// The envelope as a hand-written client would decode it with JSONDecoder alone.
struct RawEnvelope<T: Codable>: Codable {
    let code: Int
    let msg: String
    let data: T
}

/// The scenarios and what they share: one peer server, one Courier client, one raw session.
/// Every stored property is immutable and Sendable.
final class Scenarios: Sendable {
    let quick: Bool
    let peer: Peer
    let client: NetworkClient
    let raw: URLSession
    let ordersURL: URL

    init(quick: Bool) throws {
        self.quick = quick
        let orders = (0..<8).map {
            Order(id: $0, title: "Order number \($0)", price: Double($0) * 1.25, tags: ["a", "b"])
        }
        peer = try Peer.start(ordersBody: try JSONEncoder().encode(RawEnvelope(code: 0, msg: "ok", data: orders)))
        ordersURL = peer.baseURL.appendingPathComponent("api/orders")
        client = NetworkClient(configuration: .init(baseURL: peer.baseURL.appendingPathComponent("api/")))
        raw = Self.rawSession()
    }

    /// A session as a hand-written client would make it.
    static func rawSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpMaximumConnectionsPerHost = 16
        return URLSession(configuration: configuration)
    }

    func stop() { peer.stop() }

    var repetitions: Int { quick ? 3 : 5 }

    func courierOrders() async throws -> [Order] {
        try await client.send(Endpoint<[Order]>.get("orders"))
    }

    func rawOrders() async throws -> [Order] {
        let (data, _) = try await raw.data(from: ordersURL)
        return try JSONDecoder().decode(RawEnvelope<[Order]>.self, from: data).data
    }

    /// The peer's own capacity on raw sockets, to show it is not the bottleneck.
    func serverCapacity() -> String {
        let port = peer.baseURL.port ?? 80
        let seconds = quick ? 0.5 : 2
        let one = Capacity.measure(port: port, path: "/api/orders", connections: 1, seconds: seconds)
        let four = Capacity.measure(port: port, path: "/api/orders", connections: 4, seconds: seconds)
        return "\(peer.name): \(Report.format(one)) req/s on 1 raw keep-alive connection, \(Report.format(four)) on 4"
    }

    /// S1: sequential requests.
    func s1Sequential() async throws -> [Measurement] {
        let count = quick ? 300 : 2000
        let (courier, baseline) = try await Harness.interleaved(
            repetitions: repetitions,
            warmUp: {
                for _ in 0..<100 {
                    _ = try await courierOrders()
                    _ = try await rawOrders()
                }
            },
            courier: { try await Harness.rate(count: count, concurrency: 1) { _ = try await self.courierOrders() } },
            baseline: { try await Harness.rate(count: count, concurrency: 1) { _ = try await self.rawOrders() } })
        return [
            .ratio(
                "S1", "\(count) sequential GETs, 1 KB envelope", unit: "req/s", courier: courier, baseline: baseline,
                higherIsBetter: true, minimum: 0.98)
        ]
    }

    /// S2: the same with 64 concurrent tasks.
    func s2Concurrent() async throws -> [Measurement] {
        let count = quick ? 640 : 4096
        let (courier, baseline) = try await Harness.interleaved(
            repetitions: repetitions,
            warmUp: {
                _ = try await Harness.rate(count: count, concurrency: 64) { _ = try await self.courierOrders() }
                _ = try await Harness.rate(count: count, concurrency: 64) { _ = try await self.rawOrders() }
            },
            courier: { try await Harness.rate(count: count, concurrency: 64) { _ = try await self.courierOrders() } },
            baseline: { try await Harness.rate(count: count, concurrency: 64) { _ = try await self.rawOrders() } })
        return [
            .ratio(
                "S2", "\(count) GETs from 64 concurrent tasks", unit: "req/s", courier: courier, baseline: baseline,
                higherIsBetter: true, minimum: 0.98)
        ]
    }

    /// S4: scaling with 1, 4, 16, 64 and 256 concurrent tasks.
    func s4Scaling() async throws -> [Measurement] {
        var results: [Measurement] = []
        for concurrency in [1, 4, 16, 64, 256] {
            let count = max(concurrency * 4, quick ? 256 : 2048)
            let (courier, baseline) = try await Harness.interleaved(
                repetitions: repetitions,
                warmUp: {
                    _ = try await Harness.rate(count: concurrency, concurrency: concurrency) {
                        _ = try await self.courierOrders()
                    }
                    _ = try await Harness.rate(count: concurrency, concurrency: concurrency) {
                        _ = try await self.rawOrders()
                    }
                },
                courier: {
                    try await Harness.rate(count: count, concurrency: concurrency) {
                        _ = try await self.courierOrders()
                    }
                },
                baseline: {
                    try await Harness.rate(count: count, concurrency: concurrency) { _ = try await self.rawOrders() }
                })
            results.append(
                .ratio(
                    "S4-\(concurrency)", "\(count) GETs from \(concurrency) concurrent tasks", unit: "req/s",
                    courier: courier, baseline: baseline, higherIsBetter: true, minimum: nil))
        }
        return results
    }
}
