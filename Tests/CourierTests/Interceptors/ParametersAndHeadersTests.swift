import Courier
import CourierTesting
import Foundation
import Testing

/// Common headers and common parameters, as the server receives them.
@Suite struct ParametersAndHeadersTests {
    @Test("static and computed headers are added; the endpoint's own header wins")
    func headers() async throws {
        let backend = try Backend {
            $0.interceptors = [
                .headers(["phone_type": "app_iOS", "User-Agent": "static"]) { request in
                    ["User-Agent": "enc(" + request.url.lastPathComponent + ")"]
                }
            ]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in .empty204 }
        _ = try await backend.client.send(Endpoint<EmptyResponse>.get("a", decoding: .empty))
        _ = try await backend.client.send(
            Endpoint<EmptyResponse>.get("a", headers: ["phone_type": "web"], decoding: .empty))
        let (first, second) = (backend.server.requests[0].headers, backend.server.requests[1].headers)
        #expect(first["phone_type"] == "app_iOS")
        #expect(first["User-Agent"] == "enc(a)")
        #expect(second["phone_type"] == "web")
    }

    @Test("a computed header that fails or is invalid is an invalid request, and nothing is sent")
    func badHeaders() async throws {
        struct Failure: Error {}
        let transport = MockTransport { _ in .json("{}") }
        for layer: HeadersInterceptor in [.headers(computed: { _ in throw Failure() }), .headers(["X": "a\nb"])] {
            let client = NetworkClient(
                configuration: .init(
                    baseURL: URL(string: "https://api.example.com/")!, interceptors: [layer], transport: transport))
            let error = await networkError { _ = try await client.send(Endpoint<EmptyResponse>.get("a")) }
            #expect(error?.code == .invalidRequest)
        }
        #expect(transport.requests.isEmpty)
    }

    private static let common: CommonParametersInterceptor = .commonParameters(["version": "3.2.0", "os": "2"]) { _ in
        ["deviceId": "dev 1/é"]
    }

