import Courier
import CourierTesting
import Foundation
import Testing

/// Before iOS 18 and macOS 15 there are no task executors, so LoopbackServer runs routes in
/// tasks of Swift's shared pool instead of on their connections' threads. Linux has executors;
/// these tests ask for the older way to prove it answers the same. They keep to a few requests:
/// in a process whose tests hold the shared pool (as the suite's do, on two cores) such routes
/// wait for it, which is why the executor is the default.
@Suite(.timeLimit(.minutes(1))) struct LoopbackServerPoolTests {
    /// A client whose timeout only ends a hang, stretched like every such limit.
    static func client(for server: LoopbackServer) -> NetworkClient {
        NetworkClient(
            configuration: .init(
                baseURL: server.baseURL.appending(path: "v1"), timeout: .seconds(10) * TestTiming.scale,
                transport: TestTransport.make()))
    }

    @Test("routes that await answer concurrent requests, each its own")
    func concurrentAwaitingRoutes() async throws {
        let server = try LoopbackServer(routesOnConnectionThreads: false)
        defer { server.stop() }
        server.route("/v1/orders") { request in
            try await Task.sleep(for: .milliseconds(5))
            let page = Int(request.query["page"] ?? "") ?? -1
            return .envelope(data: [Order(id: page, title: "page \(page)")])
        }
        let client = Self.client(for: server)
        let pages = try await withThrowingTaskGroup(of: (Int, [Order]).self) { group in
            for page in 1...8 {
                group.addTask {
                    (page, try await client.send(Endpoint<[Order]>.get("orders", query: ["page": "\(page)"])))
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(pages.count == 8)
        for (page, orders) in pages { #expect(orders == [Order(id: page, title: "page \(page)")]) }
        #expect(server.requests.count == 8)
    }

    @Test("routes run in the shared pool when asked to, on a task executor by default")
    func whereRoutesRun() async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return }
        for onConnectionThreads in [false, true] {
            let server = try LoopbackServer(routesOnConnectionThreads: onConnectionThreads)
            defer { server.stop() }
            server.route("/v1/where") { _ in
                let preferred = withUnsafeCurrentTask { $0?.unownedTaskExecutor != nil }
                return .text(preferred ? "executor" : "pool")
            }
            let response = try await Self.client(for: server).send(
                Endpoint<HTTPResponse>(method: .get, path: "where", decoding: .response))
            #expect(String(decoding: response.body, as: UTF8.self) == (onConnectionThreads ? "executor" : "pool"))
        }
    }

    @Test("a route that throws is answered 500 and the server keeps serving")
    func throwingRoute() async throws {
        let server = try LoopbackServer(routesOnConnectionThreads: false)
        defer { server.stop() }
        struct Broken: Error {}
        server.route("/v1/broken") { _ in throw Broken() }
        server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "a")]) }
        let client = Self.client(for: server)
        let error = await networkError { _ = try await client.send(Endpoint<[Order]>.get("broken")) }
        #expect(error?.status == 500, "\(String(describing: error))")
        #expect(try await client.send(Endpoint<[Order]>.get("orders")) == [Order(id: 1, title: "a")])
    }
}
