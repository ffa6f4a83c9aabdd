import Courier
import CourierTesting
import Foundation
import Testing

/// Status and content-type validation over loopback, and what errors keep.
@Suite struct HTTPErrorTests {
    @Test("an error status keeps status, headers and body", arguments: [400, 401, 403, 404, 500, 502])
    func statusWithoutBody(_ status: Int) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/fail") { _ in .init(status: status, headers: ["X-Request-Id": "r-1"]) }
        let error = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("fail")) }
        #expect(error?.code == .httpStatus)
        #expect(error?.status == status)
        #expect(error?.headers?["x-request-id"] == "r-1")
        #expect(error?.body?.isEmpty == true)
        #expect(error?.businessCode == nil)
    }

    @Test(
        "an error body shaped like an older backend's 202/403 answers is decoded",
        arguments: [400, 401, 403, 404, 500, 502])
    func classicErrorBody(_ status: Int) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/fail") { _ in
            .json(
                #"{"errorCode":4031,"errorDescription":"Forbidden here","content":"Please log in again"}"#,
                status: status)
        }
        let error = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("fail")) }
        #expect(error?.code == .httpStatus)
        #expect(error?.status == status)
        #expect(error?.businessCode == 4031)
        #expect(error?.businessMessage == "Forbidden here")
        #expect(error?.userMessage == "Please log in again")
    }

    @Test("a 202 is accepted by default and can be made an error that decodes such a body")
    func status202() async throws {
        let backend = try Backend { $0.acceptableStatusCodes = [200] }
        defer { backend.server.stop() }
        backend.server.route("/v1/pending") { _ in
            .json(#"{"errorCode":"12","errorDescription":"Queued","content":"Try later"}"#, status: 202)
        }
        let error = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("pending")) }
        #expect(error?.status == 202)
        #expect(error?.businessCode == 12)
        #expect(error?.userMessage == "Try later")
    }

    @Test("an envelope-shaped error body yields its code and message")
    func envelopeErrorBody() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/fail") { _ in .json(#"{"code":99,"msg":"not logged in"}"#, status: 401) }
        let error = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("fail")) }
        #expect(error?.status == 401)
        #expect(error?.businessCode == 99)
        #expect(error?.businessMessage == "not logged in")
    }

    @Test("a body that is not JSON leaves the error's business fields empty")
    func htmlErrorBody() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/fail") { _ in .text("<h1>Bad Gateway</h1>", status: 502, contentType: "text/html") }
        let error = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("fail")) }
        #expect(error?.status == 502)
        #expect(error?.businessCode == nil)
        #expect(error?.body == Data("<h1>Bad Gateway</h1>".utf8))
    }

    @Test("a JSON answer with another content type is refused", arguments: ["image/png", "application/xml", nil])
    func wrongContentType(_ contentType: String?) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/me") { _ in
            var response = LoopbackServer.Response(body: Data(#"{"code":0,"data":{}}"#.utf8))
            if let contentType { response.headers["Content-Type"] = contentType }
            return response
        }
        let error = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("me")) }
        #expect(error?.code == .unacceptableContentType)
    }

    @Test(
        "the classic content types are accepted, with parameters",
        arguments: [
            "application/json", "text/json", "text/javascript", "text/html", "text/plain",
            "Application/JSON; charset=utf-8",
        ])
    func acceptedContentTypes(_ contentType: String) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/me") { _ in
            .text(#"{"code":0,"data":{"id":1,"title":"t"}}"#, contentType: contentType)
        }
        let order = try await backend.client.send(Endpoint<Order>.get("me"))
        #expect(order.id == 1)
    }

    @Test("acceptable content types are configurable")
    func configuredContentTypes() async throws {
        let backend = try Backend { $0.acceptableContentTypes = ["application/vnd.api+json"] }
        defer { backend.server.stop() }
        backend.server.route("/v1/a") { _ in .text(#"{"code":0}"#, contentType: "application/vnd.api+json") }
        backend.server.route("/v1/b") { _ in .json(#"{"code":0}"#) }
        _ = try await backend.client.send(Endpoint<EmptyResponse>.get("a"))
        let error = await networkError { _ = try await backend.client.send(Endpoint<EmptyResponse>.get("b")) }
        #expect(error?.code == .unacceptableContentType)
    }

    @Test("HEAD and 204 need no body and no content type")
    func noBody() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/gone") { _ in .empty204 }
        backend.server.route("/v1/file") { _ in .init(status: 200, headers: ["X-Size": "42"], body: Data(count: 42)) }
        let empty = try await backend.client.send(Endpoint<EmptyResponse>.delete("gone"))
        #expect(empty == EmptyResponse())
        let head = try await backend.client.send(.head("file"))
        #expect(head.status == 200 && head.body.isEmpty && head.headers["X-Size"] == "42")
        #expect(head.headers["Content-Length"] == "42")
    }

    @Test("a description never shows tokens, signatures, passwords or headers")
    func descriptionRedactsSecrets() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/login") { _ in
            .json(
                #"{"code":1,"msg":"bad password","data":{"token":"tok-SECRET-1","password":"pw-SECRET-2"}}"#,
                status: 500)
        }
        let endpoint = Endpoint<EmptyResponse>.post(
            "login", query: ["token": "tok-SECRET-3", "sign": "sig-SECRET-4", "page": "1"],
            body: .form(["password": "pw-SECRET-5"]), headers: ["Authorization": "Bearer SECRET-6"])
        let error = try #require(await networkError { _ = try await backend.client.send(endpoint) })
        let text = error.description
        #expect(!text.contains("SECRET"), "\(text)")
        #expect(text.contains("page=1"))
        #expect(text.contains("<redacted>"))
        #expect(error.status == 500)
    }
}
