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

    static let custom = EnvelopeFormat(codeKey: "errno", messageKey: "errmsg", dataKey: "result", successCodes: [200])

    @Test("the envelope helpers write the keys of the client's envelope format")
    func envelopeFormat() async throws {
        let transport = MockTransport(results: [
            .success(try .envelope(code: 200, data: ["tea"], format: Self.custom)),
            .success(try .envelope(code: 7, message: "sold out", data: [String](), format: Self.custom)),
        ])
        let client = NetworkClient(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/")!, envelope: Self.custom, transport: transport))
        #expect(try await client.send(Endpoint<[String]>.get("menu")) == ["tea"])
        let failed = await networkError { _ = try await client.send(Endpoint<[String]>.get("menu")) }
        #expect(failed?.code == .business)
        #expect(failed?.businessCode == 7)
        #expect(failed?.businessMessage == "sold out")

        let backend = try Backend { $0.envelope = Self.custom }
        defer { backend.server.stop() }
        backend.server.route("/v1/menu") { _ in .envelope(code: 200, data: ["cake"], format: Self.custom) }
        #expect(try await backend.client.send(Endpoint<[String]>.get("menu")) == ["cake"])
    }

    @Test("canned answers can take their time, and a request cancelled meanwhile throws cancelled")
    func delayedAnswers() async throws {
        let transport = MockTransport(
            results: [.success(.json(#"{"code":0,"data":1}"#))], delay: .milliseconds(200))
        let client = NetworkClient(
            configuration: .init(baseURL: URL(string: "https://api.example.com/")!, transport: transport))
        let started = ContinuousClock.now
        #expect(try await client.send(Endpoint<Int>.get("a")) == 1)
        #expect(ContinuousClock.now - started >= .milliseconds(200))

        // A delay no machine gets through before the cancel, which comes once the request was
        // recorded (so it is under way, waiting out its delay, not refused before it began).
        let slow = MockTransport(results: [.success(.json(#"{"code":0,"data":2}"#))], delay: .seconds(60))
        let slowClient = NetworkClient(
            configuration: .init(baseURL: URL(string: "https://api.example.com/")!, transport: slow))
        let waiting = Task { await networkError { _ = try await slowClient.send(Endpoint<Int>.get("b")) } }
        let deadline = ContinuousClock.now + .seconds(30) * TestTiming.scale
        while slow.requests.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(slow.requests.map(\.url.path) == ["/b"])
        waiting.cancel()
        #expect(await waiting.value?.code == .cancelled)
    }

    @Test("JSON and text answers carry their status and headers")
    func statusAndHeaders() async throws {
        let transport = MockTransport(results: [
            .success(.json(#"{"code":0,"data":1}"#, status: 201, headers: ["ETag": "\"v1\""])),
            .success(.text("héllo", status: 202)),
        ])
        let client = NetworkClient(
            configuration: .init(baseURL: URL(string: "https://api.example.com/")!, transport: transport))
        let response = try await client.send(.get("a", decoding: .response))
        #expect(response.status == 201)
        #expect(response.headers["ETag"] == "\"v1\"")
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(try await client.send(.get("b", decoding: .text)) == "héllo")
    }
}
