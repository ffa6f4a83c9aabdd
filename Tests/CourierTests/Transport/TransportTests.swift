import Courier
import CourierTesting
import Foundation
import Testing

/// Timeouts, cancellation and concurrency over loopback, against the Linux URLSession faults
/// listed in DESIGN.md.
@Suite struct TransportTests {
    @Test("a server that does not answer in time gives timedOut (client default)")
    func idleTimeout() async throws {
        let backend = try Backend(timeout: .milliseconds(300))
        defer { backend.server.stop() }
        backend.server.route("/v1/slow") { _ in LoopbackServer.Response.json(#"{"code":0}"#).delayed(by: .seconds(30)) }
        let start = ContinuousClock.now
        let error = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("slow")) }
        #expect(error?.code == .timedOut, "\(String(describing: error))")
        #expect(ContinuousClock.now - start < .seconds(10), "well before the server would have answered")
    }

    @Test("a per-endpoint timeout wins over the client default")
    func endpointTimeout() async throws {
        let backend = try Backend(timeout: .seconds(30))
        defer { backend.server.stop() }
        backend.server.route("/v1/slow") { _ in LoopbackServer.Response.json(#"{"code":0}"#).delayed(by: .seconds(30)) }
        let start = ContinuousClock.now
        let error = await networkError {
            _ = try await backend.client.send(Endpoint<EmptyResponse>.get("slow").timeout(.milliseconds(300)))
        }
        #expect(error?.code == .timedOut, "\(String(describing: error))")
        #expect(ContinuousClock.now - start < .seconds(10), "well before the server would have answered")
    }

    @Test("a timeout longer than any timer holds (Int64.max seconds as \"no timeout\") is no crash")
    func endlessTimeout() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/item") { _ in .envelope(data: 7) }
        #expect(try await backend.client.send(Endpoint<Int>.get("item").timeout(.seconds(Int64.max))) == 7)
    }

    @Test("a server that trickles bytes forever hits the overall deadline")
    func dripTimeout() async throws {
        let backend = try Backend(timeout: .milliseconds(800))
        defer { backend.server.stop() }
        let body = #"{"code":0,"data":""#.utf8 + Array(repeating: UInt8(ascii: "x"), count: 10_000) + #""}"#.utf8
        backend.server.route("/v1/drip") { _ in
            LoopbackServer.Response(headers: ["Content-Type": "application/json"], body: Data(body))
                .with(.drip(bytes: 1, every: .milliseconds(50)))
        }
        let start = ContinuousClock.now
        let error = await networkError { _ = try await backend.client.send(Endpoint<String>.get("drip")) }
        #expect(error?.code == .timedOut, "\(String(describing: error))")
        #expect(ContinuousClock.now - start < .seconds(10), "well before the server would have answered")
        // The caller has its answer; the connection closes once the transport takes the cancel.
        let closed = await backend.server.waitForEvents(timeout: .seconds(10) * TestTiming.scale) {
            $0.contains(.clientClosedEarly(target: "/v1/drip"))
        }
        if TestTransport.isURLSession {
            // Linux URLSession takes the cancel on FoundationNetworking's process-wide queue,
            // which the whole suite running at once has held for more than a minute (one run in
            // three on this machine); alone, the connection closes at once.
            withKnownIssue("FoundationNetworking takes the cancel late under load", isIntermittent: true) {
                #expect(closed)
            }
        } else {
            #expect(closed)
        }
    }

    @Test("cancelling the task stops the transfer: the server sees the connection close")
    func cancellation() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        // Answered only long after any cancellation lands, however loaded the machine.
        backend.server.route("/v1/slow") { _ in LoopbackServer.Response.json(#"{"code":0}"#).delayed(by: .seconds(60)) }
        let task = Task { try await backend.client.send(Endpoint<EmptyResponse>.get("slow")) }
        #expect(
            await backend.server.waitForEvents(timeout: .seconds(30) * TestTiming.scale) {
                $0.contains(.received(method: "GET", target: "/v1/slow"))
            })
        task.cancel()
        let error = await networkError { _ = try await task.value }
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        #expect(
            await backend.server.waitForEvents(timeout: .seconds(30) * TestTiming.scale) {
                $0.contains(.clientClosedEarly(target: "/v1/slow"))
            })
    }

