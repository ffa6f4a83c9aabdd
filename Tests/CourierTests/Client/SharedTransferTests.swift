import Courier
import CourierTesting
import Foundation
import Testing

/// Identical requests in flight share one transfer: what is shared, what is not, and who may
/// cancel it.
@Suite struct SharedTransferTests {
    private static let slowOrders = "/v1/orders"

    private func backend() throws -> Backend {
        let backend = try Backend()
        backend.server.route(Self.slowOrders) { _ in
            LoopbackServer.Response.envelope(data: [Order(id: 1, title: "Tea")]).delayed(by: .milliseconds(300))
        }
        return backend
    }

    /// Waits until `count` callers wait for the shared transfer (checked every 5 ms, for at
    /// most 5 s), so a cancellation lands on a caller that has joined it.
    private func joined(_ client: NetworkClient, _ count: Int) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while client.sharedTransferWaiters < count {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    private func received(_ server: LoopbackServer) -> Int {
        server.events.filter { if case .received = $0 { true } else { false } }.count
    }

    @Test("1,000 identical shared GETs at once reach the server as one request, and every caller gets the answer")
    func thousandIdenticalGets() async throws {
        let backend = try backend()
        defer { backend.server.stop() }

        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<1_000 {
                group.addTask {
                    try await backend.client.send(Endpoint<[Order]>.get("orders").sharingIdenticalRequests(true)).count
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }

        #expect(counts.count == 1_000 && counts.allSatisfy { $0 == 1 })
        #expect(backend.server.requests.count == 1)
    }

    @Test("each caller decodes the shared answer as its own endpoint says")
    func eachCallerDecodes() async throws {
        let backend = try backend()
        defer { backend.server.stop() }

        async let orders = backend.client.send(Endpoint<[Order]>.get("orders").sharingIdenticalRequests(true))
        async let text = backend.client.send(
            Endpoint<String>.get("orders", decoding: .text).sharingIdenticalRequests(true))
        let (decoded, raw) = try await (orders, text)

        #expect(decoded == [Order(id: 1, title: "Tea")])
        #expect(raw.contains("\"Tea\""))
        #expect(backend.server.requests.count == 1)
    }

    @Test("a different query, header or body, and an endpoint that does not share, each get a transfer of their own")
    func notShared() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let shared = { (endpoint: Endpoint<[Order]>) in endpoint.sharingIdenticalRequests(true) }
        let endpoints: [Endpoint<[Order]>] = [
            shared(.get("orders")), shared(.get("orders", query: ["page": "2"])),
            shared(.get("orders", headers: ["X-Region": "east"])), .get("orders"), .get("orders"),
            shared(.post("orders", body: .form(["a": "1"]))), shared(.post("orders", body: .form(["a": "2"]))),
        ]

        try await withThrowingTaskGroup(of: Void.self) { group in
            for endpoint in endpoints { group.addTask { _ = try await backend.client.send(endpoint) } }
            try await group.waitForAll()
        }

        #expect(backend.server.requests.count == endpoints.count)
    }

    @Test("one caller's cancellation does not cancel the transfer the others wait for")
    func oneCancelled() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let client = backend.client

        let leaving = Task { try await client.send(Endpoint<[Order]>.get("orders").sharingIdenticalRequests(true)) }
        let staying = Task { try await client.send(Endpoint<[Order]>.get("orders").sharingIdenticalRequests(true)) }
        #expect(await joined(client, 2))
        leaving.cancel()

        let error = await networkError { _ = try await leaving.value }
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

        let first = Task { try await client.send(Endpoint<[Order]>.get("orders").sharingIdenticalRequests(true)) }
        let second = Task { try await client.send(Endpoint<[Order]>.get("orders").sharingIdenticalRequests(true)) }
        #expect(await joined(client, 2))
        #expect(await backend.server.waitForEvents { $0.contains(.received(method: "GET", target: "/v1/orders")) })
        first.cancel()
        second.cancel()

        #expect(await networkError { _ = try await first.value }?.code == .cancelled)
        #expect(await networkError { _ = try await second.value }?.code == .cancelled)
        #expect(await backend.server.waitForEvents { $0.contains(.clientClosedEarly(target: "/v1/orders")) })
        #expect(
            try await client.send(Endpoint<[Order]>.get("orders").sharingIdenticalRequests(true)) == [
                Order(id: 1, title: "Tea")
            ])
        #expect(received(backend.server) == 2)
    }

    @Test("cancelAll() cancels the shared transfer with every caller")
    func cancelAll() async throws {
        let backend = try backend()
        defer { backend.server.stop() }
        let client = backend.client

        let callers = (0..<3).map { _ in
            Task { try await client.send(Endpoint<[Order]>.get("orders").sharingIdenticalRequests(true)) }
        }
        #expect(await joined(client, 3))
        #expect(await backend.server.waitForEvents { $0.contains(.received(method: "GET", target: "/v1/orders")) })
        client.cancelAll()

        for caller in callers { #expect(await networkError { _ = try await caller.value }?.code == .cancelled) }
        #expect(await backend.server.waitForEvents { $0.contains(.clientClosedEarly(target: "/v1/orders")) })
        #expect(client.activeRequestCount == 0)
    }
}
