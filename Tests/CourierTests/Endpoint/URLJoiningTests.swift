import Courier
import CourierTesting
import Foundation
import Testing

/// Path joining and query merging, observed in what the transport is asked to send.
@Suite struct URLJoiningTests {
    /// Sends `endpoint` through a client on `base` and returns the URL that would go on the wire.
    private func wireURL(base: String, _ endpoint: Endpoint<EmptyResponse>) async throws -> String {
        let transport = MockTransport { _ in HTTPResponse(status: 204) }
        let client = NetworkClient(configuration: .init(baseURL: URL(string: base)!, transport: transport))
        _ = try await client.send(endpoint)
        return try #require(transport.requests.first).wireURL().absoluteString
    }

    struct Joining: Sendable, CustomTestStringConvertible {
        let base: String
        let path: String
        let expected: String
        var testDescription: String { "\(base) + \(path)" }
    }

    static let joinings: [Joining] = [
        .init(base: "https://api.example.com/v1/", path: "orders", expected: "https://api.example.com/v1/orders"),
        .init(base: "https://api.example.com/v1/", path: "/orders", expected: "https://api.example.com/v1/orders"),
        .init(base: "https://api.example.com/v1", path: "orders", expected: "https://api.example.com/v1/orders"),
        .init(base: "https://api.example.com/v1", path: "/orders", expected: "https://api.example.com/v1/orders"),
        .init(base: "https://api.example.com/v1//", path: "//orders", expected: "https://api.example.com/v1/orders"),
        .init(base: "https://api.example.com", path: "orders", expected: "https://api.example.com/orders"),
        .init(base: "https://api.example.com/", path: "orders/", expected: "https://api.example.com/orders/"),
        .init(base: "https://api.example.com/v1/", path: "", expected: "https://api.example.com/v1/"),
        .init(base: "https://api.example.com/v1", path: "/", expected: "https://api.example.com/v1/"),
        .init(base: "https://api.example.com/v1/", path: "a/b/c", expected: "https://api.example.com/v1/a/b/c"),
        .init(base: "http://127.0.0.1:8080/api/", path: "x", expected: "http://127.0.0.1:8080/api/x"),
        .init(
            base: "https://api.example.com/v1/", path: "http://other.example.org/raw?x=1",
            expected: "http://other.example.org/raw?x=1"),
        .init(
            base: "https://api.example.com/v1/", path: "HTTPS://cdn.example.org/a b",
            expected: "HTTPS://cdn.example.org/a%20b"),
        .init(
            base: "https://api.example.com/v1/", path: "files/my file.txt",
            expected: "https://api.example.com/v1/files/my%20file.txt"),
        .init(
            base: "https://api.example.com/v1/", path: "files/a%2Fb", expected: "https://api.example.com/v1/files/a%2Fb"
        ),
        .init(
            base: "https://api.example.com/v1/", path: "用户/😀",
            expected: "https://api.example.com/v1/%E7%94%A8%E6%88%B7/%F0%9F%98%80"),
        .init(base: "https://api.example.com/v1/", path: "orders#top", expected: "https://api.example.com/v1/orders"),
        .init(base: "https://api.example.com/v1/", path: "100%", expected: "https://api.example.com/v1/100%25"),
    ]

    @Test("paths join to the base URL with exactly one slash", arguments: joinings)
    func joins(_ case: Joining) async throws {
        let url = try await wireURL(base: `case`.base, .init(method: .get, path: `case`.path, decoding: .empty))
        #expect(url == `case`.expected)
    }

    @Test("a query in the path is merged before the endpoint's query, repeated keys kept in order")
    func mergesQuery() async throws {
        let endpoint = Endpoint<EmptyResponse>(
            method: .get, path: "search?sort=asc&tag=a", query: ["tag": "b", "page": "2", "tag": "c"],
            decoding: .empty)
        let url = try await wireURL(base: "https://api.example.com/v1/?key=k", endpoint)
        #expect(url == "https://api.example.com/v1/search?key=k&sort=asc&tag=a&tag=b&page=2&tag=c")
    }

    @Test("a base URL that is not http(s) is an invalid request, not a crash")
    func rejectsBadBase() async throws {
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "ftp://files.example.com/")!, transport: MockTransport { _ in .json("{}") }))
        let error = await networkError {
            _ = try await client.send(Endpoint<EmptyResponse>.init(method: .get, path: "x", decoding: .empty))
        }
        #expect(error?.code == .invalidRequest)
    }

    @Test(
        "an invalid method token or header is rejected before sending",
        arguments: [
            Endpoint<EmptyResponse>(method: "GE T", path: "x", decoding: .empty),
            Endpoint<EmptyResponse>(method: "", path: "x", decoding: .empty),
            Endpoint<EmptyResponse>(
                method: .get, path: "x", headers: ["X-Evil": "a\r\nInjected: yes"], decoding: .empty),
            Endpoint<EmptyResponse>(method: .get, path: "x", headers: ["Bad Name": "v"], decoding: .empty),
            Endpoint<EmptyResponse>(method: .get, path: "x", decoding: .empty).timeout(.zero),
        ])
    func rejectsInvalidParts(_ endpoint: Endpoint<EmptyResponse>) async throws {
        let transport = MockTransport { _ in HTTPResponse(status: 204) }
        let client = NetworkClient(
            configuration: .init(baseURL: URL(string: "https://api.example.com/")!, transport: transport))
        let error = await networkError { _ = try await client.send(endpoint) }
        #expect(error?.code == .invalidRequest)
        #expect(transport.requests.isEmpty)
    }
}
