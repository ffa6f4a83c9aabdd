import Courier
import CourierTesting
import Foundation

extension Scenarios {
    /// S5: decoding a 1 MB payload in its envelope (through a client with an in-memory transport)
    /// against JSONDecoder decoding the payload alone.
    func s5EnvelopeDecode() async throws -> [Measurement] {
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
        return [
            .ratio(
                "S5", "decode \(envelope.count / 1024) KB envelope vs payload alone", unit: "ms", courier: courier,
                baseline: baseline, higherIsBetter: false, minimum: 1 / 1.10),
            try await envelopeReads(),
        ]
    }

    /// S5-envelope: what a 1 KB envelope costs a request through the layers that read its code
    /// (re-login codes, a clock correction from a body field, an observer that reports the code),
    /// its checks and its decoding, against one JSONDecoder decode of it. Each side is the time a
    /// 1 KB envelope takes over a 30-byte one, the client's with an in-memory transport.
    private func envelopeReads() async throws -> Measurement {
        struct CodeReporter: RequestObserver {
            func requestEnded(_ timeline: RequestTimeline) { _ = timeline.businessCode }
        }
        let orders = (0..<13).map { Order(id: $0, title: "Item \($0) with a longer title", price: 9.99, tags: ["x"]) }
        let large =
            Data(#"{"code":0,"msg":"ok","serverTime":1764400000,"data":"#.utf8)
            + (try JSONEncoder().encode(orders)) + Data("}".utf8)
        let small = Data(#"{"code":0,"msg":"ok","data":[]}"#.utf8)
        func client(answering body: Data) -> NetworkClient {
            var configuration = NetworkClient.Configuration(
                baseURL: URL(string: "https://api.example.com/")!,
                transport: MockTransport { _ in
                    HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: body)
                })
            configuration.session = Session(
                store: InMemoryTokenStore(credential: Credential(accessToken: "t")), logInCodes: [99, 500],
                logIn: { _ in Credential(accessToken: "t") })
            configuration.interceptors = [
                .signing(
                    .hmacSHA256(secret: Data("benchmark-secret".utf8)),
                    clockCorrection: ClockCorrection(codes: [1001], serverTime: .field("serverTime")))
            ]
            configuration.observers = [CodeReporter()]
            return NetworkClient(configuration: configuration)
        }
        let clients = [client(answering: large), client(answering: small)]
        let endpoint = Endpoint<[Order]>.get("orders")
        let sends = quick ? 500 : 3_000
        func clientMicroseconds(_ client: NetworkClient) async throws -> Double {
            try await Harness.seconds { for _ in 0..<sends { _ = try await client.send(endpoint) } } / Double(sends)
                * 1e6
        }
        func decodeMicroseconds(_ body: Data) async throws -> Double {
            try await Harness.seconds {
                for _ in 0..<sends { _ = try JSONDecoder().decode(RawEnvelope<[Order]>.self, from: body) }
            } / Double(sends) * 1e6
        }
        let runs: [() async throws -> Double] = [
            { try await clientMicroseconds(clients[0]) }, { try await clientMicroseconds(clients[1]) },
            { try await decodeMicroseconds(large) }, { try await decodeMicroseconds(small) },
        ]
        let medians = try await Harness.interleaved(
            repetitions: quick ? 3 : 9, warmUp: { for run in runs { _ = try await run() } }, runs: runs)
        let (courier, baseline) = (medians[0] - medians[1], medians[2] - medians[3])
        return .ratio(
            "S5-envelope",
            "a \(large.count)-byte envelope's extra µs through re-login codes, a clock field and a code-reporting"
                + " observer (\(String(format: "%.1f", courier)) µs), against one decode of it"
                + " (\(String(format: "%.1f", baseline)) µs)",
            unit: "µs", courier: courier, baseline: baseline, higherIsBetter: false, minimum: nil)
    }

    /// S6: HMAC-SHA256 throughput against `openssl dgst` on the same machine (at least 0.8 of
    /// it), and the cost of signing a typical request (10 parameters), at most 5 µs.
    func s6Signing() async throws -> [Measurement] {
        let signer = SigningInterceptor(.hmacSHA256(secret: Data("benchmark-key".utf8)))
        var query = Parameters()
        for index in 0..<10 { query.append(name: "param\(index)", value: "value \(index) & more") }
        let request = HTTPRequest(method: .get, url: URL(string: "https://api.example.com/v1/orders")!, query: query)
        _ = try signer.sign(request)  // a failure shows here, not as a fast loop
        // The median of batches, so a neighbour's burst on a shared machine moves one batch only.
        let signs = quick ? 1_000 : 5_000
        var batches: [Double] = []
        for _ in 0..<(quick ? 5 : 11) {
            batches.append(
                await Harness.seconds { for _ in 0..<signs { _ = try? signer.sign(request) } } / Double(signs) * 1e6)
        }
        let block = Data(repeating: 0x61, count: 16_384)
        let key = Data("k".utf8)
        let blocks = quick ? 200 : 2_000
        func megabytesPerSecond(_ hmac: @escaping @Sendable () -> Void) async -> Double {
            let seconds = await Harness.seconds { for _ in 0..<blocks { hmac() } }
            return Double(blocks * block.count) / seconds / 1_000_000
        }
        let ours = await megabytesPerSecond { _ = block.withUnsafeBytes { Hashing.hmacSHA256(key: key, message: $0) } }
        let pureSwift = await megabytesPerSecond { _ = HMAC<SHA256>.authenticationCode(for: block, key: key) }
        // Without openssl to run, the row is shown with no target rather than as a miss.
        let measured = OpenSSLSpeed.sha256MegabytesPerSecond()
        let openssl = measured ?? .nan
        let source = SystemCrypto.isAvailable ? "the system's" : "pure Swift (no system library)"
        return [
            .ratio(
                "S6",
                "HMAC-SHA256 of 16 KB blocks (\(source)) vs openssl sha256; pure Swift \(String(format: "%.0f", pureSwift)) MB/s",
                unit: "MB/s", courier: ours, baseline: openssl, higherIsBetter: true,
                minimum: measured == nil ? nil : 0.8),
            .budget(
                "S6s", "signing a GET with 10 parameters (HMAC-SHA256, v2), median of \(batches.count) batches",
                unit: "µs", value: Harness.median(batches), maximum: 5),
        ]
    }
}

/// `openssl dgst` over a 64 MB file as the reference for hashing throughput. (`openssl speed`
/// would be the obvious tool, but it times itself with SIGALRM, which a child of a Swift process
/// inherits blocked, so it never stops.)
enum OpenSSLSpeed {
    /// `nil` where there is no `openssl` to run, or no way to run a program (`Process` is
    /// macOS and Linux only).
    static func sha256MegabytesPerSecond() -> Double? {
        #if os(Linux) || os(macOS)
            measure()
        #else
            nil
        #endif
    }

    #if os(Linux) || os(macOS)
        private static func measure() -> Double? {
            let size = 64 << 20
            let input = FileManager.default.temporaryDirectory.appendingPathComponent(
                "courier-openssl-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: input) }
            guard FileManager.default.createFile(atPath: input.path, contents: Data(repeating: 0x61, count: size))
            else {
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
    #endif
}
