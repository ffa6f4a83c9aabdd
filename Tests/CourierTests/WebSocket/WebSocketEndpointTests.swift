import Courier
import CourierTesting
import Foundation
import Testing

/// What a WebSocket endpoint refuses before anything goes out.
@Suite struct WebSocketEndpointTests {
    @Test("a client whose transport a WebSocket cannot honour (its pins unknown) refuses to open one, sending nothing")
    func unknownTransport() async {
        let transport = MockTransport { _ in .init(status: 101) }
        let client = NetworkClient(
            configuration: .init(baseURL: URL(string: "https://api.example.com/")!, transport: transport))
        let error = await #expect(throws: NetworkError.self) { try await client.webSocket(.webSocket("chat")) }
        #expect(error?.code == .invalidRequest)
        #expect(transport.requests.isEmpty)
    }

    @Test("a subprotocol that is not a token, or one offered twice, is refused")
    func subprotocols() throws {
        #expect(try WebSocketUpgrade.subprotocols("chat.v2, json") == ["chat.v2", "json"])
        for field in ["chat v2", "a,,b", "", "json, json", "ü"] {
            let error = #expect(throws: NetworkError.self) { try WebSocketUpgrade.subprotocols(field) }
            #expect(error?.code == .invalidRequest, "\(field)")
        }
    }

    @Test("a WebSocket endpoint sent as a request throws invalidRequest")
    func sentAsRequest() async {
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, transport: MockTransport { _ in .json("{}") }))
        let error = await #expect(throws: NetworkError.self) { try await client.send(.webSocket("chat")) }
        #expect(error?.code == .invalidRequest)
    }
}
