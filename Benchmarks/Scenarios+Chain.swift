import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Scenarios {
    /// S3: the full app-backend chain (headers, common parameters, token, signing, envelope)
    /// against raw URLSession sending the same kind of request with its values written by hand.
    func s3FullChain() async throws -> [Measurement] {
        let curl = NetworkClient.Configuration.defaultTransport()
        let chains = [
            Self.chain(peer.baseURL.appendingPathComponent("api/"), curl, steps: Self.chainSteps.count),
            Self.chain(
                peer.baseURL.appendingPathComponent("api/"), URLSessionTransport(), steps: Self.chainSteps.count),
        ]
        // The same client with no layer, then one more layer at a time: what each one costs.
        let partial = (0..<Self.chainSteps.count).map {
            Self.chain(peer.baseURL.appendingPathComponent("api/"), curl, steps: $0)
        }
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
        // Clients without the token layer send the token the peer wants in the endpoint's headers.
        let withToken = Endpoint<[Order]>.get("profile", query: ["page": "1"], headers: ["token": Peer.freshToken])
        let count = quick ? 300 : 2000
        let tokenStep = Self.chainSteps.firstIndex(of: "token")!
        let partialEndpoint = { (index: Int) in index > tokenStep ? endpoint : withToken }
        // The CurlTransport clients from no layer to all of them, the URLSession one, raw URLSession:
        // 20 requests each in turn, so that every one of them meets the machine in the same state.
        let senders: [() async throws -> Void] =
            partial.enumerated().map { index, client in { _ = try await client.send(partialEndpoint(index)) } }
            + [
                { _ = try await chains[0].send(endpoint) }, { _ = try await chains[1].send(endpoint) },
                {
                    let (data, _) = try await self.raw.data(for: request)
                    _ = try JSONDecoder().decode(RawEnvelope<[Order]>.self, from: data)
                },
            ]
        let medians = try await Harness.alternated(
            repetitions: repetitions, count: count, block: 20,
            warmUp: { for _ in 0..<100 { for send in senders { try await send() } } }, senders: senders)
        let (plain, full, session, baseline) = (medians[0], medians[4], medians[5], medians[6])
        // Microseconds each layer adds to a request: the step from one client to the next.
        let steps = zip(medians[0...3], medians[1...4]).map { 1e6 / $1 - 1e6 / $0 }
        let costs = zip(Self.chainSteps, steps)
            .map { "\($0) \(String(format: "%+.0f", $1))" }.joined(separator: ", ")
        let inMemory = try await chainCostInMemory()
        let memoryCosts = zip(Self.chainSteps, inMemory)
            .map { "\($0) \(String(format: "%+.1f", $1))" }.joined(separator: ", ")
        let detail = "\(count) sequential GETs through headers, params, token, HMAC signing, envelope"
        return [
            .ratio(
                "S3", "\(detail) — \(transportName)", unit: "req/s", courier: full, baseline: baseline,
                higherIsBetter: true, minimum: 0.95),
            .ratio(
                "S3-urlsession", "\(detail) — URLSessionTransport", unit: "req/s", courier: session,
                baseline: baseline, higherIsBetter: true, minimum: nil),
            .ratio(
                "S3-chain",
                "the chain against the same client with no layer, \(transportName); µs per request: \(costs);"
                    + " in memory (no network) \(memoryCosts)",
                unit: "req/s", courier: full, baseline: plain, higherIsBetter: true, minimum: 0.85),
        ]
    }

    /// The steps of S3's chain, one more per client: the layers and the session's token.
    static let chainSteps = ["headers", "parameters", "token", "signing"]

    /// A client with the first `steps` of ``chainSteps``: the token is a session's, which holds
    /// a token the peer takes.
    static func chain(_ baseURL: URL, _ transport: any Transport, steps: Int) -> NetworkClient {
        var configuration = NetworkClient.Configuration(baseURL: baseURL, transport: transport)
        let layers: [String: any Interceptor] = [
            "headers": .headers(["X-App": "bench", "Accept-Language": "en"]),
            "parameters": .commonParameters(["version": "2.4.1", "deviceId": "bench-device-0001", "os": "linux"]),
            "signing": .signing(.hmacSHA256(secret: Data("benchmark-secret".utf8))),
        ]
        for step in chainSteps.prefix(steps) {
            if let layer = layers[step] {
                configuration.interceptors.append(layer)
            } else {
                configuration.session = Session(
                    store: InMemoryTokenStore(credential: Credential(accessToken: Peer.freshToken, userID: "bench")))
            }
        }
        return NetworkClient(configuration: configuration)
    }

    /// Microseconds the layers add to a request when the transport answers from memory: the
    /// chain's own work, without the network's noise (the median of interleaved batches).
    private func chainCostInMemory() async throws -> [Double] {
        struct Answer: Transport {
            let response: HTTPResponse
            func send(_ request: HTTPRequest) async throws -> HTTPResponse { response }
        }
        let answer = Answer(
            response: HTTPResponse(
                status: 200, headers: ["Content-Type": "application/json"],
                body: Data(#"{"code":0,"msg":"ok","data":[]}"#.utf8)))
        let clients = (0...Self.chainSteps.count).map {
            Self.chain(URL(string: "https://api.example.com/")!, answer, steps: $0)
        }
        let endpoint = Endpoint<[Order]>.get("profile", query: ["page": "1"])
        let sends = quick ? 500 : 3_000
        func microseconds(_ client: NetworkClient) async throws -> Double {
            try await Harness.seconds { for _ in 0..<sends { _ = try await client.send(endpoint) } } / Double(sends)
                * 1e6
        }
        let medians = try await Harness.interleaved(
            repetitions: quick ? 3 : 9, warmUp: { for client in clients { _ = try await microseconds(client) } },
            runs: clients.map { client in { try await microseconds(client) } })
        return zip(medians.dropFirst(), medians).map { $0 - $1 }
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
            configuration.session = Session(
                store: InMemoryTokenStore(credential: Credential(accessToken: "expired")),
                refresh: { refresh in
                    fetches.increment()
                    return Credential(accessToken: try await refresh.client.send(Endpoint<String>.post("token")))
                })
            let client = NetworkClient(configuration: configuration)
            // Each of the storm's requests meets the expired token on its own, as in S9's first
            // version, rather than sharing one transfer.
            let endpoint = Endpoint<[Order]>.get("profile").sharingIdenticalRequests(false)
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
                meetsTarget: refreshes.allSatisfy { $0 == 1 }),
            // One refresh and each request sent twice: about two calm rounds (at most 2.5).
            .ratio(
                "S9-time", "the storm's time against the calm round's, median of \(repetitions)", unit: "ms",
                courier: storm, baseline: calm, higherIsBetter: false, minimum: 1 / 2.5),
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
