import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Scenarios {
    /// S3: the full app-backend chain (headers, common parameters, token, signing, envelope)
    /// against raw URLSession sending the same kind of request with its values written by hand.
    func s3FullChain() async throws -> [Measurement] {
        func chain(_ transport: any Transport) -> NetworkClient {
            var configuration = NetworkClient.Configuration(
                baseURL: peer.baseURL.appendingPathComponent("api/"), transport: transport)
            configuration.interceptors = [
                .headers(["X-App": "bench", "Accept-Language": "en"]),
                .commonParameters(["version": "2.4.1", "deviceId": "bench-device-0001", "os": "linux"]),
                .token(store: InMemoryTokenStore(credential: Credential(accessToken: Peer.freshToken))) { _ in
                    Credential(accessToken: Peer.freshToken)
                },
                .signing(.hmacSHA256(secret: Data("benchmark-secret".utf8))),
            ]
            return NetworkClient(configuration: configuration)
        }
        let chains = [chain(NetworkClient.Configuration.defaultTransport()), chain(URLSessionTransport())]
        var components = URLComponents(
            url: peer.baseURL.appendingPathComponent("api/profile"), resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery =
            "page=1&version=2.4.1&deviceId=bench-device-0001&os=linux&timestamp=1764400000"
            + "&nonce=0123456789abcdef0123456789abcdef&sign=" + String(repeating: "ab", count: 32)
        var rawRequest = URLRequest(url: components.url!)
        rawRequest.setValue("bench", forHTTPHeaderField: "X-App")
        rawRequest.setValue("en", forHTTPHeaderField: "Accept-Language")
        rawRequest.setValue(Peer.freshToken, forHTTPHeaderField: "token")
        let request = rawRequest
        let endpoint = Endpoint<[Order]>.get("profile", query: ["page": "1"])
        let count = quick ? 300 : 2000
        return try await compare(
            "S3", "\(count) sequential GETs through headers, params, token, HMAC signing, envelope", target: 0.95,
            warmUp: {
                for _ in 0..<100 {
                    for chain in chains { _ = try await chain.send(endpoint) }
                    _ = try await raw.data(for: request)
                }
            },
            courier: { variant in
                let chain = variant == .defaultTransport ? chains[0] : chains[1]
                return try await Harness.rate(count: count, concurrency: 1) { _ = try await chain.send(endpoint) }
            },
            raw: {
                try await Harness.rate(count: count, concurrency: 1) {
                    let (data, _) = try await self.raw.data(for: request)
                    _ = try JSONDecoder().decode(RawEnvelope<[Order]>.self, from: data)
                }
            })
    }

    /// S9: concurrent requests meeting an expired token (401): how many refreshes, and how much
    /// longer the storm takes than the same requests with a valid token.
    func s9RefreshStorm() async throws -> [Measurement] {
        let count = quick ? 200 : 1000
        var refreshes: [Double] = []
        var stormTimes: [Double] = []
        var calmTimes: [Double] = []
        for _ in 0..<repetitions {
            let fetches = FetchCounter()
            var configuration = NetworkClient.Configuration(baseURL: peer.baseURL.appendingPathComponent("api/"))
            configuration.interceptors = [
                .token(store: InMemoryTokenStore(credential: Credential(accessToken: "expired"))) { refresh in
                    fetches.increment()
                    return Credential(accessToken: try await refresh.client.send(Endpoint<String>.post("token")))
                }
            ]
            let client = NetworkClient(configuration: configuration)
            let endpoint = Endpoint<[Order]>.get("profile")
            stormTimes.append(
                try await Harness.seconds {
                    _ = try await Harness.rate(count: count, concurrency: count) { _ = try await client.send(endpoint) }
                })
            refreshes.append(Double(fetches.value))
            calmTimes.append(
                try await Harness.seconds {
                    _ = try await Harness.rate(count: count, concurrency: count) { _ = try await client.send(endpoint) }
                })
        }
        let storm = Harness.median(stormTimes) * 1000
        let calm = Harness.median(calmTimes) * 1000
        let worst = refreshes.max() ?? 0
        return [
            Measurement(
                scenario: "S9",
                detail:
                    "\(count) concurrent requests meet an expired token (401): refreshes per storm, worst of \(repetitions); storm \(Report.format(storm)) ms vs \(Report.format(calm)) ms with a valid token",
                unit: "refreshes", courier: worst, baseline: 1, ratio: calm / storm, target: "exactly 1 refresh",
                meetsTarget: refreshes.allSatisfy { $0 == 1 })
        ]
    }
}

/// Counts token fetches. `@unchecked Sendable`: `count` is guarded by `lock`.
final class FetchCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
