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
    /// The 1 KB envelope `GET /api/orders` answers.
    let ordersBody: Data
    /// Courier on its default transport (CurlTransport on Linux).
    let client: NetworkClient
    /// Courier on URLSessionTransport, for the second column.
    let sessionClient: NetworkClient
    /// The default transport's name.
    let transportName: String
    /// The default transport, for the floor rows (the transport with JSONDecoder, no client).
    let transport: any Transport
    /// The URLSessionTransport under `sessionClient`, for its floor row.
    let sessionTransport: URLSessionTransport
    let raw: URLSession
    let ordersURL: URL

    init(quick: Bool) throws {
        self.quick = quick
        let orders = (0..<8).map {
            Order(id: $0, title: "Order number \($0)", price: Double($0) * 1.25, tags: ["a", "b"])
        }
        ordersBody = try JSONEncoder().encode(RawEnvelope(code: 0, msg: "ok", data: orders))
        peer = try Peer.start(ordersBody: ordersBody)
        ordersURL = peer.baseURL.appendingPathComponent("api/orders")
        let base = peer.baseURL.appendingPathComponent("api/")
        transport = NetworkClient.Configuration.defaultTransport()
        transportName = String(describing: type(of: transport))
        client = NetworkClient(configuration: .init(baseURL: base, transport: transport))
        sessionTransport = URLSessionTransport()
        sessionClient = NetworkClient(configuration: .init(baseURL: base, transport: sessionTransport))
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

    /// `GET /api/orders` as an app sends it: identical requests in flight share a transfer.
    func courierOrders(_ client: NetworkClient) async throws -> [Order] {
        try await client.send(Endpoint<[Order]>.get("orders"))
    }

    /// The same, each request sent on its own, for the scenarios that count requests on the
    /// wire: with many identical ones in flight, sharing would send fewer than the baseline.
    func unsharedOrders(_ client: NetworkClient) async throws -> [Order] {
        try await client.send(Endpoint<[Order]>.get("orders").sharingIdenticalRequests(false))
    }

    /// What any client on Courier's default transport pays: the transport and JSONDecoder,
    /// without NetworkClient's pipeline.
    func transportOrders(_ variant: Variant = .defaultTransport) async throws -> [Order] {
        let transport: any Transport = variant == .defaultTransport ? transport : sessionTransport
        let response = try await transport.send(HTTPRequest(method: .get, url: ordersURL))
        return try JSONDecoder().decode(RawEnvelope<[Order]>.self, from: response.body).data
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

    /// Which Courier client a run uses.
    enum Variant {
        case defaultTransport
        case urlSession
    }

    func client(_ variant: Variant) -> NetworkClient {
        variant == .defaultTransport ? client : sessionClient
    }

    /// Courier on its default transport and on URLSessionTransport, each against raw
    /// URLSession, interleaved in one run: a row for each, and for each transport a floor row
    /// (the transport and JSONDecoder alone, no client) when `floor` is given.
    func compare(
        _ scenario: String, _ detail: String, unit: String = "req/s", target: Double?,
        warmUp: () async throws -> Void, courier: @escaping (Variant) async throws -> Double,
        raw: @escaping () async throws -> Double, floor: ((Variant) async throws -> Double)? = nil
    ) async throws -> [Measurement] {
        let floors: [() async throws -> Double] =
            floor.map { floor in [{ try await floor(.defaultTransport) }, { try await floor(.urlSession) }] } ?? []
        let medians = try await Harness.interleaved(
            repetitions: repetitions, warmUp: warmUp,
            runs: [{ try await courier(.defaultTransport) }, { try await courier(.urlSession) }, raw] + floors)
        let floorRows = floor.map { _ in
            [
                Measurement.ratio(
                    scenario + "-floor", "\(detail) — \(transportName) + JSONDecoder alone, no client", unit: unit,
                    courier: medians[3], baseline: medians[2], higherIsBetter: true, minimum: nil),
                Measurement.ratio(
                    scenario + "-urlsession-floor", "\(detail) — URLSessionTransport + JSONDecoder alone, no client",
                    unit: unit, courier: medians[4], baseline: medians[2], higherIsBetter: true, minimum: nil),
            ]
        }
        return [
            .ratio(
                scenario, "\(detail) — \(transportName)", unit: unit, courier: medians[0], baseline: medians[2],
                higherIsBetter: true, minimum: target),
            .ratio(
                scenario + "-urlsession", "\(detail) — URLSessionTransport", unit: unit, courier: medians[1],
                baseline: medians[2], higherIsBetter: true, minimum: nil),
        ] + (floorRows ?? [])
    }

    /// S1: sequential requests.
    func s1Sequential() async throws -> [Measurement] {
        let count = quick ? 300 : 2000
        return try await compare(
            "S1", "\(count) sequential GETs, 1 KB envelope", target: 0.98,
            warmUp: {
                for _ in 0..<100 {
                    _ = try await courierOrders(client)
                    _ = try await courierOrders(sessionClient)
                    _ = try await rawOrders()
                    _ = try await transportOrders()
                    _ = try await transportOrders(.urlSession)
                }
            },
            courier: { variant in
                try await Harness.rate(count: count, concurrency: 1) {
                    _ = try await self.courierOrders(self.client(variant))
                }
            },
            raw: { try await Harness.rate(count: count, concurrency: 1) { _ = try await self.rawOrders() } },
            floor: { variant in
                try await Harness.rate(count: count, concurrency: 1) { _ = try await self.transportOrders(variant) }
            })
    }

    /// S2: the same with 64 concurrent tasks.
    func s2Concurrent() async throws -> [Measurement] {
        let count = quick ? 640 : 4096
        return try await compare(
            "S2", "\(count) GETs from 64 concurrent tasks", target: 0.98,
            warmUp: {
                _ = try await Harness.rate(count: count, concurrency: 64) {
                    _ = try await self.unsharedOrders(self.client)
                }
                _ = try await Harness.rate(count: count, concurrency: 64) {
                    _ = try await self.unsharedOrders(self.sessionClient)
                }
                _ = try await Harness.rate(count: count, concurrency: 64) { _ = try await self.rawOrders() }
            },
            courier: { variant in
                try await Harness.rate(count: count, concurrency: 64) {
                    _ = try await self.unsharedOrders(self.client(variant))
                }
            },
            raw: { try await Harness.rate(count: count, concurrency: 64) { _ = try await self.rawOrders() } })
    }

    /// S4: scaling with 1, 4, 16, 64 and 256 concurrent tasks.
    func s4Scaling() async throws -> [Measurement] {
        var results: [Measurement] = []
        for concurrency in [1, 4, 16, 64, 256] {
            let count = max(concurrency * 4, quick ? 256 : 2048)
            results += try await compare(
                "S4-\(concurrency)", "\(count) GETs from \(concurrency) concurrent tasks", target: nil,
                warmUp: {
                    _ = try await Harness.rate(count: concurrency, concurrency: concurrency) {
                        _ = try await self.unsharedOrders(self.client)
                    }
                    _ = try await Harness.rate(count: concurrency, concurrency: concurrency) {
                        _ = try await self.rawOrders()
                    }
                },
                courier: { variant in
                    try await Harness.rate(count: count, concurrency: concurrency) {
                        _ = try await self.unsharedOrders(self.client(variant))
                    }
                },
                raw: {
                    try await Harness.rate(count: count, concurrency: concurrency) { _ = try await self.rawOrders() }
                })
        }
        return results
    }
}
