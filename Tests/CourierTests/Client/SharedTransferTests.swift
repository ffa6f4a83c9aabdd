import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Identical requests in flight share one transfer: what is shared, what is not, and who may
/// cancel it.
@Suite struct SharedTransferTests {

    /// A backend whose `/v1/orders` answers once `gate` opens, and whose `/v1/slow` takes a
    /// minute the first time (long enough for any cancellation to land mid-flight, however
    /// loaded the machine) and answers at once after.
    private func backend(gate: Gate = Gate()) throws -> Backend {
        let backend = try Backend()
        backend.server.route("/v1/orders") { _ in
            await gate.pass()
            return .envelope(data: [Order(id: 1, title: "Tea")])
        }
        let slowOnce = Counter()
        backend.server.route("/v1/slow") { _ in
            let answer = LoopbackServer.Response.envelope(data: [Order(id: 1, title: "Tea")])
            return slowOnce.increment() == 1 ? answer.delayed(by: .seconds(60)) : answer
        }
        return backend
    }

    /// `GET`s share by default.
    private static let orders = Endpoint<[Order]>.get("orders")
    private static let slow = Endpoint<[Order]>.get("slow")
    private static let unshared = Endpoint<[Order]>.get("orders").sharingIdenticalRequests(false)

    /// Waits until `count` callers wait for a shared transfer (checked every 5 ms), so what the
    /// test does next lands on callers that have joined it. The limit only ends a wait for
    /// callers that never join: on a loaded machine, 1,000 of them can take seconds to.
    private func joined(_ client: NetworkClient, _ count: Int) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
        while client.sharedTransferWaiters < count {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    private func received(_ server: LoopbackServer) -> Int {
        server.events.filter { if case .received = $0 { true } else { false } }.count
    }

    @Test("1,000 identical GETs at once reach the server as one request, and every caller gets the answer")
    func thousandIdenticalGets() async throws {
        let gate = Gate()
        let backend = try backend(gate: gate)
        defer { backend.server.stop() }

        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<1_000 { group.addTask { try await backend.client.send(Self.orders).count } }
            #expect(await joined(backend.client, 1_000))
            gate.open()
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }

        #expect(counts.count == 1_000 && counts.allSatisfy { $0 == 1 })
        #expect(backend.server.requests.count == 1)
        #expect(backend.client.sharedTransferWaiters == 0)
    }

    @Test(
        "the callers of a shared transfer store its answer once for each type they decode into, a 304's too (a disk store writes two files, not 101)"
    )
    func storedOnce() async throws {
        let gates = [Gate(), Gate()]
        let writes = Counter()
        let store = HookedStore(write: { _, store in
            _ = writes.increment()
            await store()
        })
        let backend = try Backend { $0.cache = ResponseCache(store: store) }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { request in
            let revalidating = request.headers["If-None-Match"] == #""v1""#
            await gates[revalidating ? 1 : 0].pass()
            if revalidating { return .init(status: 304, headers: ["ETag": #""v1""#]) }
            var answer = LoopbackServer.Response.envelope(data: [Order(id: 1, title: "Tea")])
            answer.headers["ETag"] = #""v1""#
            return answer
        }
        // No lifetime: every use asks the server, the second round with If-None-Match.
        let orders = Self.orders.caching(.http)
        let text = Endpoint<String>.get("orders", decoding: .text).caching(.http)

        for round in 1...2 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<100 { group.addTask { _ = try await backend.client.send(orders) } }
                group.addTask { _ = try await backend.client.send(text) }
                #expect(await joined(backend.client, 101))
                gates[round - 1].open()
                try await group.waitForAll()
            }
            #expect(backend.server.requests.count == round)
            #expect(writes.current == 2 * round, "one write for each type in round \(round)")
        }
        #expect(backend.server.requests.last?.headers["If-None-Match"] == #""v1""#)
    }

    @Test("a caller that joined a shared transfer late stores its answer as old as the transfer, not over a newer one")
    func sharedAnswerKeepsItsAge() async throws {
        let gate = Gate()
        let counter = Counter()
        let store = MemoryCacheStore()
        let backend = try Backend { $0.cache = ResponseCache(store: store) }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in
            let id = counter.increment()
            if id == 1 { await gate.pass() }
            return .envelope(data: [Order(id: id, title: "Tea")])
        }
        let orders = Self.orders.caching(.offlineFallback)

        // The first caller starts a transfer, held at the server; meanwhile a request of its own
        // stores version 2; then a caller joins the held transfer, and the first one leaves it.
        let first = Task { try await backend.client.send(orders) }
        await gate.arrivals(1)
        #expect(try await backend.client.send(orders.sharingIdenticalRequests(false)).first?.id == 2)
        let late = Task { try await backend.client.send(orders) }
        #expect(await joined(backend.client, 2))
        first.cancel()
        let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
        while backend.client.sharedTransferWaiters > 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        gate.open()
        let lateAnswer = try await late.value
        let stored = try await backend.client.reply(to: Self.orders.caching(.cacheFirst(maxAge: .seconds(600))))

        #expect(lateAnswer.first?.id == 1, "the late caller gets the transfer's answer")
        #expect(stored.cached != nil && stored.value.first?.id == 2, "the newer answer stays")
        #expect(store.count == 1)
    }

