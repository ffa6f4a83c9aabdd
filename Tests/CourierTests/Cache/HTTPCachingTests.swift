import CourierTesting
import Foundation
import Testing

@testable import Courier

/// The cache as the server's headers direct it, over real HTTP: lifetimes (max-age, Expires,
/// Age, no-cache) and revalidation (ETag and If-None-Match, Last-Modified and
/// If-Modified-Since, 304 Not Modified), with what a hostile or confused server sends.
@Suite struct HTTPCachingTests {
    let clock = ManualClock()
    let store = MemoryCacheStore()
    /// 2023-11-14 22:13:20 GMT, the clock's start.
    static let start = "Tue, 14 Nov 2023 22:13:20 GMT"

    private func backend() throws -> Backend {
        let clock = clock
        let store = store
        return try Backend { $0.cache = ResponseCache(store: store, now: { clock.now }) }
    }

    /// An envelope answer with extra header fields.
    private static func answer(_ id: Int, _ headers: HTTPHeaders) -> LoopbackServer.Response {
        var response = LoopbackServer.Response.envelope(data: [Order(id: id, title: "Tea")])
        for field in headers { response.headers.append(name: field.name, value: field.value) }
        return response
    }

    private static let orders = Endpoint<[Order]>.get("orders").caching(.http)

