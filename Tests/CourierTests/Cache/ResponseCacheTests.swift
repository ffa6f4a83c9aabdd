import Courier
import CourierTesting
import Foundation
import Testing

/// The response cache over real HTTP: what each policy reads and stores, whose answers a session
/// sees, and what empties it.
@Suite struct ResponseCacheTests {
    /// A clock the test moves by hand.
    final class World: @unchecked Sendable {
        private let lock = NSLock()
        private var date = Date(timeIntervalSince1970: 1_700_000_000)

        var now: Date { lock.withLock { date } }
        func advance(_ seconds: TimeInterval) { lock.withLock { date += seconds } }
    }

    let world = World()
    let store = MemoryCacheStore()
    /// Ann is signed in.
    let session = Session(
        store: InMemoryTokenStore(credential: Credential(accessToken: "ann", userID: "ann")), logInCodes: [99])

    private func backend(_ configure: (inout NetworkClient.Configuration) -> Void = { _ in }) throws -> Backend {
        let world = world
        let store = store
        let session = session
        return try Backend {
            $0.session = session
            $0.cache = ResponseCache(store: store, now: { world.now })
            configure(&$0)
        }
    }

    @Test("cache first: a fresh entry answers without the network, and says so")
    func cacheFirstHit() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: counter.increment(), title: "Tea")]) }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.cacheFirst(maxAge: .seconds(60)))

        let first = try await backend.client.reply(to: endpoint)
        world.advance(59)
        let second = try await backend.client.reply(to: endpoint)

        #expect(first.cached == nil && first.value.first?.id == 1)
        #expect(second.value.first?.id == 1)
        #expect(second.cached?.storedAt == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(second.cached?.isStale == false)
        #expect(backend.server.requests.count == 1)
    }

    @Test("cache first: an entry past its age goes to the network, and the answer replaces it")
    func cacheFirstExpiry() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: counter.increment(), title: "Tea")]) }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.cacheFirst(maxAge: .seconds(60)))

        _ = try await backend.client.send(endpoint)
        world.advance(60)
        let refreshed = try await backend.client.reply(to: endpoint)
        let again = try await backend.client.reply(to: endpoint)

        #expect(refreshed.cached == nil && refreshed.value.first?.id == 2)
        #expect(again.cached != nil && again.value.first?.id == 2)
        #expect(backend.server.requests.count == 2)
    }

    @Test("an entry stored in the future (the clock was set back) is not fresh")
    func clockSetBack() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.cacheFirst(maxAge: .seconds(60)))

        _ = try await backend.client.send(endpoint)
        world.advance(-3600)
        _ = try await backend.client.send(endpoint)

        #expect(backend.server.requests.count == 2)
    }

    @Test("one user's answers are never given to another, even from one store, and each keeps its own")
    func sessionsAreApart() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/profile") { request in
            .envelope(data: "\(request.headers["token"] ?? "nobody")'s profile \(counter.increment())")
        }
        let endpoint = Endpoint<String>.get("profile").caching(.cacheFirst(maxAge: .seconds(600)))
        // Two more clients on the same store: Bob's session, and nobody's.
        let bob = NetworkClient(
            configuration: .init(
                baseURL: backend.client.configuration.baseURL,
                session: Session(store: InMemoryTokenStore(credential: Credential(accessToken: "bob", userID: "bob"))),
                cache: ResponseCache(store: store), transport: TestTransport.make()))
        let nobody = NetworkClient(
            configuration: .init(
                baseURL: backend.client.configuration.baseURL, cache: ResponseCache(store: store),
                transport: TestTransport.make()))

        let annFirst = try await backend.client.send(endpoint)
        let bobFirst = try await bob.send(endpoint)
        let nobodyFirst = try await nobody.send(endpoint)
        let annAgain = try await backend.client.reply(to: endpoint)
        let bobAgain = try await bob.reply(to: endpoint)

        #expect([annFirst, bobFirst, nobodyFirst] == ["ann's profile 1", "bob's profile 2", "nobody's profile 3"])
        #expect(annAgain.value == annFirst && annAgain.cached != nil)
        #expect(bobAgain.value == bobFirst && bobAgain.cached != nil)
        #expect(backend.server.requests.count == 3)
    }

    @Test("a session whose store cannot be read does not use the cache: the request goes out and nothing is stored")
    func unreadableSession() async throws {
        struct KeychainLocked: Error {}
        struct LockedStore: TokenStore {
            func credential() async throws -> Credential? { throw KeychainLocked() }
            func setCredential(_ credential: Credential?) async throws { throw KeychainLocked() }
        }
        let store = store
        let backend = try Backend {
            $0.session = Session(store: LockedStore())
            $0.cache = ResponseCache(store: store)
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/news") { _ in .envelope(data: "news") }
        let endpoint = Endpoint<String>.get("news").skipping(.token).caching(.cacheFirst(maxAge: .seconds(600)))

        _ = try await backend.client.send(endpoint)
        _ = try await backend.client.send(endpoint)
        let error = await networkError { _ = try await backend.client.send(Endpoint<String>.get("news")) }

        #expect(backend.server.requests.count == 2)
        #expect(store.count == 0)
        #expect(error?.code == .credentialStore && error?.underlying is KeychainLocked)
    }

    @Test("the key is the request the endpoint describes: a signed request, new every time, still hits")
    func signedRequestsHit() async throws {
        let backend = try backend {
            $0.interceptors = [
                .commonParameters(["version": "3.2.0"]) { _ in ["deviceId": UUID().uuidString] },
                .signing(.hmacSHA256(secret: Data("secret".utf8))),
            ]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }
        let endpoint = Endpoint<[Order]>.post("orders", body: .form(["page": "1"])).idempotent()
            .caching(.cacheFirst(maxAge: .seconds(60)))

        _ = try await backend.client.send(endpoint)
        let second = try await backend.client.reply(to: endpoint)

        #expect(second.cached != nil)
        #expect(backend.server.requests.count == 1)
        #expect(backend.server.requests.first?.form["sign"] != nil)
    }

    @Test("a different query, header, body, path or skipped layer is a different entry")
    func keyCoversTheRequest() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: counter.increment(), title: "Tea")]) }
        backend.server.route("/v1/Orders") { _ in .envelope(data: [Order(id: counter.increment(), title: "Tea")]) }
        let policy = CachePolicy.cacheFirst(maxAge: .seconds(60))
        let endpoints: [Endpoint<[Order]>] = [
            .get("orders"), .get("orders", query: ["page": "2"]), .get("Orders"),
            .get("orders", headers: ["Accept": "text/csv"]), Endpoint.get("orders").skipping(.token),
            Endpoint.post("orders", body: .form(["page": "1"])).idempotent(),
            Endpoint.post("orders", body: .form(["page": "2"])).idempotent(),
            Endpoint.post("orders", body: .json(["page": "1"])).idempotent(),
        ]

        for endpoint in endpoints { _ = try await backend.client.send(endpoint.caching(policy)) }
        for endpoint in endpoints { _ = try await backend.client.send(endpoint.caching(policy)) }

        #expect(backend.server.requests.count == endpoints.count)
        #expect(store.count == endpoints.count)
    }

    @Test("only a business success is stored: a failing code is thrown again from the network")
    func businessFailureNotStored() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(code: 4001, message: "Sold out", data: [Order]()) }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.cacheFirst(maxAge: .seconds(60)))

        for _ in 0..<2 {
            let error = await networkError { _ = try await backend.client.send(endpoint) }
            #expect(error?.code == .business)
        }
        #expect(backend.server.requests.count == 2)
        #expect(store.count == 0)
    }

    @Test(
        "an answer that forbids storing is not stored",
        arguments: [
            ["Cache-Control": "private, no-store"], ["Vary": "Accept, *"],
            // A stray or unclosed quote does not hide the directive after it.
            ["Cache-Control": #"private", no-store"#], ["Cache-Control": #"max-age="60, no-store"#],
            ["Cache-Control": #"no-cache="Set-Cookie", no-store"#],
        ] as [HTTPHeaders])
    func forbiddenNotStored(_ headers: HTTPHeaders) async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in
            var response = LoopbackServer.Response.envelope(data: [Order(id: 1, title: "Tea")])
            response.headers.merge(headers)
            return response
        }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.cacheFirst(maxAge: .seconds(60)))

        _ = try await backend.client.send(endpoint)
        _ = try await backend.client.send(endpoint)

        #expect(backend.server.requests.count == 2)
        #expect(store.count == 0)
    }

    @Test("requests with other values of the endpoint's headers never share an entry, Vary or not")
    func varyingHeaders() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/news") { request in
            var response = LoopbackServer.Response.envelope(
                data: "\(request.headers["X-Region"] ?? "none") \(counter.increment())")
            if request.headers["X-Vary"] != nil { response.headers["Vary"] = "X-Region" }
            return response
        }
        let policy = CachePolicy.cacheFirst(maxAge: .seconds(60))
        let east = Endpoint<String>.get("news", headers: ["X-Region": "east"]).caching(policy)
        let west = Endpoint<String>.get("news", headers: ["X-Region": "west", "X-Vary": "1"]).caching(policy)

        #expect(try await backend.client.send(east) == "east 1")
        #expect(try await backend.client.send(west) == "west 2")
        #expect(try await backend.client.send(west) == "west 2")
        #expect(try await backend.client.send(east) == "east 1")
        #expect(backend.server.requests.count == 2)
    }

    @Test("a stored answer that no longer decodes is removed, and the network answers")
    func undecodableEntry() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/item") { _ in .envelope(data: ["id": 1]) }
        struct Item: Decodable, Sendable { let id: Int }
        let endpoint = Endpoint<Item>.get("item").caching(.cacheFirst(maxAge: .seconds(60)))

        _ = try await backend.client.send(endpoint)
        let key = try #require(store.keys.first)
        // What an older version of the app stored under the same key, in a shape this one cannot read.
        await store.store(
            CachedResponse(
                HTTPResponse(
                    status: 200, headers: ["Content-Type": "application/json"],
                    body: Data(#"{"code":0,"data":{"id":"one"}}"#.utf8)), storedAt: world.now),
            for: key)
        let reply = try await backend.client.reply(to: endpoint)

        #expect(reply.cached == nil && reply.value.id == 1)
        #expect(backend.server.requests.count == 2)
        #expect(store.count == 1)
    }

    @Test("a session the backend ended empties the cache, and so does removeAll()")
    func purges() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }
        backend.server.route("/v1/me") { _ in .envelope(code: 99, message: "Log in", data: "") }
        let orders = Endpoint<[Order]>.get("orders").caching(.cacheFirst(maxAge: .seconds(60)))

        _ = try await backend.client.send(orders)
        #expect(store.count == 1)
        // Code 99 and no way to log in again: the session ends.
        let error = await networkError { _ = try await backend.client.send(Endpoint<String>.get("me")) }
        #expect(error?.code == .sessionExpired)
        #expect(store.count == 0)

        _ = try await backend.client.send(orders)
        #expect(store.count == 1)
        try await backend.client.configuration.cache?.removeAll()
        #expect(store.count == 0)
        _ = try await backend.client.send(orders)
        #expect(backend.server.requests.filter { $0.path == "/v1/orders" }.count == 3)
    }

    @Test("bodies that are files or multipart forms, and downloads, are never cached")
    func uncacheable() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/media") { _ in .envelope(data: "ok") }
        let policy = CachePolicy.cacheFirst(maxAge: .seconds(60))
        let endpoint = Endpoint<String>.post("media", body: .multipart(MultipartForm(fields: ["a": "b"])))

        _ = try await backend.client.send(endpoint.caching(policy))
        _ = try await backend.client.send(endpoint.caching(policy))

        #expect(backend.server.requests.count == 2)
        #expect(store.count == 0)
    }

    @Test("network only, the default, neither reads nor writes")
    func networkOnly() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }

        _ = try await backend.client.send(Endpoint<[Order]>.get("orders"))
        _ = try await backend.client.send(Endpoint<[Order]>.get("orders"))

        #expect(backend.server.requests.count == 2)
        #expect(store.count == 0)
    }

    @Test("only GET, HEAD and an idempotent POST use the cache: a POST, PUT or DELETE goes to the network every time")
    func unsafeMethodsNotCached() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }
        let policy = CachePolicy.cacheFirst(maxAge: .seconds(60))
        let endpoints: [Endpoint<[Order]>] = [
            .post("orders", body: .form(["title": "Tea"])), .put("orders", body: .form(["title": "Tea"])),
            .delete("orders"),
        ]

        for endpoint in endpoints + endpoints { _ = try await backend.client.send(endpoint.caching(policy)) }

        #expect(backend.server.requests.count == 6)
        #expect(store.count == 0)
    }

    @Test("an answer that arrives after a purge is not stored, nor one after a logout or another login")
    func purgeAndSwitchInFlight() async throws {
        let backend = try backend()
        defer { backend.server.stop() }

        #expect(try await answer(of: "profile0", on: backend) {}.get() == "a profile")
        #expect(store.count == 1, "stored when nothing happens meanwhile")
        _ = try await answer(of: "profile", on: backend) { try await backend.client.configuration.cache?.removeAll() }
            .get()
        #expect(store.count == 0)
        let switched = try await answer(of: "profile2", on: backend) {
            try await session.logIn(Credential(accessToken: "bob", userID: "bob"))
        }
        #expect(store.count == 0)
        #expect(throws: NetworkError.self, "Ann's answer is not given once Bob is signed in") { try switched.get() }
        let loggedOut = try await answer(of: "profile3", on: backend) { try await session.logOut() }
        #expect(store.count == 0)
        #expect(throws: NetworkError.self) { try loggedOut.get() }
    }

    /// Sends a cache-first `GET` of `path` and runs `meanwhile` once the server has it, before
    /// the answer leaves.
    private func answer(of path: String, on backend: Backend, meanwhile: () async throws -> Void) async rethrows
        -> Result<String, any Error>
    {
        let gate = Gate()
        backend.server.route("/v1/\(path)") { _ in
            await gate.pass()
            return .envelope(data: "a profile")
        }
        let request = Task {
            try await backend.client.send(Endpoint<String>.get(path).caching(.cacheFirst(maxAge: .seconds(600))))
        }
        #expect(await backend.server.waitForEvents { $0.contains(.received(method: "GET", target: "/v1/\(path)")) })
        try await meanwhile()
        gate.open()
        return await request.result
    }

    @Test(
        "a late answer to a request that left first does not replace, nor remove, the stored answer to a later one",
        arguments: [200, 404])
    func lateAnswer(status: Int) async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let counter = Counter()
        let gate = Gate()
        backend.server.route("/v1/orders") { _ in
            let id = counter.increment()
            guard id == 1 else { return .envelope(data: [Order(id: id, title: "Tea")]) }
            await gate.pass()
            return status == 200 ? .envelope(data: [Order(id: 1, title: "Tea")]) : .init(status: status)
        }
        // Not shared, so the second request is a transfer of its own.
        let endpoint = Endpoint<[Order]>.get("orders").caching(.cacheFirst(maxAge: .seconds(600)))
            .sharingIdenticalRequests(false)

        let first = Task { try await backend.client.reply(to: endpoint) }
        await gate.arrivals(1)
        let second = try await backend.client.reply(to: endpoint)
        gate.open()
        let late = try? await first.value
        let third = try await backend.client.reply(to: endpoint)

        #expect(second.value.first?.id == 2)
        #expect(late?.value.first?.id == (status == 200 ? 1 : nil), "the late caller gets its own answer")
        #expect(third.cached != nil && third.value.first?.id == 2, "the later answer stays")
        #expect(backend.server.requests.count == 2)
    }

    @Test("an earlier request's write that lands after a later one's leaves no entry, never the earlier answer")
    func writesLandOutOfOrder() async throws {
        // The first write waits at the gate: a disk write still under way.
        let gate = Gate()
        let writes = Counter()
        let store = HookedStore(write: { _, store in
            if writes.increment() == 1 { await gate.pass() }
            await store()
        })
        let backend = try Backend { $0.cache = ResponseCache(store: store) }
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: counter.increment(), title: "Tea")]) }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.cacheFirst(maxAge: .seconds(600)))
            .sharingIdenticalRequests(false)

        let first = Task { try await backend.client.reply(to: endpoint) }
        await gate.arrivals(1)
        let second = try await backend.client.reply(to: endpoint)
        gate.open()
        _ = try await first.value
        let third = try await backend.client.reply(to: endpoint)

        #expect(second.value.first?.id == 2)
        #expect(third.value.first?.id != 1, "the earlier answer is not given as the stored one")
    }

    @Test("an entry read while a purge ran is not given: the network answers")
    func readDuringPurge() async throws {
        // Once held, a read waits at the gate after finding the entry: a disk read that opened
        // the file just before a purge removed it.
        let held = Flag()
        let gate = Gate()
        let store = HookedStore(read: { found in
            if held.isSet { await gate.pass() }
            return found
        })
        let cache = ResponseCache(store: store)
        let backend = try Backend { $0.cache = cache }
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: counter.increment(), title: "Tea")]) }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.cacheFirst(maxAge: .seconds(600)))
        _ = try await backend.client.send(endpoint)

        held.set()
        let reading = Task { try await backend.client.reply(to: endpoint) }
        await gate.arrivals(1)
        try await cache.removeAll()
        gate.open()
        let reply = try await reading.value

        #expect(reply.cached == nil && reply.value.first?.id == 2)
    }

    @Test("every Vary and Cache-Control field counts, and a Vary on a header the endpoint does not set forbids storing")
    func repeatedAndUnseenFields() async throws {
        let backend = try backend {
            $0.interceptors = [.headers { _ in ["Accept-Language": "zh-Hans"] }]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in
            LoopbackServer.Response(
                headers: HTTPHeaders([
                    .init(name: "Content-Type", value: "application/json"),
                    .init(name: "Cache-Control", value: "public"),
                    .init(name: "Cache-Control", value: "no-store"),
                ]),
                body: Data(#"{"code":0,"data":"a"}"#.utf8))
        }
        backend.server.route("/v1/b") { _ in
            LoopbackServer.Response(
                headers: HTTPHeaders([
                    .init(name: "Content-Type", value: "application/json"),
                    .init(name: "Vary", value: "Accept-Encoding"),
                    .init(name: "Vary", value: "Accept-Language"),
                ]),
                body: Data(#"{"code":0,"data":"b"}"#.utf8))
        }
        let policy = CachePolicy.cacheFirst(maxAge: .seconds(60))

        for path in ["a", "b", "a", "b"] {
            _ = try await backend.client.send(Endpoint<String>.get(path).caching(policy))
        }

        #expect(backend.server.requests.count == 4)
        #expect(store.count == 0)
    }

    @Test("Set-Cookie is not stored, and a 404 or 410 removes the entry")
    func cookiesAndGone() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let gone = Counter()
        backend.server.route("/v1/item") { _ in
            if gone.increment() > 1 { return .json(#"{"error":"gone"}"#, status: 410) }
            var response = LoopbackServer.Response.envelope(data: "item")
            response.headers.append(name: "Set-Cookie", value: "session=secret")
            return response
        }
        let endpoint = Endpoint<String>.get("item").caching(.offlineFallback)

        _ = try await backend.client.send(endpoint)
        let key = try #require(store.keys.first)
        #expect(await store.response(for: key)?.headers["Set-Cookie"] == nil)
        let error = await networkError { _ = try await backend.client.send(endpoint) }

        #expect(error?.code == .httpStatus && error?.status == 410)
        #expect(store.count == 0)
    }

}
