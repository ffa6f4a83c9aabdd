import Courier
import CourierTesting
import Foundation
import Testing

/// The session's token against a loopback backend whose token endpoint counts its calls: where
/// it goes, one refresh for many requests, and a refresh that fails.
@Suite struct SessionTokenTests {
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

        /// A client whose session holds `token`, refreshing it at `/v1/token`.
        func client(
            token: String? = "expired", store: (any TokenStore)? = nil,
            placement: Session.TokenPlacement = .header("token"), refreshes: Counter = Counter()
        ) -> NetworkClient {
            let session = Session(
                store: store ?? InMemoryTokenStore(credential: token.map { Credential(accessToken: $0) }),
                placement: placement, refreshCodes: [401_001], limits: .init(refreshBackoff: .milliseconds(20)),
                refresh: { refresh in
                    _ = refreshes.increment()
                    struct Token: Decodable, Sendable { let token: String }
                    return Credential(accessToken: try await refresh.client.send(Endpoint<Token>.post("token")).token)
                })
            // 1,000 requests share 16 connections: under a sanitizer the last of them wait most of
            // the 30 s timeout.
            return NetworkClient(
                configuration: .init(
                    baseURL: server.baseURL.appendingPathComponent("v1/"), timeout: .seconds(30) * TestTiming.scale,
                    session: session, transport: TestTransport.make()))
        }
    }

    @Test(
        "the token goes where it is placed",
        arguments: [Session.TokenPlacement.bearer, .header("token"), .parameter("token")])
    func placement(_ placement: Session.TokenPlacement) async throws {
        let transport = MockTransport { _ in .json(#"{"code":0}"#) }
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "abc")), placement: placement)
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, session: session, transport: transport))
        _ = try await client.send(Endpoint<EmptyResponse>.get("a", query: ["token": "old"]))
        let request = try #require(transport.requests.first)
        switch placement {
        case .header(let name, let prefix):
            #expect(request.headers[name] == prefix + "abc")
        case .parameter(let name):
            #expect(request.query.items.filter { $0.name == name }.map(\.value) == ["abc"])
        }
    }

    @Test("while nobody is signed in requests go without a token and their answers come back as they are")
    func signedOut() async throws {
        let transport = MockTransport { request in
            guard let token = request.headers["token"] else {
                return request.url.path.hasSuffix("/me") ? .init(status: 401) : .json(#"{"code":99,"msg":"log in"}"#)
            }
            return try .envelope(data: token)
        }
        let logins = Counter()
        let session = Session(
            logInCodes: [99],
            logIn: { _ in
                _ = logins.increment()
                return Credential(accessToken: "never")
            })
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, session: session, transport: transport))

        let unauthorized = await networkError { _ = try await client.send(Endpoint<String>.get("me")) }
        let notLoggedIn = await networkError { _ = try await client.send(Endpoint<String>.get("orders")) }
        try await session.logIn(Credential(accessToken: "ann-token"))
        let me = try await client.send(Endpoint<String>.get("me"))

        #expect(unauthorized?.code == .httpStatus && unauthorized?.status == 401)
        #expect(notLoggedIn?.code == .business && notLoggedIn?.businessCode == 99)
        #expect(me == "ann-token")
        #expect(logins.current == 0, "no silent login for a session nobody signed in to")
        #expect(transport.requests.map { $0.headers["token"] } == [nil, nil, "ann-token"])
    }

    @Test("1,000 concurrent requests meeting an expired token cause exactly one refresh, and all succeed")
    func refreshStorm() async throws {
        let backend = try TokenBackend()
        defer { backend.server.stop() }
        backend.start()
        let refreshes = Counter()
        let client = backend.client(refreshes: refreshes)
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            let data = Endpoint<String>.get("data").sharingIdenticalRequests(false)
            for _ in 0..<1000 { group.addTask { try await client.send(data) } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(results.count == 1000)
        #expect(Set(results) == ["t1"])
        #expect(backend.tokenHits == 1)
        #expect(refreshes.current == 1)
        let fetches = backend.server.requests.filter { $0.path == "/v1/token" }
        #expect(fetches.allSatisfy { $0.headers["token"] == nil }, "the refresh skips the session's layer")
        print(
            "refresh storm: 1000 requests, \(backend.tokenHits) refresh, \(backend.dataHits) data requests on the wire")
    }

    @Test("a business expiry code refreshes like a 401, with the token in a parameter")
    func businessExpiryCode() async throws {
        let backend = try TokenBackend()
        defer { backend.server.stop() }
        backend.expiryAsBusinessCode = true
        backend.start()
        let client = backend.client(placement: .parameter("token"))
        #expect(try await client.send(Endpoint<String>.get("data")) == "t1")
        // The backend rotates the token; the next call meets code 401001 and refreshes once.
        _ = try await backend.client().send(Endpoint<String>.post("data"))
        #expect(try await client.send(Endpoint<String>.post("data")) == "t3")
        #expect(backend.tokenHits == 3)
        #expect(backend.server.requests.last?.form["token"] == "t3")
    }

    /// A store written by someone else (an app extension) between two reads: first Ann's `t1`,
    /// then `t2` of `laterUser`.
    actor RotatedStore: TokenStore {
        let user: String?
        let laterUser: String?
        private var reads = 0
        init(user: String? = "ann", laterUser: String? = "ann") { (self.user, self.laterUser) = (user, laterUser) }
        func credential() async -> Credential? {
            reads += 1
            return reads == 1
                ? Credential(accessToken: "t1", userID: user) : Credential(accessToken: "t2", userID: laterUser)
        }
        func setCredential(_ credential: Credential?) async {}
    }

    @Test(
        "a token refused while the store holds a newer one (another process refreshed it) is replaced without a refresh",
        arguments: ["ann", nil] as [String?])
    func newerStoredTokenReplayed(user: String?) async throws {
        let backend = try TokenBackend()
        defer { backend.server.stop() }
        backend.start()
        _ = try await backend.client().send(Endpoint<String>.get("data"))
        _ = try await backend.client().send(Endpoint<String>.get("data"))
        #expect(backend.tokenHits == 2)  // the server now wants t2
        let refreshes = Counter()
        // A store that keeps no user ID (both nil) is taken at its word, as the cache takes it.
        let client = backend.client(store: RotatedStore(user: user, laterUser: user), refreshes: refreshes)
        #expect(try await client.send(Endpoint<String>.get("data")) == "t2")
        #expect(backend.tokenHits == 2)
        #expect(refreshes.current == 0)
        let sent = backend.server.requests.suffix(2).map { $0.headers["token"] }
        #expect(sent == ["t1", "t2"])
    }

    @Test("a newer token another process stored for another user is never sent for this one")
    func newerStoredTokenOfAnotherUser() async throws {
        let backend = try TokenBackend()
        defer { backend.server.stop() }
        backend.start()
        _ = try await backend.client().send(Endpoint<String>.get("data"))
        _ = try await backend.client().send(Endpoint<String>.get("data"))
        let before = backend.server.requests.count
        let client = backend.client(store: RotatedStore(laterUser: "bob"))
        let error = await networkError { _ = try await client.send(Endpoint<String>.get("data")) }

        let sent = backend.server.requests.dropFirst(before).filter { $0.path == "/v1/data" }.map {
            $0.headers["token"]
        }
        #expect(sent == ["t1"], "Bob's token is not sent for Ann")
        // Ann's refresh does not replace what the store holds now, Bob's credential.
        #expect(error?.code == .tokenRefreshFailed)
    }

    @Test("a failing token endpoint fails every caller once, and is hit a bounded number of times")
    func refreshFailureStorm() async throws {
        let backend = try TokenBackend()
        defer { backend.server.stop() }
        backend.failing = true
        backend.start()
        let client = backend.client()
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
        #expect(backend.dataHits == 300, "each caller sent once, and not again without a token")
        print("refresh failure storm: 300 callers failed once each; token endpoint hit \(backend.tokenHits) times")
    }

    @Test("a refresh tries again after a pause, then the request goes out with its token")
    func refreshRetries() async throws {
        let tries = Counter()
        let session = Session(
            store: InMemoryTokenStore(credential: Credential(accessToken: "old")),
            limits: .init(refreshBackoff: .milliseconds(100)),
            refresh: { _ in
                struct Flaky: Error {}
                if tries.increment() < 3 { throw Flaky() }
                return Credential(accessToken: "third-time")
            })
        let transport = MockTransport { request in
            request.headers["token"] == "old" ? .init(status: 401) : .json(#"{"code":0}"#)
        }
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, session: session, transport: transport))
        let start = ContinuousClock.now
        _ = try await client.send(Endpoint<EmptyResponse>.get("a"))
        #expect(tries.current == 3)
        #expect(ContinuousClock.now - start >= .milliseconds(190))
        #expect(transport.requests.map { $0.headers["token"] } == ["old", "third-time"])
    }

    @Test("the session's options hold: no refresh on 401 when told so, and no more refreshes than the limit")
    func options() async throws {
        let backend = try TokenBackend()
        defer { backend.server.stop() }
        backend.start()
        struct Token: Decodable, Sendable { let token: String }
        let refresh: @Sendable (TokenRefresh) async throws -> Credential = { refresh in
            Credential(accessToken: try await refresh.client.send(Endpoint<Token>.post("token")).token)
        }
        func client(_ session: Session) -> NetworkClient {
            NetworkClient(
                configuration: .init(
                    baseURL: backend.server.baseURL.appendingPathComponent("v1/"), session: session,
                    transport: TestTransport.make()))
        }
        let stale = Credential(accessToken: "expired")

        let noRefresh = client(
            Session(store: InMemoryTokenStore(credential: stale), refreshesOnUnauthorized: false, refresh: refresh))
        #expect(await networkError { _ = try await noRefresh.send(Endpoint<String>.get("data")) }?.code == .httpStatus)
        #expect(backend.tokenHits == 0)

        let limited = Session(
            store: InMemoryTokenStore(credential: stale), limits: .init(refreshes: 1), refresh: refresh)
        #expect(try await client(limited).send(Endpoint<String>.get("data")) == "t1")
        try await limited.logIn(stale)
        let error = await networkError { _ = try await client(limited).send(Endpoint<String>.get("data")) }
        #expect(error?.code == .tokenRefreshFailed)
        #expect(backend.tokenHits == 1)
    }

    @Test("the store is read once, on the first request, however many follow")
    func storeReadOnce() async throws {
        let reads = Counter()
        struct CountingStore: TokenStore {
            let reads: Counter
            func credential() async throws -> Credential? {
                _ = reads.increment()
                return Credential(accessToken: "abc")
            }
            func setCredential(_ credential: Credential?) async throws {}
        }
        let transport = MockTransport { _ in .json(#"{"code":0}"#) }
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!,
                session: Session(store: CountingStore(reads: reads)), transport: transport))
        for _ in 0..<20 { _ = try await client.send(Endpoint<EmptyResponse>.get("a")) }
        #expect(reads.current == 1)
        #expect(transport.requests.allSatisfy { $0.headers["token"] == "abc" })
    }
}
