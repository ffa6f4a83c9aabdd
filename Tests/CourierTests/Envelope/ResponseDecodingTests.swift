import Courier
import CourierTesting
import Foundation
import Testing

/// Decodings of one's own, and an endpoint's own JSON decoder.
@Suite struct ResponseDecodingTests {
    struct Parse: Error {}

    static let lines = ResponseDecoding<[String]> { response, _ in
        guard let text = String(data: response.body, encoding: .utf8) else { throw Parse() }
        return text.split(separator: "\n").map(String.init)
    }

    @Test("a decoding of one's own reads the whole answer; its own errors become decodingFailed")
    func custom() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/lines") { _ in .text("a\nb\n") }
        backend.server.route("/v1/bytes") { _ in LoopbackServer.Response(body: Data([0xFF, 0xFE])) }
        #expect(try await backend.client.send(.get("lines", decoding: Self.lines)) == ["a", "b"])

        let error = await networkError { _ = try await backend.client.send(.get("bytes", decoding: Self.lines)) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.underlying is Parse)
        #expect(error?.body == Data([0xFF, 0xFE]))
    }

    @Test("a NetworkError thrown by one's own decoding is kept; checkingContentType refuses another media type")
    func customKeepsNetworkErrorsAndChecksType() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/page") { _ in .text("<svg/>", contentType: "image/svg+xml") }
        let refusing = ResponseDecoding<Int> { _, _ in throw NetworkError(.business, "no") }
        let checking = ResponseDecoding<Int>(checkingContentType: true) { _, _ in 1 }
        let trusting = ResponseDecoding<Int> { _, _ in 1 }
        #expect(try await backend.client.send(.get("page", decoding: trusting)) == 1)
        #expect(
            await networkError { _ = try await backend.client.send(.get("page", decoding: refusing)) }?.code
                == .business)
        #expect(
            await networkError { _ = try await backend.client.send(.get("page", decoding: checking)) }?.code
                == .unacceptableContentType)
    }

    struct Stamp: Decodable, Sendable, Equatable { let at: Date }

    @Test("an endpoint's own decoder wins for that endpoint, the client's envelope format still applies")
    func ownDecoder() async throws {
        let format = EnvelopeFormat(codeKey: "errno", messageKey: "errmsg", dataKey: "result")
        let backend = try Backend { $0.envelope = format }
        defer { backend.server.stop() }
        backend.server.route("/v1/stamp") { _ in .envelope(data: ["at": 86_400], format: format) }
        backend.server.route("/v1/bare") { _ in .json(#"{"at":86400}"#) }
        let seconds = JSONDecoder()
        seconds.dateDecodingStrategy = .secondsSince1970
        let expected = Stamp(at: Date(timeIntervalSince1970: 86_400))

        #expect(try await backend.client.send(.get("stamp", decoding: .envelope(using: seconds))) == expected)
        #expect(try await backend.client.send(.get("bare", decoding: .json(using: seconds))) == expected)
        // Changed afterwards, the decoder does not change the endpoints made with it.
        let endpoint = Endpoint<Stamp>.get("bare", decoding: .json(using: seconds))
        seconds.dateDecodingStrategy = .millisecondsSince1970
        #expect(try await backend.client.send(endpoint) == expected)
        // The client's own decoder (deferred to Date's default) reads the number differently.
        #expect(try await backend.client.send(Endpoint<Stamp>.get("stamp")) != expected)
    }
}
