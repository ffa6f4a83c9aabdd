import Courier
import CourierTesting
import Foundation
import Testing

/// The policies that answer from the cache when the network cannot: offline fallback, and
/// stale-while-revalidate with its refresh in the background.
@Suite struct CacheFallbackTests {
    @Test("offline fallback: the network first, then the stored answer, marked stale, when the connection fails")
    func fallbackOnTransportFailure() async throws {
        let store = MemoryCacheStore()
        let clock = ManualClock()
        let backend = try Backend {
            $0.cache = ResponseCache(store: store, now: { clock.now })
        }
        defer { backend.server.stop() }
        let broken = Flag()
        backend.server.route("/v1/orders") { _ in
            let answer = LoopbackServer.Response.envelope(data: [Order(id: 1, title: "Tea")])
            return broken.isSet ? answer.with(.closeBeforeResponding) : answer
        }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.offlineFallback)

        let fresh = try await backend.client.reply(to: endpoint)
        clock.advance(86_400)
        broken.set()
        let fallback = try await backend.client.reply(to: endpoint)

        #expect(fresh.cached == nil)
        #expect(fallback.value == [Order(id: 1, title: "Tea")])
        #expect(fallback.cached?.storedAt == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(fallback.cached?.isStale == true)
    }

    @Test("offline fallback: while the device is offline the stored answer comes at once, nothing sent")
    func fallbackWhileOffline() async throws {
        let reachability = ManualReachability(.online(.wifi))
        let transport = MockTransport { _ in .json(#"{"code":0,"msg":"ok","data":"fresh"}"#) }
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "https://api.example.com/")!, transport: transport)
        configuration.reachability = reachability
        configuration.cache = ResponseCache()
        let client = NetworkClient(configuration: configuration)
        let endpoint = Endpoint<String>.get("news").caching(.offlineFallback)

        _ = try await client.send(endpoint)
        reachability.set(.offline)
        let offline = try await client.reply(to: endpoint)

        #expect(offline.value == "fresh" && offline.cached?.isStale == true)
        #expect(transport.requests.count == 1)
    }

    @Test("offline fallback without a stored answer throws the network's error")
    func fallbackWithoutEntry() async throws {
        let refusing = RefusingPort()
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "http://127.0.0.1:\(refusing.port)/")!, transport: TestTransport.make())
        configuration.cache = ResponseCache()
        let error = await networkError {
            _ = try await NetworkClient(configuration: configuration).send(
                Endpoint<[Order]>.get("orders").caching(.offlineFallback))
        }
        #expect(error?.code == .transport)
    }

    @Test("offline fallback does not hide what the server said: an error status is thrown, not the stored answer")
    func fallbackNotOnServerErrors() async throws {
        let backend = try Backend { $0.cache = ResponseCache() }
        defer { backend.server.stop() }
        let failing = Flag()
        backend.server.route("/v1/orders") { _ in
            failing.isSet ? .json(#"{"error":"busy"}"#, status: 503) : .envelope(data: [Order(id: 1, title: "Tea")])
        }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.offlineFallback)

        _ = try await backend.client.send(endpoint)
        failing.set()
        let error = await networkError { _ = try await backend.client.send(endpoint) }

        #expect(error?.code == .httpStatus && error?.status == 503)
    }

    @Test("stale while revalidate: a stale answer comes at once, and a refresh in the background replaces it")
    func staleWhileRevalidate() async throws {
        // Each write is told, so the test waits for the background refresh instead of sleeping.
        let (written, tell) = AsyncStream.makeStream(of: CachedResponse.self)
        let store = HookedStore(write: { entry, store in
            await store()
            tell.yield(entry)
        })
        let clock = ManualClock()
        let backend = try Backend {
            $0.cache = ResponseCache(store: store, now: { clock.now })
        }
        defer { backend.server.stop() }
        let version = Flag()
        backend.server.route("/v1/orders") { _ in
            .envelope(data: [Order(id: version.isSet ? 2 : 1, title: "Tea")])
        }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.staleWhileRevalidate(maxAge: .seconds(60)))
        var writes = written.makeAsyncIterator()

        _ = try await backend.client.send(endpoint)
        _ = await writes.next()
        let fresh = try await backend.client.reply(to: endpoint)
        clock.advance(61)
        version.set()
        let stale = try await backend.client.reply(to: endpoint)
        let refreshed = await writes.next()
        let after = try await backend.client.reply(to: endpoint)

        #expect(fresh.cached?.isStale == false && fresh.value.first?.id == 1)
        #expect(stale.cached?.isStale == true && stale.value.first?.id == 1)
        #expect(refreshed?.storedAt == clock.now)
        #expect(after.cached?.isStale == false && after.value.first?.id == 2)
        #expect(backend.server.requests.count == 2)
    }
}