    @Test("common parameters go to the query of GET, HEAD and DELETE", arguments: [HTTPMethod.get, .head, .delete])
    func query(_ method: HTTPMethod) async throws {
        let backend = try Backend { $0.interceptors = [Self.common] }
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in .empty204 }
        _ = try await backend.client.send(
            Endpoint<EmptyResponse>(method: method, path: "a", query: ["os": "mine"], decoding: .empty))
        let request = try #require(backend.server.requests.first)
        #expect(
            request.query.items.map { "\($0.name)=\($0.value)" } == ["os=mine", "version=3.2.0", "deviceId=dev 1/é"])
        #expect(request.body.isEmpty)
    }

    @Test("common parameters go to the form of a POST, with or without a form body")
    func form() async throws {
        let backend = try Backend { $0.interceptors = [Self.common] }
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in .empty204 }
        _ = try await backend.client.send(
            Endpoint<EmptyResponse>.post("a", body: .form(["version": "9"]), decoding: .empty))
        _ = try await backend.client.send(Endpoint<EmptyResponse>.post("a", decoding: .empty))
        let (first, second) = (backend.server.requests[0], backend.server.requests[1])
        #expect(first.form.items.map { "\($0.name)=\($0.value)" } == ["version=9", "os=2", "deviceId=dev 1/é"])
        #expect(second.form.items.map(\.name) == ["version", "os", "deviceId"])
        #expect(second.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(first.rawQuery.isEmpty && second.rawQuery.isEmpty)
    }

    @Test("common parameters join the top-level object of a JSON body; raw bodies keep their bytes")
    func json() async throws {
        struct Body: Codable, Sendable {
            let title: String
            let os: String
        }
        let backend = try Backend { $0.interceptors = [Self.common] }
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in .empty204 }
        _ = try await backend.client.send(
            Endpoint<EmptyResponse>.put("a", body: .json(Body(title: "t", os: "ios")), decoding: .empty))
        _ = try await backend.client.send(
            Endpoint<EmptyResponse>.post(
                "a", body: .data(Data("raw".utf8), contentType: "text/plain"), decoding: .empty))
        let object = try JSONSerialization.jsonObject(with: backend.server.requests[0].body) as? [String: String]
        #expect(object == ["title": "t", "os": "ios", "version": "3.2.0", "deviceId": "dev 1/é"])
        #expect(backend.server.requests[1].body == Data("raw".utf8))
        #expect(backend.server.requests[1].query["version"] == "3.2.0")
    }

    @Test(
        "common parameters placed in the query go there for JSON and form bodies too; placed as headers, in headers",
        arguments: [CommonParametersInterceptor.Placement.query, .headers])
    func placed(placement: CommonParametersInterceptor.Placement) async throws {
        let backend = try Backend {
            $0.interceptors = [
                .commonParameters(["version": "3.2.0", "os": "2"], placement: placement),
                .signing(.hmacSHA256(secret: Data("k".utf8))),
            ]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in .empty204 }
        _ = try await backend.client.send(
            Endpoint<EmptyResponse>.post("a", body: .json(["title": "t"]), decoding: .empty))
        _ = try await backend.client.send(
            Endpoint<EmptyResponse>.post("a", query: ["os": "9"], body: .form(["title": "t"]), decoding: .empty))

        let (json, form) = (backend.server.requests[0], backend.server.requests[1])
        let object = try JSONSerialization.jsonObject(with: json.body) as? [String: String]
        #expect(object == ["title": "t"], "the JSON body is the caller's")
        #expect(form.form["version"] == nil && form.form["title"] == "t", "the form keeps its own fields")
        switch placement {
        case .query:
            #expect(json.query["version"] == "3.2.0" && json.query["os"] == "2")
            #expect(form.query["version"] == "3.2.0" && form.query["os"] == "9", "the request's own value stays")
        default:
            #expect(json.headers["version"] == "3.2.0" && json.headers["os"] == "2")
            #expect(form.headers["version"] == "3.2.0" && form.query["os"] == "9")
        }
    }

    @Test(
        "common parameters placed in the query skip a name the request's form or multipart form already has, not a JSON member's"
    )
    func queryPlacementKeepsBodyValues() async throws {
        let backend = try Backend {
            $0.interceptors = [.commonParameters(["version": "3.2.0", "os": "2"], placement: .query)]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in .empty204 }
        let bodies: [RequestBody] = [
            .form(["os": "ios"]), .multipart(MultipartForm(fields: ["os": "ios"])), .json(["os": "ios"]),
        ]
        for body in bodies {
            _ = try await backend.client.send(Endpoint<EmptyResponse>.post("a", body: body, decoding: .empty))
        }

        let requests = backend.server.requests
        #expect(requests.count == 3)
        #expect(requests.allSatisfy { $0.query["version"] == "3.2.0" })
        #expect(requests.prefix(2).allSatisfy { $0.query["os"] == nil }, "one os parameter, the request's own")
        #expect(requests.last?.query["os"] == "2", "a JSON member is the body's, not a parameter")
        #expect(try JSONSerialization.jsonObject(with: requests[2].body) as? [String: String] == ["os": "ios"])
    }

    @Test("added parameters leave the caller's JSON as encoded: key order and numbers past Double")
    func jsonKeptExactly() async throws {
        struct Order: Codable, Sendable, Equatable {
            let zone: String
            let amount: UInt64
            let os: String
        }
        let backend = try Backend {
            $0.session = Session(
                store: InMemoryTokenStore(credential: Credential(accessToken: "t1")), placement: .parameter("token"))
            $0.interceptors = [Self.common]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in .empty204 }
        let order = Order(zone: "z", amount: .max, os: "android")
        _ = try await backend.client.send(Endpoint<EmptyResponse>.post("a", body: .json(order), decoding: .empty))

        let received = String(decoding: try #require(backend.server.requests.first).body, as: UTF8.self)
        // The encoder's own text (its key order is its own), then the added members.
        let added = #","token":"t1","version":"3.2.0","deviceId":"dev 1/é"}"#
        let own = try #require(received.hasSuffix(added) ? received.dropLast(added.count) + "}" : nil, "\(received)")
        #expect(own.contains(#""amount":18446744073709551615"#), "\(own)")
        #expect(try JSONDecoder().decode(Order.self, from: Data(own.utf8)) == order)
    }

    @Test("a JSON body that is not an object cannot take common parameters")
    func jsonArray() async throws {
        let transport = MockTransport { _ in .json("{}") }
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, interceptors: [Self.common], transport: transport))
        let error = await networkError {
            _ = try await client.send(Endpoint<EmptyResponse>.post("a", body: .json([1, 2])))
        }
        #expect(error?.code == .invalidRequest)
        #expect(transport.requests.isEmpty)
    }
}
