import Courier
import CourierTesting
import Foundation
import Testing

extension Endpoint where Response == [Order] {
    static func orders(page: Int) -> Self { .get("orders", query: ["page": "\(page)"]) }
}

@Suite struct SmokeTests {
    @Test("an envelope is decoded over loopback")
    func envelope() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .envelope(data: [Order(id: 1, title: "Tea")]) }
        let orders = try await backend.client.send(.orders(page: 1))
        #expect(orders == [Order(id: 1, title: "Tea")])
        #expect(backend.server.requests.first?.target == "/v1/orders?page=1")
    }
}
