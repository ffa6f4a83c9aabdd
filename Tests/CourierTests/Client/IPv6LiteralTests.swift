import CourierTesting
import Foundation
import Testing

@testable import Courier

/// IPv6 literal hosts (`http://[…]:port/`). The address is IPv4-mapped (`::ffff:127.0.0.1`):
/// the URL is an IPv6 literal all the way through Courier and libcurl, yet the traffic stays
/// on 127.0.0.1.
@Suite struct IPv6LiteralTests {
    private func literalBase(_ server: LoopbackServer) -> URL {
        URL(string: "http://[::ffff:127.0.0.1]:\(server.port)/v1/")!
    }

    #if os(Linux)
        @Test("CurlTransport reaches an IPv6 literal host: path, query, body and Host header intact")
        func curlReachesLiteral() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.route("/v1/orders", method: .post) { request in
                .envelope(data: Order(id: Int(request.query["id"] ?? "") ?? -1, title: request.form["title"] ?? "-"))
            }
            let client = NetworkClient(
                configuration: .init(baseURL: literalBase(server), transport: try CurlTransport()))

            let order = try await client.send(
                Endpoint<Order>.post("orders", query: ["id": "7"], body: .form(["title": "tea"])))

            #expect(order == Order(id: 7, title: "tea"))
            let request = try #require(server.requests.first)
            #expect(request.headers["Host"] == "[::ffff:127.0.0.1]:\(server.port)")
        }
    #endif

    @Test("URLSessionTransport refuses an IPv6 literal host on Linux with a clear error, sending nothing")
    func urlSessionRefusesLiteral() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.route("/v1/ping") { _ in .envelope(data: "pong") }
        let client = NetworkClient(configuration: .init(baseURL: literalBase(server), transport: URLSessionTransport()))

        let error = await networkError { _ = try await client.send(Endpoint<String>.get("ping")) }

        #if os(Linux)
            #expect(error?.code == .invalidRequest)
            #expect(error?.message.contains("CurlTransport") == true)
            #expect(server.requests.isEmpty)
        #else
            #expect(error == nil, "Apple's URLSession reaches IPv6 literals")
        #endif
    }
}
