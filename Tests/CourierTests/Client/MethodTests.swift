import Courier
import CourierTesting
import Foundation
import Testing

extension Endpoint where Response == [Order] {
    static func orders(page: Int) -> Self { .get("orders", query: ["page": "\(page)"]) }
}

/// Every method and body kind, as the server receives them.
@Suite struct MethodTests {
    @Test("the quick start works: a typed endpoint decoded from an envelope")
    func quickStart() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders", method: .get) { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }
        let orders = try await backend.client.send(.orders(page: 1))
        #expect(orders == [Order(id: 1, title: "Tea")])
        #expect(backend.server.requests.map(\.target) == ["/v1/orders?page=1"])
    }

    @Test(
        "each method reaches the server as itself",
        arguments: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND"])
    func methods(_ name: String) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/thing", method: HTTPMethod(name)) { request in
            .envelope(data: request.method.rawValue)
        }
        let echoed = try await backend.client.send(
            Endpoint<String>(method: HTTPMethod(name), path: "thing", decoding: .envelope))
        #expect(echoed == name)
        #expect(backend.server.requests.first?.method == HTTPMethod(name))
    }

    @Test("HEAD returns status and headers and no body")
    func head() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/thing", method: .head) { _ in .json(#"{"code":0}"#) }
        let response = try await backend.client.send(.head("thing"))
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(backend.server.requests.first?.method == "HEAD")
    }

    @Test("a JSON body is encoded once with its content type")
    func jsonBody() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders", method: .post) { request in
            .envelope(data: try request.json(Order.self))
        }
        let created = try await backend.client.send(
            Endpoint<Order>.post("orders", body: .json(Order(id: 9, title: "Cake 🍰"))))
        #expect(created == Order(id: 9, title: "Cake 🍰"))
        #expect(backend.server.requests.first?.headers["Content-Type"] == "application/json")
    }

    @Test("a raw body keeps its bytes and content type; a POST without a body is not sent as a form")
    func rawBody() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        let bytes = Data((0..<1000).map { UInt8($0 % 256) })
        backend.server.route("/v1/raw") { request in .envelope(data: request.body.count) }
        let count = try await backend.client.send(
            Endpoint<Int>.put("raw", body: .data(bytes, contentType: "application/octet-stream")))
        #expect(count == 1000)
        #expect(backend.server.requests[0].body == bytes)
        #expect(backend.server.requests[0].headers["Content-Type"] == "application/octet-stream")
        _ = try await backend.client.send(Endpoint<Int>.post("raw"))
        #expect(backend.server.requests[1].headers["Content-Type"] != "application/x-www-form-urlencoded")
        #expect(backend.server.requests[1].body.isEmpty)
    }

    @Test("endpoint headers are sent; a JSON encoding failure is an invalid request")
    func headersAndEncodingFailure() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/h") { request in .envelope(data: request.headers["phone_type"] ?? "") }
        let value = try await backend.client.send(Endpoint<String>.get("h", headers: ["phone_type": "app_iOS"]))
        #expect(value == "app_iOS")

        let error = await networkError {
            _ = try await backend.client.send(Endpoint<String>.post("h", body: .json(Double.nan)))
        }
        #expect(error?.code == .invalidRequest)
        #expect(backend.server.requests.count == 1)
    }
}