    @Test("max-age less the Age the answer already had keeps it fresh; past that the network answers")
    func maxAgeAndAge() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/orders") { _ in
            Self.answer(counter.increment(), ["Cache-Control": "public, max-age=60", "Age": "10"])
        }

        let first = try await backend.client.reply(to: Self.orders)
        clock.advance(49)
        let hit = try await backend.client.reply(to: Self.orders)
        clock.advance(2)
        let expired = try await backend.client.reply(to: Self.orders)

        #expect(first.cached == nil && hit.cached?.isStale == false && hit.value.first?.id == 1)
        #expect(expired.cached == nil && expired.value.first?.id == 2)
        #expect(backend.server.requests.count == 2)
    }

    @Test("ETag: a stale entry is asked for with If-None-Match; a 304 refreshes it, and it is fresh again")
    func entityTagRevalidation() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { request in
            if request.headers["If-None-Match"] == #""v1""# {
                return .init(
                    status: 304,
                    headers: [
                        "Cache-Control": "max-age=30", "ETag": #""v1""#, "X-Seen": "304", "Content-Type": "text/html",
                        "Set-Cookie": "session=other",
                    ])
            }
            return Self.answer(1, ["Cache-Control": "max-age=10", "ETag": #""v1""#, "X-Seen": "200"])
        }

        _ = try await backend.client.send(Self.orders)
        clock.advance(11)
        let revalidated = try await backend.client.reply(to: Self.orders)
        clock.advance(29)
        let hit = try await backend.client.reply(to: Self.orders)

        let requests = backend.server.requests
        #expect(requests.count == 2)
        #expect(requests.first?.headers["If-None-Match"] == nil)
        #expect(requests.last?.headers["If-None-Match"] == #""v1""#)
        #expect(revalidated.value == [Order(id: 1, title: "Tea")])
        #expect(revalidated.cached?.isStale == false && revalidated.cached?.storedAt == clock.now - 29)
        #expect(revalidated.response.status == 200 && revalidated.response.headers["X-Seen"] == "304")
        #expect(revalidated.response.headers["Content-Type"] == "application/json", "the 304 changes no body field")
        #expect(revalidated.response.headers["Set-Cookie"] == nil, "a cookie is never stored")
        #expect(hit.cached != nil && hit.value == revalidated.value)
        #expect(revalidated.cached?.isRevalidated == true, "confirmed by the server")
        #expect(hit.cached?.isRevalidated == false, "given without the network")
    }

    @Test("a 304 without a Date measures a new Expires from when it came, not from the stored answer's Date")
    func notModifiedWithoutDate() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { request in
            if request.headers["If-None-Match"] == #""v1""# {
                // 160 s after the first answer's Date: 60 s after the 304 arrives.
                return .init(status: 304, headers: ["ETag": #""v1""#, "Expires": "Tue, 14 Nov 2023 22:16:00 GMT"])
            }
            return Self.answer(1, ["Date": Self.start, "Expires": "Tue, 14 Nov 2023 22:13:30 GMT", "ETag": #""v1""#])
        }

        _ = try await backend.client.send(Self.orders)
        clock.advance(100)
        let revalidated = try await backend.client.reply(to: Self.orders)
        clock.advance(59)
        let hit = try await backend.client.reply(to: Self.orders)
        clock.advance(2)
        _ = try await backend.client.reply(to: Self.orders)

        #expect(revalidated.cached != nil && hit.cached?.isStale == false)
        #expect(backend.server.requests.count == 3, "fresh for the 60 s the 304 gave, not 160")
    }

    @Test("Last-Modified: a stale entry is asked for with If-Modified-Since, and a changed answer replaces it")
    func lastModifiedRevalidation() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let modified = Flag()
        backend.server.route("/v1/orders") { request in
            let lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
            if !modified.isSet, request.headers["If-Modified-Since"] == lastModified { return .init(status: 304) }
            return Self.answer(modified.isSet ? 2 : 1, ["Last-Modified": lastModified])
        }

        _ = try await backend.client.send(Self.orders)
        let unchanged = try await backend.client.reply(to: Self.orders)
        modified.set()
        let changed = try await backend.client.reply(to: Self.orders)
        let after = try await backend.client.reply(to: Self.orders)

        #expect(backend.server.requests.map { $0.headers["If-Modified-Since"] != nil } == [false, true, true, true])
        #expect(unchanged.cached != nil && unchanged.value.first?.id == 1)
        #expect(changed.cached == nil && changed.value.first?.id == 2)
        #expect(after.value.first?.id == 2, "the changed answer was stored")
    }

    @Test(
        "lifetimes the headers give: Expires against Date, no-cache, none, and ones that cannot be read",
        arguments: [
            (["Expires": "Tue, 14 Nov 2023 22:14:20 GMT", "Date": start], true),
            (["Expires": "Tue, 14 Nov 2023 22:14:20 GMT", "Date": start, "Cache-Control": "max-age=5"], false),
            (["Expires": "Tue, 14 Nov 2023 22:14:20 GMT"], true),
            (["Cache-Control": "max-age=60, no-cache"], false),
            (["Cache-Control": #"no-cache="Set-Cookie, Age", max-age=60"#], false),
            (["Cache-Control": #"private="X-A, max-age=1", max-age=60"#], true),
            (["Cache-Control": "max-age=60", "Age": "55"], false),
            (["Cache-Control": "max-age=sixty"], false), (["Cache-Control": "max-age=-60"], false),
            (["Cache-Control": #"max-age="60""#], true), (["Cache-Control": #"max-age="6\0""#], true),
            (["Cache-Control": #"max-age="60"0"#], false), (["Cache-Control": #"max-age="60"#], false),
            (["Cache-Control": "max-age=99999999999999999999999"], true),
            (["Expires": "0", "Date": start], false), (["Expires": "tomorrow"], false), ([:], false),
            (["Expires": "Fri Dec 31 23:59:59 2099", "Date": start], true),
            (["Expires": "Friday, 31-Dec-99 23:59:59 GMT", "Date": start], false),
            (["Cache-Control": "max-age=10", "Age": "99999999999999"], false),
        ] as [(HTTPHeaders, Bool)])
    func lifetimes(_ headers: HTTPHeaders, isFreshAfter30Seconds: Bool) async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/orders") { _ in Self.answer(counter.increment(), headers) }

        _ = try await backend.client.send(Self.orders)
        clock.advance(30)
        let second = try await backend.client.reply(to: Self.orders)

        #expect((second.cached != nil) == isFreshAfter30Seconds)
        #expect(backend.server.requests.count == (isFreshAfter30Seconds ? 1 : 2))
    }

    @Test("a 304 that names another ETag is not taken for the stored answer: the request goes again without condition")
    func notModifiedForAnotherVersion() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/orders") { request in
            if request.headers["If-None-Match"] != nil { return .init(status: 304, headers: ["ETag": #""v2""#]) }
            return Self.answer(counter.increment(), ["ETag": #""v1""#])
        }

        _ = try await backend.client.send(Self.orders)
        let second = try await backend.client.reply(to: Self.orders)

        #expect(backend.server.requests.map { $0.headers["If-None-Match"] } == [nil, #""v1""#, nil])
        #expect(second.cached == nil && second.value.first?.id == 2)
    }

    @Test("a 304 that says no-store still confirms the answer it is for, and leaves nothing stored")
    func notModifiedNoStore() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { request in
            if request.headers["If-None-Match"] != nil {
                return .init(status: 304, headers: ["Cache-Control": "no-store"])
            }
            return Self.answer(1, ["ETag": #"W/"v1""#])
        }

        _ = try await backend.client.send(Self.orders)
        let confirmed = try await backend.client.reply(to: Self.orders)
        let third = try await backend.client.reply(to: Self.orders)

        #expect(confirmed.cached != nil && confirmed.value.first?.id == 1)
        #expect(backend.server.requests.map { $0.headers["If-None-Match"] } == [nil, #"W/"v1""#, nil])
        #expect(third.cached == nil)
    }

    @Test("an endpoint that asks a condition of its own is sent as it is, and its 304 is an error status")
    func endpointsOwnCondition() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { request in
            request.headers["If-None-Match"] == #""mine""#
                ? .init(status: 304) : Self.answer(1, ["ETag": #""v1""#, "Cache-Control": "no-cache"])
        }
        let own = Endpoint<[Order]>.get("orders", headers: ["If-None-Match": #""mine""#]).caching(.http)

        _ = try await backend.client.send(Self.orders)
        let error = await networkError { _ = try await backend.client.send(own) }

        #expect(error?.code == .httpStatus && error?.status == 304)
        #expect(backend.server.requests.last?.headers["If-None-Match"] == #""mine""#)
    }

    @Test(
        "an ETag the server wrote without quotes is sent back as it is, and its 304 confirms the stored answer",
        arguments: ["abc", "W/abc", "  v 7  "])
    func unquotedEntityTag(tag: String) async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let sent = tag.trimmingCharacters(in: .whitespaces)
        backend.server.route("/v1/orders") { request in
            request.headers["If-None-Match"] == sent
                ? .init(status: 304, headers: ["ETag": tag]) : Self.answer(1, ["ETag": tag])
        }

        _ = try await backend.client.send(Self.orders)
        let second = try await backend.client.reply(to: Self.orders)

        #expect(second.cached != nil && second.value.first?.id == 1, "confirmed by the 304")
        #expect(backend.server.requests.map { $0.headers["If-None-Match"] } == [nil, sent])
    }

    @Test("validators that are not well formed (CR LF from a store) are never sent: the request goes without them")
    func hostileValidators() async throws {
        // A store that hands back validators with CR LF in them.
        let store = HookedStore(read: { found in
            guard var entry = found else { return nil }
            entry.headers["ETag"] = "\"v1\"\r\nX-Injected: 1"
            entry.headers["Last-Modified"] = "Sun, 06 Nov 1994 08:49:37 GMT\r\nX-Injected: 2"
            return entry
        })
        let backend = try Backend { $0.cache = ResponseCache(store: store) }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in Self.answer(1, ["ETag": #""v1""#]) }

        _ = try await backend.client.send(Self.orders)
        let second = try await backend.client.reply(to: Self.orders)

        #expect(second.cached == nil && second.value.first?.id == 1)
        let requests = backend.server.requests
        #expect(requests.count == 2)
        #expect(requests.allSatisfy { $0.headers["X-Injected"] == nil && $0.headers["If-None-Match"] == nil })
        #expect(requests.allSatisfy { $0.headers["If-Modified-Since"] == nil })
    }

    @Test("other policies revalidate too: offline fallback asks with If-None-Match and a 304 answers from the entry")
    func fallbackRevalidates() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { request in
            request.headers["If-None-Match"] == #""v1""# ? .init(status: 304) : Self.answer(1, ["ETag": #""v1""#])
        }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.offlineFallback)

        _ = try await backend.client.send(endpoint)
        let second = try await backend.client.reply(to: endpoint)

        #expect(second.cached?.isStale == false && second.value.first?.id == 1)
        #expect(backend.server.requests.last?.headers["If-None-Match"] == #""v1""#)
    }

    @Test("a 304 to a request that asked no condition is an error status, not an empty answer")
    func unaskedNotModified() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .init(status: 304, headers: ["ETag": #""v1""#]) }

        let error = await networkError { _ = try await backend.client.send(Self.orders) }

        #expect(error?.code == .httpStatus && error?.status == 304)
    }

    @Test("a 304 without an ETag whose Last-Modified is not the stored one's is not taken for it")
    func notModifiedForAnotherDate() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let counter = Counter()
        backend.server.route("/v1/orders") { request in
            if request.headers["If-Modified-Since"] != nil {
                return .init(status: 304, headers: ["Last-Modified": "Mon, 07 Nov 1994 08:49:37 GMT"])
            }
            return Self.answer(counter.increment(), ["Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"])
        }

        _ = try await backend.client.send(Self.orders)
        let second = try await backend.client.reply(to: Self.orders)

        #expect(backend.server.requests.map { $0.headers["If-Modified-Since"] != nil } == [false, true, false])
        #expect(second.cached == nil && second.value.first?.id == 2)
    }

    @Test("a Last-Modified in an obsolete form is asked about in the preferred one")
    func obsoleteLastModified() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in Self.answer(1, ["Last-Modified": "Sunday, 06-Nov-94 08:49:37 GMT"]) }

        _ = try await backend.client.send(Self.orders)
        _ = try await backend.client.send(Self.orders)

        #expect(backend.server.requests.last?.headers["If-Modified-Since"] == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test("a purge while the 304 is on its way leaves nothing stored")
    func purgeDuringRevalidation() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let gate = Gate()
        backend.server.route("/v1/orders") { request in
            guard request.headers["If-None-Match"] != nil else { return Self.answer(1, ["ETag": #""v1""#]) }
            await gate.pass()
            return .init(status: 304, headers: ["Cache-Control": "max-age=600"])
        }

        _ = try await backend.client.send(Self.orders)
        async let confirmed = backend.client.reply(to: Self.orders)
        await gate.arrivals(1)
        try await backend.client.configuration.cache?.removeAll()
        gate.open()
        let reply = try await confirmed
        let after = try await backend.client.reply(to: Self.orders)

        #expect(reply.cached != nil, "the caller asked before the purge and gets its answer")
        #expect(after.cached == nil && backend.server.requests.last?.headers["If-None-Match"] == nil)
    }

    @Test("offline fallback does not show an answer a purge removed while the request was out")
    func purgeDuringFallback() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let gate = Gate()
        let down = Flag()
        backend.server.route("/v1/orders") { _ in
            guard down.isSet else { return Self.answer(1, [:]) }
            await gate.pass()
            return LoopbackServer.Response().with(.closeBeforeResponding)
        }
        let endpoint = Endpoint<[Order]>.get("orders").caching(.offlineFallback)

        _ = try await backend.client.send(endpoint)
        down.set()
        async let failing = networkError { _ = try await backend.client.send(endpoint) }
        await gate.arrivals(1)
        try await backend.client.configuration.cache?.removeAll()
        gate.open()

        #expect(await failing?.code == .transport)
    }

    @Test(
        "an entry stored at a date no clock gives is stale, never a crash",
        arguments: [-1e30, 1e30, -Double.greatestFiniteMagnitude, Double.greatestFiniteMagnitude])
    func warpedDates(_ seconds: Double) async throws {
        let store = HookedStore(read: { found in
            guard var entry = found else { return nil }
            entry.storedAt = Date(timeIntervalSince1970: seconds)
            return entry
        })
        let backend = try Backend { $0.cache = ResponseCache(store: store) }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in Self.answer(1, ["Expires": "Fri, 31 Dec 9999 23:59:59 GMT"]) }

        for policy in [
            CachePolicy.http, .cacheFirst(maxAge: .seconds(Int64.max)), .staleWhileRevalidate(maxAge: .zero),
        ] {
            _ = try await backend.client.send(Endpoint<[Order]>.get("orders").caching(policy))
            _ = try await backend.client.send(Endpoint<[Order]>.get("orders").caching(policy))
        }

        #expect(backend.server.requests.count >= 4)
    }
}