    @Test("a request whose task is already cancelled is never sent")
    func cancelBeforeSend() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order]()) }
        let task = Task {
            Self.cancelCurrentTask()
            return try await backend.client.send(.orders(page: 1))
        }
        let error = await networkError { _ = try await task.value }
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        // A request sent after this one proves the server was listening all along.
        _ = try await backend.client.send(.orders(page: 2))
        #expect(backend.server.requests.map(\.target) == ["/v1/orders?page=2"])
    }

    /// Synchronous, so it calls `withUnsafeCurrentTask` of every system, not the async one of
    /// iOS 18 and macOS 15 that an async caller would get.
    private static func cancelCurrentTask() { withUnsafeCurrentTask { $0?.cancel() } }

    @Test("cancelAll cancels every request in flight and the activity count returns to zero")
    func cancelAll() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        // Answered only long after any cancellation lands, however loaded the machine.
        backend.server.route("/v1/slow") { _ in LoopbackServer.Response.json(#"{"code":0}"#).delayed(by: .seconds(60)) }
        let client = backend.client
        let slow = Endpoint<EmptyResponse>.get("slow").sharingIdenticalRequests(false)
        let tasks = (0..<8).map { _ in Task { try await client.send(slow) } }
        #expect(
            await backend.server.waitForEvents(timeout: .seconds(30) * TestTiming.scale) {
                $0.filter { if case .received = $0 { true } else { false } }.count == 8
            })
        #expect(client.activeRequestCount == 8)
        client.cancelAll()
        for task in tasks {
            let error = await networkError { _ = try await task.value }
            #expect(error?.code == .cancelled, "\(String(describing: error))")
        }
        #expect(client.activeRequestCount == 0)
        #expect(
            await backend.server.waitForEvents(timeout: .seconds(30) * TestTiming.scale) {
                $0.filter { if case .clientClosedEarly = $0 { true } else { false } }.count == 8
            })
    }

    @Test("the activity count rises and falls around requests")
    func activityUpdates() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        // The route holds each request until both reached the server, so both are in flight
        // at once however slowly the second one starts.
        let gate = Gate()
        backend.server.route("/v1/orders") { _ in
            await gate.pass()
            return .envelope(data: [Order]())
        }
        let updates = backend.client.activityUpdates()
        var iterator = updates.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        async let a = backend.client.send(.orders(page: 1))
        async let b = backend.client.send(.orders(page: 2))
        let both = await gate.arrivals(2, within: .seconds(30) * TestTiming.scale)
        gate.open()
        #expect(both, "both requests reached the server")
        _ = try await (a, b)
        var seen: [Int] = []
        while seen.last != 0 || seen.count < 4, let count = await iterator.next() { seen.append(count) }
        #expect(seen.max() == 2)
        #expect(seen.last == 0)
    }

    @Test("200 concurrent sends are all answered correctly")
    func concurrentSends() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { request in
            let page = Int(request.query["page"] ?? "") ?? -1
            return .envelope(data: [Order(id: page, title: "page \(page)")])
        }
        let client = backend.client
        let results = try await withThrowingTaskGroup(of: (Int, [Order]).self) { group in
            for page in 0..<200 { group.addTask { (page, try await client.send(.orders(page: page))) } }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(results.count == 200)
        #expect(results.allSatisfy { page, orders in orders == [Order(id: page, title: "page \(page)")] })
        #expect(client.activeRequestCount == 0)
    }

    @Test("a 401 with WWW-Authenticate: Basic returns promptly instead of hanging")
    func basicChallenge() async throws {
        let backend = try Backend(timeout: .seconds(60))
        defer { backend.server.stop() }
        backend.server.route("/v1/private") { _ in
            .init(
                status: 401, headers: ["WWW-Authenticate": #"Basic realm="api""#, "Content-Type": "application/json"],
                body: Data(#"{"code":99,"msg":"log in"}"#.utf8))
        }
        let start = ContinuousClock.now
        let error = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("private")) }
        #expect(error?.code == .httpStatus, "\(String(describing: error))")
        #expect(error?.status == 401)
        #expect(error?.businessCode == 99)
        #expect(ContinuousClock.now - start < .seconds(20), "far from the 60 s deadline: no hang")
    }

    @Test(
        "a connection the server drops is a transport error, not a hang",
        arguments: [
            LoopbackServer.Fault.closeBeforeResponding, .closeMidBody(afterBytes: 5), .closeMidBody(afterBytes: -1),
        ])
    func droppedConnection(_ fault: LoopbackServer.Fault) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/drop") { _ in
            LoopbackServer.Response.json(#"{"code":0,"data":"0123456789"}"#).with(fault)
        }
        let error = await networkError { _ = try await backend.client.send(Endpoint<String>.get("drop")) }
        #expect(error?.code == .transport, "\(String(describing: error))")
    }

    @Test("a refused connection is a transport error")
    func refused() async throws {
        let refusing = RefusingPort()
        let client = NetworkClient(
            configuration: .init(baseURL: URL(string: "http://127.0.0.1:\(refusing.port)/")!, timeout: .seconds(5)))
        let error = await networkError { _ = try await client.send(Endpoint<EmptyResponse>.get("x")) }
        #expect(error?.code == .transport, "\(String(describing: error))")
        #expect(refusing.port > 0)
    }
}

@Suite struct CachingTests {
    @Test("no URL cache by default: a cacheable answer is fetched again")
    func noCache() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/cacheable") { _ in
            var response = LoopbackServer.Response.envelope(data: 1)
            response.headers["Cache-Control"] = "public, max-age=3600"
            response.headers["ETag"] = "\"v1\""
            return response
        }
        for _ in 0..<3 { _ = try await backend.client.send(Endpoint<Int>.get("cacheable")) }
        #expect(backend.server.requests.count == 3)
        #expect(backend.server.requests.allSatisfy { $0.headers["If-None-Match"] == nil })
    }
}
