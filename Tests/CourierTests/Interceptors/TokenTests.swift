import Courier
import CourierTesting
import Foundation
import Testing

/// The token layer against a loopback backend whose token endpoint counts its calls.
@Suite struct TokenTests {
    /// A backend with `/v1/token` (issues `t1`, `t2`, … or fails) and `/v1/data` (accepts only
    /// the newest token, answering 401 or business code 401001 otherwise).
    final class TokenBackend: @unchecked Sendable {
        let server: LoopbackServer
        private let lock = NSLock()
        private var issued = 0
        var failing = false
        var expiryAsBusinessCode = false

        init() throws { server = try LoopbackServer() }

        var tokenHits: Int { server.requests.filter { $0.path == "/v1/token" }.count }
        var dataHits: Int { server.requests.filter { $0.path == "/v1/data" }.count }

        func start() {
            server.route("/v1/token") { [self] _ in
                let (fail, number): (Bool, Int) = lock.withLock {
                    if !failing { issued += 1 }
                    return (failing, issued)
                }
                try await Task.sleep(for: .milliseconds(50))  // let callers pile up behind the refresh
                return fail ? .init(status: 500) : .envelope(data: ["token": "t\(number)"])
            }
            server.route("/v1/data") { [self] request in
                let valid = lock.withLock { "t\(issued)" }
                let sent = request.headers["token"] ?? request.query["token"] ?? request.form["token"]
                guard sent == valid else {
                    return lock.withLock { expiryAsBusinessCode }
                        ? .json(#"{"code":401001,"msg":"token expired"}"#) : .init(status: 401)
                }
                return .envelope(data: sent ?? "")
            }
        }

        func client(store: any TokenStore, placement: TokenInterceptor.Placement = .header("token"))
            -> (NetworkClient, TokenInterceptor)
        {
            let base = server.baseURL.appendingPathComponent("v1/")
            // The fetch sends through the same client; its handle skips the token layer.
            let layer = TokenInterceptor(
                store: store, placement: placement, refreshCodes: [401_001], fetchBackoff: .milliseconds(20)
            ) { refresh in
                struct Token: Decodable, Sendable { let token: String }
                return Credential(accessToken: try await refresh.client.send(Endpoint<Token>.post("token")).token)
            }
            // 1,000 requests share 16 connections: under a sanitizer the last of them wait most of
            // the 30 s timeout.
            let configuration = NetworkClient.Configuration(
                baseURL: base, timeout: .seconds(30) * TestTiming.scale, interceptors: [layer],
                transport: TestTransport.make())
            return (NetworkClient(configuration: configuration), layer)
        }
    }

    /// The code a GET of `data` fails with, or `nil` when it succeeds.
    private static func failureCode(_ client: NetworkClient) async -> NetworkError.Code? {
        do {
            _ = try await client.send(Endpoint<String>.get("data"))
            return nil
        } catch {
            return error.code
        }
    }

    @Test(
        "the token factory passes its options on: no refresh on 401 when told so, and no more refreshes than the limit")
    func factoryOptions() async throws {
        let backend = try TokenBackend()
        defer { backend.server.stop() }
        backend.start()
        struct Token: Decodable, Sendable { let token: String }
        let fetch: @Sendable (TokenRefresh) async throws -> Credential = { refresh in
            Credential(accessToken: try await refresh.client.send(Endpoint<Token>.post("token")).token)
        }
        func client(_ layer: TokenInterceptor) -> NetworkClient {
            NetworkClient(
                configuration: .init(
                    baseURL: backend.server.baseURL.appendingPathComponent("v1/"), interceptors: [layer],
                    transport: TestTransport.make()))
        }

        let stale = Credential(accessToken: "expired")
        let noRefresh = client(
            .token(store: InMemoryTokenStore(credential: stale), refreshesOnUnauthorized: false, fetch: fetch))
        #expect(await Self.failureCode(noRefresh) == .httpStatus)
        #expect(backend.tokenHits == 0)

        let store = InMemoryTokenStore(credential: stale)
        let limited = client(.token(store: store, refreshLimit: 1, fetch: fetch))
        #expect(try await limited.send(Endpoint<String>.get("data")) == "t1")
        await store.setCredential(stale)
        #expect(await Self.failureCode(limited) == .tokenRefreshFailed)
        #expect(backend.tokenHits == 1)
    }

