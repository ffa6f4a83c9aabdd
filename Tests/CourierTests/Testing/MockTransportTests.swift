import Courier
import CourierTesting
import Foundation
import Testing

@Suite struct MockTransportTests {
    @Test("canned results are used in order, then it fails with transport")
    func cannedResults() async throws {
        let transport = MockTransport(results: [
            .success(.json(#"{"code":0,"data":1}"#)), .failure(NetworkError(.timedOut, "canned")),
        ])
        let client = NetworkClient(
            configuration: .init(baseURL: URL(string: "https://api.example.com/")!, transport: transport))
        #expect(try await client.send(Endpoint<Int>.get("a")) == 1)
        #expect(await networkError { _ = try await client.send(Endpoint<Int>.get("b")) }?.code == .timedOut)
        #expect(await networkError { _ = try await client.send(Endpoint<Int>.get("c")) }?.code == .transport)
        #expect(transport.requests.map(\.url.path) == ["/a", "/b", "/c"])
    }

    @Test("a closure sees the structured request")
    func closure() async throws {
        let transport = MockTransport { request in
            .json(#"{"code":0,"data":"\#(request.method.rawValue) \#(request.query["q"] ?? "")"}"#)
        }
        let client = NetworkClient(
            configuration: .init(baseURL: URL(string: "https://api.example.com/")!, transport: transport))
        #expect(try await client.send(Endpoint<String>.get("s", query: ["q": "tea"])) == "GET tea")
    }
}
