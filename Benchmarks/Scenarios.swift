import Courier
import CourierTesting
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

/// The scenarios and what they share: one loopback server, one Courier client, one raw session.
/// Every stored property is immutable and Sendable.
final class Scenarios: Sendable {
    let quick: Bool
    let server: LoopbackServer
    let client: NetworkClient
    let raw: URLSession
    let ordersURL: URL
    /// About 1 KB of envelope JSON.
    let ordersBody: Data

    init(quick: Bool) throws {
        self.quick = quick
        server = try LoopbackServer()
        let orders = (0..<8).map {
            Order(id: $0, title: "Order number \($0)", price: Double($0) * 1.25, tags: ["a", "b"])
        }
        let body = try JSONEncoder().encode(RawEnvelope(code: 0, msg: "ok", data: orders))
        ordersBody = body
        server.route("/api/orders") { _ in .init(status: 200, headers: ["Content-Type": "application/json"], body: body)
        }
        ordersURL = server.baseURL.appendingPathComponent("api/orders")
        client = NetworkClient(configuration: .init(baseURL: server.baseURL.appendingPathComponent("api/")))
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpMaximumConnectionsPerHost = 16
        raw = URLSession(configuration: configuration)
    }

    func stop() { server.stop() }

    private var repetitions: Int { quick ? 3 : 5 }

    private func courierOrders() async throws -> [Order] {
        try await client.send(Endpoint<[Order]>.get("orders"))
    }

    private func rawOrders() async throws -> [Order] {
        let (data, _) = try await raw.data(from: ordersURL)
        return try JSONDecoder().decode(RawEnvelope<[Order]>.self, from: data).data
    }

    /// S1: sequential requests.
    func s1Sequential() async throws -> Measurement {
        let count = quick ? 300 : 2000
        let (courier, baseline) = try await Harness.interleaved(
            repetitions: repetitions,
            warmUp: {
                for _ in 0..<100 {
                    _ = try await courierOrders()
                    _ = try await rawOrders()
                }
            },
            courier: {
                Double(count) / (try await Harness.seconds { for _ in 0..<count { _ = try await courierOrders() } })
            },
            baseline: {
                Double(count) / (try await Harness.seconds { for _ in 0..<count { _ = try await rawOrders() } })
            })
        return Measurement(
            scenario: "S1", detail: "\(count) sequential GETs, 1 KB envelope", unit: "req/s", courier: courier,
            baseline: baseline, ratio: courier / baseline, target: 0.98)
    }

    /// S2: the same with 64 concurrent tasks.
    func s2Concurrent() async throws -> Measurement {
        let count = quick ? 640 : 4096
        func concurrently(_ body: @escaping @Sendable () async throws -> [Order]) async throws -> Double {
            let seconds = try await Harness.seconds {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<64 {
                        group.addTask {
                            for _ in stride(from: worker, to: count, by: 64) { _ = try await body() }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            return Double(count) / seconds
        }
        let (courier, baseline) = try await Harness.interleaved(
            repetitions: repetitions,
            warmUp: {
                _ = try await concurrently { try await self.courierOrders() }
                _ = try await concurrently { try await self.rawOrders() }
            },
            courier: { try await concurrently { try await self.courierOrders() } },
            baseline: { try await concurrently { try await self.rawOrders() } })
        return Measurement(
            scenario: "S2", detail: "\(count) GETs from 64 concurrent tasks", unit: "req/s", courier: courier,
            baseline: baseline, ratio: courier / baseline, target: 0.98)
    }

    /// S5: decoding a 1 MB payload in its envelope (through a client with an in-memory transport)
    /// against JSONDecoder decoding the payload alone.
    func s5EnvelopeDecode() async throws -> Measurement {
        let items = (0..<7_000).map { Order(id: $0, title: "Item \($0) with a longer title", price: 9.99, tags: ["x"]) }
        let payload = try JSONEncoder().encode(items)
        let envelope = Data(#"{"code":0,"msg":"ok","data":"#.utf8) + payload + Data("}".utf8)
        let transport = MockTransport { _ in
            HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: envelope)
        }
        let memoryClient = NetworkClient(
            configuration: .init(baseURL: URL(string: "https://api.example.com/")!, transport: transport))
        let rounds = quick ? 5 : 20
        let (courier, baseline) = try await Harness.interleaved(
            repetitions: repetitions,
            warmUp: {
                _ = try await memoryClient.send(Endpoint<[Order]>.get("big"))
                _ = try JSONDecoder().decode([Order].self, from: payload)
            },
            courier: {
                try await Harness.seconds {
                    for _ in 0..<rounds { _ = try await memoryClient.send(Endpoint<[Order]>.get("big")) }
                } * 1000 / Double(rounds)
            },
            baseline: {
                try await Harness.seconds {
                    for _ in 0..<rounds { _ = try JSONDecoder().decode([Order].self, from: payload) }
                } * 1000 / Double(rounds)
            })
        return Measurement(
            scenario: "S5", detail: "decode \(envelope.count / 1024) KB envelope vs payload alone", unit: "ms",
            courier: courier, baseline: baseline, ratio: baseline / courier, target: 1 / 1.10)
    }

    /// S6: HMAC-SHA256 throughput against `openssl speed` on the same machine, with the cost of
    /// signing a typical request (10 parameters) in the detail.
    func s6Signing() async throws -> Measurement {
        let signer = SigningInterceptor(.hmacSHA256(secret: Data("benchmark-key".utf8)))
        var query = Parameters()
        for index in 0..<10 { query.append("param\(index)", "value \(index) & more") }
        let request = HTTPRequest(method: .get, url: URL(string: "https://api.example.com/v1/orders")!, query: query)
        let signs = quick ? 2_000 : 20_000
        let perSign = await Harness.seconds { for _ in 0..<signs { _ = signer.sign(request) } } / Double(signs)
        let block = Data(repeating: 0x61, count: 16_384)
        let blocks = quick ? 200 : 2_000
        let seconds = await Harness.seconds {
            for _ in 0..<blocks { _ = HMAC<SHA256>.authenticationCode(for: block, key: Data("k".utf8)) }
        }
        let ours = Double(blocks * block.count) / seconds / 1_000_000
        let openssl = OpenSSLSpeed.sha256MegabytesPerSecond() ?? .nan
        return Measurement(
            scenario: "S6",
            detail:
                "HMAC-SHA256 of 16 KB blocks vs openssl sha256; signing 10 parameters: \(String(format: "%.1f", perSign * 1e6)) µs",
            unit: "MB/s", courier: ours, baseline: openssl, ratio: ours / openssl, target: nil)
    }
}

/// `openssl dgst` over a 64 MB file as the reference for hashing throughput. (`openssl speed`
/// would be the obvious tool, but it times itself with SIGALRM, which a child of a Swift process
/// inherits blocked, so it never stops.)
enum OpenSSLSpeed {
    static func sha256MegabytesPerSecond() -> Double? {
        let size = 64 << 20
        let input = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-openssl-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: input) }
        guard FileManager.default.createFile(atPath: input.path, contents: Data(repeating: 0x61, count: size)) else {
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["dgst", "-sha256", input.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let start = ContinuousClock.now
        guard (try? process.run()) != nil else { return nil }
        process.waitUntilExit()
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return process.terminationStatus == 0 ? Double(size) / seconds / 1_000_000 : nil
    }
}
