import Courier
import CourierTesting
import Foundation
import Testing

/// The endpoint factories for any decoding, `DELETE` with a body, text answers, and uploads
/// written without a type.
@Suite struct EndpointFactoryTests {
    @Test("every factory takes a decoding that is not Decodable, such as the whole response")
    func factoriesTakeAnyDecoding() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        for method in [HTTPMethod.get, .post, .put, .patch, .delete] {
            backend.server.route("/v1/thing", method: method) { request in .text(request.method.rawValue, status: 201) }
        }
        let endpoints: [Endpoint<HTTPResponse>] = [
            .get("thing", decoding: .response), .post("thing", decoding: .response),
            .put("thing", decoding: .response), .patch("thing", decoding: .response),
            .delete("thing", decoding: .response),
        ]
        for endpoint in endpoints {
            let response = try await backend.client.send(endpoint)
            #expect(response.status == 201)
            #expect(String(decoding: response.body, as: UTF8.self) == endpoint.method.rawValue)
        }
    }

    @Test("DELETE sends its body")
    func deleteWithBody() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders", method: .delete) { request in .envelope(data: request.form["id"] ?? "") }
        let deleted = try await backend.client.send(Endpoint<String>.delete("orders", body: .form(["id": "7"])))
        #expect(deleted == "7")
        #expect(backend.server.requests.first?.method == "DELETE")
        #expect(backend.server.requests.first?.headers["Content-Type"] == "application/x-www-form-urlencoded")
    }

    static let texts: [(contentType: String, body: [UInt8], text: String)] = [
        ("text/plain", Array("héllo".utf8), "héllo"),
        ("text/plain; charset=UTF-8", [0xEF, 0xBB, 0xBF] + Array("bom".utf8), "bom"),
        ("text/plain; charset=\"iso-8859-1\"", [0x68, 0xE9], "hé"),
        ("text/html;CHARSET=windows-1252", [0x80], "€"),
        ("text/plain; charset=utf-16le", [0x68, 0x00, 0xE9, 0x00], "hé"),
        ("text/plain; charset=utf-16le", [0xFF, 0xFE, 0x68, 0x00], "h"),
        ("text/plain; charset=utf-16be", [0xFE, 0xFF, 0x00, 0x68], "h"),
        ("text/plain; charset=utf-16", [0x00, 0x68, 0x00, 0xE9], "hé"),
        ("text/plain; charset=utf-16", [0xFF, 0xFE, 0x68, 0x00], "h"),
        ("text/plain; title=\"a;charset=iso-8859-1\"; charset=utf-8", [0xC3, 0xA9], "é"),
        ("text/plain; title=\"a\\\";charset=iso-8859-1\"; charset=utf-8", [0xC3, 0xA9], "é"),
        ("text/plain; charset=\"iso-8859\\-1\"", [0x68, 0xE9], "hé"),
    ]

    @Test("text is read in the answer's charset", arguments: texts)
    func text(contentType: String, body: [UInt8], text: String) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/page") { _ in
            LoopbackServer.Response(headers: ["Content-Type": contentType], body: Data(body))
        }
        #expect(try await backend.client.send(.get("page", decoding: .text)) == text)
    }

    static let badTexts: [(contentType: String, body: [UInt8])] = [
        ("text/plain", [0x68, 0xFF, 0xFE]),
        ("text/plain; charset=us-ascii", [0xC3, 0xA9]),
        ("text/plain; charset=klingon", Array("qapla'".utf8)),
        ("text/plain; charset=utf-16le", [0x68, 0x00, 0xE9]),
        ("text/plain; charset=\"\"", Array("x".utf8)),
        ("text/plain; charset=\"utf-8\"x", Array("x".utf8)),
    ]

    @Test(
        "bytes that are not text in the charset, or an unknown charset, fail with decodingFailed", arguments: badTexts)
    func badText(contentType: String, body: [UInt8]) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/page") { _ in
            LoopbackServer.Response(headers: ["Content-Type": contentType], body: Data(body))
        }
        let error = await networkError { _ = try await backend.client.send(.get("page", decoding: .text)) }
        #expect(error?.code == .decodingFailed, "\(String(describing: error))")
        #expect(error?.body == Data(body))
    }

    @Test("an upload written without a type checks its answer and ignores the payload")
    func untypedUpload() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/media", method: .post) { request in
            request.multipartParts?.first?.text == "fail"
                ? .envelope(code: 7, message: "no", data: 0) : .envelope(data: 1)
        }
        var form = MultipartForm(fields: ["title": "ok"])
        _ = try await backend.client.upload(.post("media", body: .multipart(form))).value
        form = MultipartForm(fields: ["title": "fail"])
        let failed = await networkError {
            _ = try await backend.client.upload(.post("media", body: .multipart(form))).value
        }
        #expect(failed?.code == .business)
        #expect(failed?.businessCode == 7)
        #expect(backend.server.requests.count == 2)
    }

    @Test("send and a transfer's value throw NetworkError by type, and the client's books need no await")
    func typedThrowsAndBooks() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/gone") { _ in .text("gone", status: 410) }
        do {
            _ = try await backend.client.send(Endpoint<Int>.get("gone"))
            Issue.record("a 410 succeeded")
        } catch {
            let typed: NetworkError = error
            #expect(typed.code == .httpStatus)
        }
        do {
            _ = try await backend.client.upload(Endpoint<Int>.post("gone")).value
            Issue.record("a 410 succeeded")
        } catch {
            let typed: NetworkError = error
            #expect(typed.status == 410)
        }

        // Never answered before cancelAll(), however loaded the machine.
        backend.server.route("/v1/slow") { _ in LoopbackServer.Response.envelope(data: 1).delayed(by: .seconds(60)) }
        let client = backend.client
        let slow = Task { await networkError { _ = try await client.send(Endpoint<Int>.get("slow")) } }
        #expect(
            await backend.server.waitForEvents(timeout: .seconds(30) * TestTiming.scale) {
                $0.contains(.received(method: .get, target: "/v1/slow"))
            })
        #expect(client.activeRequestCount == 1)
        client.cancelAll()
        #expect(await slow.value?.code == .cancelled)
        #expect(client.activeRequestCount == 0)
    }
}
