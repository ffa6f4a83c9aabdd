import Courier
import CourierTesting
import Foundation
import Testing

/// A request that changes something makes the stored answers it changed stale (RFC 9111 §4.4),
/// over real HTTP: the user edits a profile and the next read shows the edit.
@Suite struct CacheInvalidationTests {
    let store = MemoryCacheStore()

    /// A backend whose `/v1/profile` answers its current version, which a `PUT` (or `POST`) sets;
    /// `/v1/status` answers `status` to a change.
    private func backend(status: Int = 200, headers: HTTPHeaders = [:]) throws -> (Backend, Counter) {
        let store = store
        let backend = try Backend { $0.cache = ResponseCache(store: store) }
        let version = Counter()
        _ = version.increment()
        backend.server.route("/v1/profile") { request in
            if request.method != .get { _ = version.increment() }
            var answer = LoopbackServer.Response.envelope(data: "version \(version.current)")
            answer.status = request.method == .get ? 200 : status
            for field in headers where request.method != .get {
                answer.headers.append(name: field.name, value: field.value)
            }
            return answer
        }
        return (backend, version)
    }

    static let profile = Endpoint<String>.get("profile").caching(.cacheFirst(maxAge: .seconds(600)))

    @Test(
        "a successful PUT, PATCH, DELETE or POST to a URL removes its stored answers, of every type; the next read asks the server",
        arguments: [HTTPMethod.put, .patch, .delete, .post])
    func changeRemovesStoredAnswers(method: HTTPMethod) async throws {
        let (backend, _) = try backend()
        defer { backend.server.stop() }
        let asText = Endpoint<Data>.get("profile", decoding: .data).caching(.cacheFirst(maxAge: .seconds(600)))
        _ = try await backend.client.send(Self.profile)
        _ = try await backend.client.send(asText)
        #expect(store.count == 2)

        _ = try await backend.client.send(Endpoint<String>(method: method, path: "profile", decoding: .envelope))
        let after = try await backend.client.reply(to: Self.profile)

        #expect(after.cached == nil && after.value == "version 2")
        #expect(store.count == 1, "only the new answer")
    }

    @Test("a change that failed leaves the stored answer", arguments: [400, 503])
    func failedChangeKeepsIt(status: Int) async throws {
        let (backend, _) = try backend(status: status)
        defer { backend.server.stop() }
        _ = try await backend.client.send(Self.profile)

        _ = await networkError { _ = try await backend.client.send(Endpoint<String>.put("profile")) }
        let after = try await backend.client.reply(to: Self.profile)

        #expect(after.cached != nil && after.value == "version 1")
    }

    @Test("a successful POST the cache reads with, or OPTIONS, leaves the stored answer")
    func readingMethodsKeepIt() async throws {
        let (backend, version) = try backend()
        defer { backend.server.stop() }
        _ = try await backend.client.send(Self.profile)

        _ = try await backend.client.send(Endpoint<String>.post("profile").idempotent())
        _ = try await backend.client.send(Endpoint<String>(method: .options, path: "profile", decoding: .envelope))
        let after = try await backend.client.reply(to: Self.profile)

        #expect(version.current == 3, "both reached the server and succeeded")
        #expect(after.cached != nil && after.value == "version 1")
    }

    @Test("Location and Content-Location of the same origin are made stale too; another origin's are not")
    func locations() async throws {
        let other = try LoopbackServer()
        defer { other.stop() }
        other.route("/item") { _ in .envelope(data: "other") }
        let otherItem = other.baseURL.appendingPathComponent("item").absoluteString
        let (backend, _) = try backend(
            status: 201, headers: ["Location": "/v1/orders/7", "Content-Location": otherItem])
        defer { backend.server.stop() }
        backend.server.route("/v1/orders/7") { _ in .envelope(data: "order 7") }
        let order = Endpoint<String>.get("orders/7").caching(.cacheFirst(maxAge: .seconds(600)))
        let elsewhere = Endpoint<String>.get(otherItem).caching(.cacheFirst(maxAge: .seconds(600)))
        _ = try await backend.client.send(order)
        _ = try await backend.client.send(elsewhere)

        _ = try await backend.client.send(Endpoint<String>.post("profile"))

        #expect(try await backend.client.reply(to: order).cached == nil, "same origin: asked again")
        #expect(try await backend.client.reply(to: elsewhere).cached != nil, "another origin: kept")
    }

    @Test("a read that began before the change does not store its answer after it")
    func readInFlightDuringChange() async throws {
        let store = store
        let backend = try Backend { $0.cache = ResponseCache(store: store) }
        defer { backend.server.stop() }
        let gate = Gate()
        let version = Counter()
        backend.server.route("/v1/profile") { request in
            if request.method == .put {
                _ = version.increment()
                return .envelope(data: "saved")
            }
            let answer = "version \(version.current)"
            if version.current == 0 { await gate.pass() }
            return .envelope(data: answer)
        }
        let profile = Self.profile.sharingIdenticalRequests(false)

        let early = Task { try await backend.client.send(profile) }
        await gate.arrivals(1)
        _ = try await backend.client.send(Endpoint<String>.put("profile"))
        gate.open()
        let earlyValue = try await early.value
        let after = try await backend.client.reply(to: profile)

        #expect(earlyValue == "version 0", "the early reader gets what it asked for")
        #expect(after.cached == nil && after.value == "version 1", "but it was not stored")
    }
}
