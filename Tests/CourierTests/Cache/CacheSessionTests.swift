import Courier
import CourierTesting
import Foundation
import Testing

/// The cache across a login as someone else, over real HTTP: an entry read, revalidated or
/// written for one user never reaches the next, whichever wait of the request the switch meets.
@Suite struct CacheSessionTests {
    static let ann = Credential(accessToken: "ann", userID: "ann")
    static let bob = Credential(accessToken: "bob", userID: "bob")

    /// A backend whose `/v1/profile` is the token's owner's, with the same `ETag` for everyone
    /// (a version number, as many backends send), answered `304` when the request has it.
    static func backend(session: Session, store: any CacheStore) throws -> Backend {
        let backend = try Backend {
            $0.session = session
            $0.cache = ResponseCache(store: store)
        }
        backend.server.route("/v1/profile") { request in
            if request.headers["If-None-Match"] == #""1""# { return .init(status: 304, headers: ["ETag": #""1""#]) }
            var answer = LoopbackServer.Response.envelope(data: "\(request.headers["token"] ?? "nobody")'s profile")
            answer.headers["ETag"] = #""1""#
            return answer
        }
        return backend
    }

    /// No lifetime: every use asks the server, with the stored `ETag`.
    static let profile = Endpoint<String>.get("profile").caching(.http)

    @Test("a revalidation prepared for one user is not sent for the next: no 304 hands Ann's profile to Bob")
    func revalidationAcrossSwitch() async throws {
        // Once held, a read waits at the gate after finding the entry: the request has Ann's
        // entry and ETag in hand when Bob logs in.
        let held = Flag()
        let gate = Gate()
        let store = HookedStore(read: { found in
            if held.isSet { await gate.pass() }
            return found
        })
        let session = Session(store: InMemoryTokenStore(credential: Self.ann))
        let backend = try Self.backend(session: session, store: store)
        defer { backend.server.stop() }
        #expect(try await backend.client.send(Self.profile) == "ann's profile")

        held.set()
        let request = Task { try await backend.client.reply(to: Self.profile) }
        await gate.arrivals(1)
        try await session.logIn(Self.bob)
        gate.open()
        let outcome = await request.result
        let bobs = try await backend.client.reply(to: Self.profile)

        #expect(throws: NetworkError.self, "Ann's request ends without an answer") { try outcome.get() }
        #expect(bobs.value == "bob's profile" && bobs.cached == nil)
        #expect(
            !backend.server.requests.contains { $0.headers["token"] == "bob" && $0.headers["If-None-Match"] != nil },
            "Bob's token never went out with Ann's validator")
    }

    @Test("an answer being written when the account switches leaves no entry, for Ann or for Bob")
    func writeAcrossSwitch() async throws {
        let held = Flag()
        let gate = Gate()
        let store = HookedStore(write: { _, write in
            if held.isSet { await gate.pass() }
            await write()
        })
        let session = Session(store: InMemoryTokenStore(credential: Self.ann))
        let backend = try Self.backend(session: session, store: store)
        defer { backend.server.stop() }

        held.set()
        let request = Task { try await backend.client.send(Self.profile) }
        await gate.arrivals(1)
        try await session.logIn(Self.bob)
        held.clear()
        gate.open()
        _ = await request.result

        #expect(store.inner.count == 0, "Ann's answer is removed once written")
        #expect(try await backend.client.reply(to: Self.profile).value == "bob's profile")
    }

    @Test(
        "a request a logout cancels throws only once the cache is empty: a caller trying again finds nothing of Ann's")
    func cancelledAfterThePurge() async throws {
        let purging = Gate()
        let store = HookedStore(purge: { await purging.pass() })
        let session = Session(store: InMemoryTokenStore(credential: Self.ann))
        let backend = try Self.backend(session: session, store: store)
        defer { backend.server.stop() }
        let onTheWire = Gate()
        backend.server.route("/v1/slow") { _ in
            await onTheWire.pass()
            return .envelope(data: "late")
        }
        #expect(try await backend.client.send(Self.profile) == "ann's profile")

        let ended = Flag()
        let request = Task {
            defer { ended.set() }
            return try await backend.client.send(Endpoint<String>.get("slow"))
        }
        await onTheWire.arrivals(1)
        let logout = Task { try await session.logOut() }
        await purging.arrivals(1)
        // The logout has cancelled the request and now waits in the purge: the request waits too.
        try await Task.sleep(for: .milliseconds(200))
        #expect(!ended.isSet, "the request did not end before the cache was emptied")
        #expect(store.inner.count == 1)

        purging.open()
        let error = await networkError { _ = try await request.value }
        try await logout.value
        onTheWire.open()
        #expect(error?.code == .cancelled)
        #expect(store.inner.count == 0)
    }

    @Test("a request a logout ends while it reads the cache also throws only once the cache is empty")
    func cacheReadEndedByLogout() async throws {
        let (reading, purging) = (Gate(), Gate())
        let held = Flag()
        let store = HookedStore(
            read: { found in
                if held.isSet { await reading.pass() }
                return found
            }, purge: { await purging.pass() })
        let session = Session(store: InMemoryTokenStore(credential: Self.ann))
        let backend = try Self.backend(session: session, store: store)
        defer { backend.server.stop() }
        #expect(try await backend.client.send(Self.profile) == "ann's profile")

        held.set()
        let ended = Flag()
        let request = Task {
            defer { ended.set() }
            return try await backend.client.send(Self.profile)
        }
        await reading.arrivals(1)
        let logout = Task { try await session.logOut() }
        await purging.arrivals(1)
        reading.open()
        try await Task.sleep(for: .milliseconds(200))
        #expect(!ended.isSet, "the request did not end before the cache was emptied")

        purging.open()
        let error = await networkError { _ = try await request.value }
        try await logout.value
        #expect(error?.code == .cancelled)
        #expect(store.inner.count == 0)
    }
}