    @Test("1,000 concurrent requests meeting an expired token cause exactly one refresh, and all succeed")
    func refreshStorm() async throws {
        let backend = try TokenBackend()
        defer { backend.server.stop() }
        backend.start()
        let (client, layer) = backend.client(store: InMemoryTokenStore(credential: Credential(accessToken: "expired")))
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            let data = Endpoint<String>.get("data").sharingIdenticalRequests(false)
            for _ in 0..<1000 { group.addTask { try await client.send(data) } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(results.count == 1000)
        #expect(Set(results) == ["t1"])
        #expect(backend.tokenHits == 1)
        #expect(await layer.refreshCount == 1)
        let fetches = backend.server.requests.filter { $0.path == "/v1/token" }
        #expect(fetches.allSatisfy { $0.headers["token"] == nil }, "the fetch skips the token layer")
        print(
            "refresh storm: 1000 requests, \(backend.tokenHits) refresh, \(backend.dataHits) data requests on the wire")
    }

    @Test("a missing token is fetched first; a business expiry code refreshes like a 401")
    func fetchWhenMissingAndBusinessCode() async throws {
        let backend = try TokenBackend()
        defer { backend.server.stop() }
        backend.expiryAsBusinessCode = true
        backend.start()
        let store = InMemoryTokenStore()
        let (client, _) = backend.client(store: store, placement: .parameter("token"))
        #expect(try await client.send(Endpoint<String>.get("data")) == "t1")
        #expect(await store.credential()?.accessToken == "t1")
        // The backend rotates the token; the next call meets code 401001 and refreshes once.
        _ = try await backend.client(store: InMemoryTokenStore()).0.send(Endpoint<String>.post("data"))
        #expect(try await client.send(Endpoint<String>.post("data")) == "t3")
        #expect(backend.tokenHits == 3)
        #expect(backend.server.requests.last?.form["token"] == "t3")
    }

    /// A store that has been updated by someone else between two reads: first `t1`, then `t2`.
    actor RotatedStore: TokenStore {
        private var reads = 0
        func credential() async -> Credential? {
            reads += 1
            return Credential(accessToken: reads == 1 ? "t1" : "t2")
        }
        func setCredential(_ credential: Credential?) async {}
    }

    @Test("a request that failed with an older token than the stored one is replayed without a refresh")
    func olderTokenReplayed() async throws {
        let backend = try TokenBackend()
        defer { backend.server.stop() }
        backend.start()
        _ = try await backend.client(store: InMemoryTokenStore()).0.send(Endpoint<String>.get("data"))
        _ = try await backend.client(store: InMemoryTokenStore(credential: Credential(accessToken: "stale"))).0.send(
            Endpoint<String>.get("data"))
        #expect(backend.tokenHits == 2)  // the server now wants t2
        let (client, layer) = backend.client(store: RotatedStore())
        #expect(try await client.send(Endpoint<String>.get("data")) == "t2")
        #expect(backend.tokenHits == 2)
        #expect(await layer.refreshCount == 0)
        let sent = backend.server.requests.suffix(2).map { $0.headers["token"] }
        #expect(sent == ["t1", "t2"])
    }

    @Test("a failing token endpoint fails every caller once, and is hit a bounded number of times")
    func refreshFailureStorm() async throws {
        let backend = try TokenBackend()
        defer { backend.server.stop() }
        backend.failing = true
        backend.start()
        let (client, _) = backend.client(store: InMemoryTokenStore())
        let codes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<300 {
                group.addTask {
                    do {
                        _ = try await client.send(Endpoint<String>.get("data").sharingIdenticalRequests(false))
                        return "success"
                    } catch let error as NetworkError {
                        return error.code.rawValue
                    } catch {
                        return "foreign"
                    }
                }
            }
            return await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        }
        #expect(codes == ["tokenRefreshFailed": 300])
        // At most 5 refreshes per window, 3 tries each.
        #expect(backend.tokenHits >= 3 && backend.tokenHits <= 15, "\(backend.tokenHits)")
        #expect(backend.dataHits == 0)
        print("refresh failure storm: 300 callers failed once each; token endpoint hit \(backend.tokenHits) times")
    }

    @Test("fetching the token retries with backoff, then the request goes out with it")
    func fetchRetries() async throws {
        let tries = Counter()
        let layer = TokenInterceptor(store: InMemoryTokenStore(), fetchBackoff: .milliseconds(100)) { _ in
            struct Flaky: Error {}
            if tries.increment() < 3 { throw Flaky() }
            return Credential(accessToken: "third-time")
        }
        let transport = MockTransport { _ in .json(#"{"code":0}"#) }
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, interceptors: [layer], transport: transport))
        let start = ContinuousClock.now
        _ = try await client.send(Endpoint<EmptyResponse>.get("a"))
        #expect(tries.increment() == 4, "three fetches, then this probe")
        #expect(ContinuousClock.now - start >= .milliseconds(190))
        #expect(transport.requests.map { $0.headers["token"] } == ["third-time"])
        #expect(await layer.refreshCount == 1)
    }

    @Test(
        "the token goes where it is placed",
        arguments: [TokenInterceptor.Placement.bearer, .header("token"), .parameter("token")])
    func placement(_ placement: TokenInterceptor.Placement) async throws {
        let transport = MockTransport { _ in .json(#"{"code":0}"#) }
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!,
                interceptors: [
                    .token(store: InMemoryTokenStore(credential: Credential(accessToken: "abc")), placement: placement)
                    { _ in Credential(accessToken: "new") }
                ],
                transport: transport))
        _ = try await client.send(Endpoint<EmptyResponse>.get("a", query: ["token": "old"]))
        let request = try #require(transport.requests.first)
        switch placement {
        case .header(let name, let prefix):
            #expect(request.headers[name] == prefix + "abc")
        case .parameter(let name):
            #expect(request.query.items.filter { $0.name == name }.map(\.value) == ["abc"])
        }
    }
}