    @Test("the caller that stores a shared answer for all stores it even when it is cancelled meanwhile")
    func writerCancelled() async throws {
        // Each write waits at the gate, and is dropped when the writing task was cancelled
        // meanwhile (as a store that honours cancellation would).
        let gate = Gate()
        let store = HookedStore(write: { _, store in
            await gate.pass()
            guard !Task.isCancelled else { return }
            await store()
        })
        let backend = try Backend { $0.cache = ResponseCache(store: store) }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }

        let writer = Task { try await backend.client.send(Self.orders.caching(.cacheFirst(maxAge: .seconds(60)))) }
        await gate.arrivals(1)
        writer.cancel()
        gate.open()
        _ = try? await writer.value

        #expect(store.inner.count == 1)
    }

    @Test("an answer a transport hands back again, from an earlier shared transfer, is stored like any other")
    func recordedAnswer() async throws {
        let recorded = Recorded()
        var configuration = NetworkClient.Configuration(
            baseURL: URL(string: "https://api.example.com/")!,
            transport: MockTransport { _ in try recorded.response ?? .envelope(data: [Order(id: 1, title: "Tea")]) })
        let store = MemoryCacheStore()
        let cache = ResponseCache(store: store)
        configuration.cache = cache
        let client = NetworkClient(configuration: configuration)
        // No lifetime: every use asks the transport.
        let orders = Self.orders.caching(.http)

        let first = try await client.reply(to: orders)
        #expect(store.count == 1)
        try await cache.removeAll()
        recorded.response = first.response
        _ = try await client.send(orders.sharingIdenticalRequests(false))

        #expect(store.count == 1, "stored again: the first transfer's mark stands for nothing now")
    }

    /// An answer a test hands to its transport.
    final class Recorded: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: HTTPResponse?
        var response: HTTPResponse? {
            get { lock.withLock { stored } }
            set { lock.withLock { stored = newValue } }
        }
    }

    @Test("each caller decodes the shared answer as its own endpoint says")
    func eachCallerDecodes() async throws {
        let gate = Gate()
        let backend = try backend(gate: gate)
        defer { backend.server.stop() }

        async let orders = backend.client.send(Self.orders)
        async let text = backend.client.send(
            Endpoint<String>.get("orders", decoding: .text))
        #expect(await joined(backend.client, 2))
        gate.open()
        let (decoded, raw) = try await (orders, text)

        #expect(decoded == [Order(id: 1, title: "Tea")])
        #expect(raw.contains("\"Tea\""))
        #expect(backend.server.requests.count == 1)
    }

    @Test(
        "a different query, header or body, a POST that does not opt in, and a GET that opts out, each get a transfer of their own"
    )
    func notShared() async throws {
        let gate = Gate()
        let backend = try backend(gate: gate)
        defer { backend.server.stop() }
        let shared = { (endpoint: Endpoint<[Order]>) in endpoint.sharingIdenticalRequests(true) }
        let endpoints: [Endpoint<[Order]>] = [
            .get("orders"), .get("orders", query: ["page": "2"]), .get("orders", headers: ["X-Region": "east"]),
            Self.unshared, Self.unshared, .post("orders", body: .form(["a": "1"])),
            .post("orders", body: .form(["a": "1"])),
            shared(.post("orders", body: .form(["a": "2"]))), shared(.post("orders", body: .form(["a": "3"]))),
        ]

        try await withThrowingTaskGroup(of: Void.self) { group in
            for endpoint in endpoints { group.addTask { _ = try await backend.client.send(endpoint) } }
            #expect(
                await gate.arrivals(endpoints.count, within: .seconds(30) * TestTiming.scale),
                "each request arrives on its own")
            gate.open()
            try await group.waitForAll()
        }

        #expect(backend.server.requests.count == endpoints.count)
    }

    @Test("a failure reaches every caller of the shared transfer")
    func sharedFailure() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        let gate = Gate()
        backend.server.route("/v1/orders") { _ in
            await gate.pass()
            return .json(#"{"error":"busy"}"#, status: 503)
        }

        let errors = await withTaskGroup(of: NetworkError?.self) { group in
            for _ in 0..<5 { group.addTask { await networkError { _ = try await backend.client.send(Self.orders) } } }
            #expect(await joined(backend.client, 5))
            gate.open()
            return await group.reduce(into: [NetworkError?]()) { $0.append($1) }
        }

        #expect(errors.count == 5 && errors.allSatisfy { $0?.status == 503 })
        #expect(backend.server.requests.count == 1)
    }

    @Test("one caller's cancellation does not cancel the transfer the others wait for")
    func oneCancelled() async throws {
        let gate = Gate()
        let backend = try backend(gate: gate)
        defer { backend.server.stop() }
        let client = backend.client

        let leaving = Task { try await client.send(Self.orders) }
        let staying = Task { try await client.send(Self.orders) }
        #expect(await joined(client, 2))
        leaving.cancel()
        let error = await networkError { _ = try await leaving.value }
        gate.open()
        let orders = try await staying.value

        #expect(error?.code == .cancelled)
        #expect(orders == [Order(id: 1, title: "Tea")])
        #expect(received(backend.server) == 1)
        #expect(!backend.server.events.contains { if case .clientClosedEarly = $0 { true } else { false } })
    }

    @Test("when the last caller is cancelled the transfer stops, and the next identical request starts a new one")
    func allCancelled() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let client = backend.client

        let first = Task { try await client.send(Self.slow) }
        let second = Task { try await client.send(Self.slow) }
        #expect(await joined(client, 2))
        #expect(
            await backend.server.waitForEvents(timeout: .seconds(30) * TestTiming.scale) {
                $0.contains(.received(method: "GET", target: "/v1/slow"))
            })
        first.cancel()
        second.cancel()

        #expect(await networkError { _ = try await first.value }?.code == .cancelled)
        #expect(await networkError { _ = try await second.value }?.code == .cancelled)
        #expect(
            await backend.server.waitForEvents(timeout: .seconds(30) * TestTiming.scale) {
                $0.contains(.clientClosedEarly(target: "/v1/slow"))
            })
        #expect(try await client.send(Self.slow) == [Order(id: 1, title: "Tea")])
        #expect(received(backend.server) == 2)
    }

    @Test(
        "cancelAll() cancels the shared transfer with every caller, and a caller cancelled before it joins starts nothing"
    )
    func cancelAll() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let client = backend.client

        let callers = (0..<3).map { _ in Task { try await client.send(Self.slow) } }
        #expect(await joined(client, 3))
        #expect(
            await backend.server.waitForEvents(timeout: .seconds(30) * TestTiming.scale) {
                $0.contains(.received(method: "GET", target: "/v1/slow"))
            })
        client.cancelAll()

        for caller in callers { #expect(await networkError { _ = try await caller.value }?.code == .cancelled) }
        #expect(
            await backend.server.waitForEvents(timeout: .seconds(30) * TestTiming.scale) {
                $0.contains(.clientClosedEarly(target: "/v1/slow"))
            })
        #expect(client.activeRequestCount == 0 && client.sharedTransferWaiters == 0)

        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(Self.slow)
        }
        #expect(await networkError { _ = try await early.value }?.code == .cancelled)
        #expect(received(backend.server) == 1)
    }

    @Test("after detachAll() no caller joins a transfer that was in flight before it: the next one starts its own")
    func detachedByCancelAll() async throws {
        let transfers = SharedTransfers()
        let key = ["GET", "https://api.example.com/orders"]
        let starts = Counter()
        let gate = Gate()
        let start: @Sendable () async throws -> HTTPResponse = {
            _ = starts.increment()
            await gate.pass()
            return HTTPResponse(status: 200)
        }

        let before = Task { try await transfers.response(for: key, cancellation: { _ in }, start: start) }
        await gate.arrivals(1)
        transfers.detachAll()
        let after = Task { try await transfers.response(for: key, cancellation: { _ in }, start: start) }
        // A second arrival means a second transfer started; a caller that joined the first never
        // arrives, and the limit only ends that wait.
        let started = await result(within: .seconds(30) * TestTiming.scale) {
            await gate.arrivals(2)
            return true
        }
        gate.open()

        let statuses = [try await before.value.status, try await after.value.status]
        #expect(started == true, "the later caller started a transfer of its own")
        #expect(statuses == [200, 200])
        #expect(starts.current == 2, "two transfers")
        #expect(transfers.waiterCount == 0)
    }

    @Test(
        "requests of two session epochs (a login as someone else, a logout) never share a transfer, cached or not; HEAD shares like GET",
        arguments: [false, true])
    func sessionsApart(cached: Bool) async throws {
        let orders = cached ? Self.orders.caching(.http) : Self.orders
        let gate = Gate()
        let session = Session(store: InMemoryTokenStore(credential: Credential(accessToken: "ann", userID: "ann")))
        let backend = try Backend {
            $0.session = session
            $0.cache = ResponseCache(store: MemoryCacheStore())
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { request in
            await gate.pass()
            return .envelope(data: [Order(id: request.method == .head ? 0 : 1, title: "Tea")])
        }

        // Each pair shares one transfer, held at the server until the end; the login and the
        // logout end the pair before them.
        let received = { (count: Int) in
            await backend.server.waitForEvents {
                $0.filter { $0 == .received(method: "GET", target: "/v1/orders") }.count == count
            }
        }
        func pair(_ number: Int) async -> [Task<[Order], any Error>] {
            let pair = (0..<2).map { _ in Task { try await backend.client.send(orders) } }
            #expect(await joined(backend.client, 2))
            #expect(await received(number), "the pair's one request reached the server")
            return pair
        }
        var ended: [NetworkError?] = []
        let changes = [{ try await session.logIn(Credential(accessToken: "bob", userID: "bob")) }, session.logOut]
        for (number, change) in changes.enumerated() {
            let requests = await pair(number + 1)
            try await change()
            for request in requests { ended.append(await networkError { _ = try await request.value }) }
        }
        async let nobody = backend.client.send(orders)
        let head = Endpoint<EmptyResponse>(method: .head, path: "orders", decoding: .empty)
        async let firstHead = backend.client.send(head)
        async let secondHead = backend.client.send(head)
        #expect(await joined(backend.client, 3))
        gate.open()
        _ = try await nobody
        _ = try await [firstHead, secondHead]

        #expect(ended.map { $0?.code } == Array(repeating: .cancelled, count: 4))
        #expect(await received(3), "one transfer for each epoch")
        #expect(backend.server.requests.last { $0.method == .get }?.headers["token"] == nil, "the last one nobody's")
        #expect(backend.server.requests.filter { $0.method == .head }.count == 1)
    }

    @Test("an endpoint whose method changes after it is made takes the new method's defaults")
    func defaultsFollowTheMethod() {
        var endpoint = Endpoint<EmptyResponse>.get("orders")
        endpoint.method = .post
        #expect(!endpoint.sharesIdenticalRequests && !endpoint.isIdempotent)
        endpoint.method = .head
        #expect(endpoint.sharesIdenticalRequests && endpoint.isIdempotent)
        let chosen = Endpoint<EmptyResponse>.post("orders").idempotent().sharingIdenticalRequests(true)
        #expect(chosen.sharesIdenticalRequests && chosen.isIdempotent)
    }

    @Test(
        "a caller of higher priority that joins a transfer raises its priority, also while the transfer is still starting",
        arguments: [false, true])
    func priorityEscalation(whileStarting: Bool) async throws {
        let transfers = SharedTransfers()
        let key = ["GET", "https://api.example.com/orders"]
        let gate = Gate()
        let seen = Log()
        let joinedWhileStarting = Flag()
        let start: @Sendable () async throws -> HTTPResponse = {
            if whileStarting {
                // The transfer's first steps run on the starter's thread before its task is
                // known: held there (blocking, so nothing suspends) until the second caller joined
                // (the limit only ends a wait for one that never joins).
                let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
                while transfers.waiterCount < 2, ContinuousClock.now < deadline { usleep(1_000) }
                if transfers.waiterCount == 2, !transfers.hasStarted(key) { joinedWhileStarting.set() }
            }
            await gate.pass()
            seen.append("\(Task.currentPriority.rawValue)")
            return HTTPResponse(status: 200)
        }
        let join = { (priority: TaskPriority) in
            Task(priority: priority) {
                try await transfers.response(for: key, cancellation: { _ in }, start: start)
            }
        }
        // Only ends a wait for a caller that never joins or a transfer that never starts.
        let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale

        let low = join(.background)
        if whileStarting {
            while transfers.waiterCount < 1, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
        } else {
            await gate.arrivals(1)
        }
        let high = join(.high)
        while transfers.waiterCount < 2 || !transfers.hasStarted(key), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        await gate.arrivals(1)
        gate.open()
        _ = try await [low.value, high.value]

        #expect(joinedWhileStarting.isSet == whileStarting, "the second caller joined before the task was known")
        #expect(seen.all == ["\(TaskPriority.high.rawValue)"])
    }

    @Test(
        "a request that began before cancelAll() or a logout is not sent after it, even one still waiting for the session's store",
        arguments: [(false, false), (true, false), (false, true), (true, true)])
    func cancelAllBeforeRegistration(cached: Bool, logsOut: Bool) async throws {
        let endpoint = cached ? Self.orders.caching(.cacheFirst(maxAge: .seconds(60))) : Self.orders
        // The first request reads the session's store, which answers once the gate opens.
        let gate = Gate()
        let session = Session(store: GatedTokenStore(gate: gate, credential: Credential(accessToken: "ann")))
        let backend = try Backend {
            $0.session = session
            $0.cache = ResponseCache(store: MemoryCacheStore())
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }

        let request = Task { try await backend.client.send(endpoint) }
        await gate.arrivals(1)
        // A logout's own write of the store waits for the read under way.
        let logout = Task { if logsOut { try await session.logOut() } else { backend.client.cancelAll() } }
        if logsOut {
            // The logout has begun once the session is in its next epoch (the limit only ends a
            // wait for one that never begins).
            let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
            while session.epochNumber == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
        } else {
            try await logout.value
        }
        gate.open()
        try await logout.value

        #expect(await networkError { _ = try await request.value }?.code == .cancelled)
        #expect(backend.server.requests.isEmpty)
        #expect(backend.client.activeRequestCount == 0)
    }

    /// A token store whose reads wait at a gate: a keychain that is slow to answer.
    struct GatedTokenStore: TokenStore {
        let gate: Gate
        let credential: Credential?
        func credential() async throws -> Credential? {
            await gate.pass()
            return credential
        }
        func setCredential(_ credential: Credential?) async throws {}
    }

    @Test("an upload, a download or an updates loop made just before cancelAll() is cancelled")
    func cancelAllRightAfterStart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend { $0.cache = ResponseCache(store: MemoryCacheStore()) }
        defer { backend.server.stop() }
        // Held until every cancelAll() ran: a request that got out before its cancelAll() (its
        // task ran at once) is cancelled in flight, never answered.
        let gate = Gate()
        backend.server.route("/v1/orders") { _ in
            await gate.pass()
            return .envelope(data: [Order(id: 1, title: "Tea")])
        }
        backend.server.route("/v1/file") { _ in
            await gate.pass()
            return .init(body: Data("report".utf8))
        }
        backend.server.route("/v1/media") { _ in
            await gate.pass()
            return .envelope(data: 1)
        }
        let client = backend.client

        let upload = client.upload(Endpoint<Int>.post("media", body: .json(["name": "a"])))
        client.cancelAll()
        let download = client.download(.download("file"), to: directory.file("report.bin"))
        client.cancelAll()
        let updates = client.updates(for: Self.orders.caching(.cacheFirst(maxAge: .seconds(60))))
        client.cancelAll()
        gate.open()

        #expect(await networkError { _ = try await upload.value }?.code == .cancelled)
        #expect(await networkError { _ = try await download.value }?.code == .cancelled)
        #expect(await networkError { for try await _ in updates {} }?.code == .cancelled)
        #expect(!FileManager.default.fileExists(atPath: directory.file("report.bin").path))
    }
}
