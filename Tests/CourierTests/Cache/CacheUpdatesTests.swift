import Courier
import CourierTesting
import Foundation
import Testing

/// `updates(for:)`: the stored answer first, then the network's, in one loop.
@Suite struct CacheUpdatesTests {
    let clock = ManualClock()
    let store = MemoryCacheStore()

    private func backend() throws -> Backend {
        let clock = clock
        let store = store
        return try Backend { $0.cache = ResponseCache(store: store, now: { clock.now }) }
    }

    /// Every reply of one loop over `updates(for:)`, and the error it ended with, if any.
    private func collect<Response>(_ client: NetworkClient, _ endpoint: Endpoint<Response>) async
        -> (replies: [Reply<Response>], error: NetworkError?)
    {
        var replies: [Reply<Response>] = []
        do {
            for try await reply in client.updates(for: endpoint) { replies.append(reply) }
            return (replies, nil)
        } catch {
            return (replies, error as? NetworkError)
        }
    }

    @Test("the stored answer first, fresh or stale by the endpoint's policy, then the network's, which is stored")
    func cachedThenFresh() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: counter.increment(), title: "Tea")]) }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.cacheFirst(maxAge: .seconds(60)))

        let empty = await collect(backend.client, endpoint)
        let fresh = await collect(backend.client, endpoint)
        clock.advance(61)
        let stale = await collect(backend.client, endpoint)

        #expect(empty.error == nil && empty.replies.map { $0.value.first?.id } == [1])
        #expect(empty.replies.first?.cached == nil)
        #expect(fresh.error == nil && fresh.replies.map { $0.value.first?.id } == [1, 2])
        #expect(fresh.replies.map { $0.cached?.isStale } == [false, nil])
        #expect(stale.replies.map { $0.value.first?.id } == [2, 3], "the second loop's answer was stored")
        #expect(stale.replies.map { $0.cached?.isStale } == [true, nil])
        #expect(backend.server.requests.count == 3)
    }

    @Test("an endpoint that uses the network only, the default, gets the network's answer only, and nothing is stored")
    func networkOnlyEndpoint() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: counter.increment(), title: "Tea")]) }
        let endpoint = Endpoint<[Order]>.get("orders")

        _ = await collect(backend.client, endpoint)
        let second = await collect(backend.client, endpoint)
        let cached = await collect(backend.client, endpoint.caching(.offlineFallback))

        #expect(second.replies.map { $0.value.first?.id } == [2] && second.replies.first?.cached == nil)
        #expect(cached.replies.map { $0.value.first?.id } == [3], "nothing was stored for the policy to find")
    }

    @Test("when the network fails the loop has the stored answer, then throws the error")
    func failureAfterStored() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let broken = Flag()
        backend.server.route("/v1/orders") { _ in
            broken.isSet ? .json(#"{"error":"busy"}"#, status: 503) : .envelope(data: [Order(id: 1, title: "Tea")])
        }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.offlineFallback)

        _ = await collect(backend.client, endpoint)
        broken.set()
        let (replies, error) = await collect(backend.client, endpoint)

        #expect(replies.map(\.value) == [[Order(id: 1, title: "Tea")]] && replies.first?.cached?.isStale == true)
        #expect(error?.code == .httpStatus && error?.status == 503)
    }

    @Test("with an ETag the second answer is the stored one, confirmed by a 304")
    func confirmedByNotModified() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { request in
            guard request.headers["If-None-Match"] == #""v1""# else {
                var answer = LoopbackServer.Response.envelope(data: [Order(id: 1, title: "Tea")])
                answer.headers["ETag"] = #""v1""#
                return answer
            }
            return .init(status: 304)
        }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.http)

        _ = await collect(backend.client, endpoint)
        let second = await collect(backend.client, endpoint)

        #expect(second.error == nil && second.replies.count == 2)
        #expect(second.replies.map { $0.cached?.isStale } == [true, false])
        #expect(second.replies.last?.cached?.storedAt == clock.now)
        #expect(backend.server.requests.last?.headers["If-None-Match"] == #""v1""#)
    }

    @Test("without a cache, or for a request that cannot be cached, the network's answer only")
    func uncached() async throws {
        let plain = try Backend()
        defer { plain.server.stop() }
        plain.server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }
        let cached = try backend()
        defer { cached.server.stop() }
        cached.server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }
        let post = Endpoint<[Order]>.post("orders", body: .form(["a": "1"]))

        let withoutCache = await collect(plain.client, Endpoint<[Order]>.get("orders"))
        _ = await collect(cached.client, post)
        let notCacheable = await collect(cached.client, post)

        #expect(withoutCache.replies.count == 1 && withoutCache.replies.first?.cached == nil)
        #expect(notCacheable.replies.count == 1 && notCacheable.replies.first?.cached == nil)
        #expect(cached.server.requests.count == 2)
    }

    @Test("a bad request ends the loop with its error before anything is sent")
    func badRequest() async throws {
        let backend = try backend()
        defer { backend.server.stop() }

        let (replies, error) = await collect(
            backend.client, Endpoint<[Order]>.get("orders", headers: ["X-Bad": "a\r\nX-Injected: 1"]))

        #expect(replies.isEmpty && error?.code == .invalidRequest)
        #expect(backend.server.requests.isEmpty)
    }

    @Test("leaving the loop after the stored answer cancels the request: the server sees the connection close")
    func leavingCancels() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let slow = Flag()
        backend.server.route("/v1/orders") { _ in
            let answer = LoopbackServer.Response.envelope(data: [Order(id: 1, title: "Tea")])
            return slow.isSet ? answer.delayed(by: .seconds(10)) : answer
        }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.offlineFallback)

        _ = await collect(backend.client, endpoint)
        slow.set()
        var first: Reply<[Order]>?
        for try await reply in backend.client.updates(for: endpoint) {
            first = reply
            // Leave only once the refresh is on the wire, so its cancellation is what is tested.
            _ = await backend.server.waitForEvents {
                $0.filter { if case .received = $0 { true } else { false } }.count == 2
            }
            break
        }

        #expect(first?.cached != nil)
        #expect(await backend.server.waitForEvents { $0.contains(.clientClosedEarly(target: "/v1/orders")) })
        // The request ends on its own task, a moment after its connection closes.
        let deadline = ContinuousClock.now + .seconds(5)
        while backend.client.activeRequestCount > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(backend.client.activeRequestCount == 0)
    }
}
