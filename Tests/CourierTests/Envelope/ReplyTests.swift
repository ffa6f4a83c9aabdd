import Courier
import CourierTesting
import Foundation
import Testing

/// A payload together with the answer it came in, over real HTTP.
@Suite struct ReplyTests {
    static let body = #"{"code":0,"msg":"3 orders","data":[{"id":1,"title":"Tea"}],"total":3,"meta":{"next":"p2"}}"#

    @Test("the payload comes with its status, headers, timings, message, code and other fields")
    func payloadWithItsAnswer() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in
            .init(
                status: 201, headers: ["Content-Type": "application/json", "X-Request-Id": "r-42"],
                body: Data(Self.body.utf8))
        }
        let reply = try await backend.client.reply(to: Endpoint<[Order]>.get("orders"))
        #expect(reply.value == [Order(id: 1, title: "Tea")])
        #expect(reply.response.status == 201)
        #expect(reply.response.headers["x-request-id"] == "r-42")
        if !TestTransport.isURLSession { #expect(reply.response.timings != nil) }
        #expect(reply.message == "3 orders")
        #expect(reply.code == 0)
        #expect(try reply.field("total", as: Int.self) == 3)
        #expect(try reply.field("meta.next", as: String.self) == "p2")
        #expect(try reply.field("meta.none", as: String.self) == nil)
        #expect(try reply.field("absent.deeper", as: String.self) == nil)
        let wrongType = await networkError { _ = try reply.field("total", as: String.self) }
        #expect(wrongType?.code == .decodingFailed)
        #expect(wrongType?.codingPath == "total")
    }

    @Test("a nested format's message and code; a body that is not JSON has neither, and its fields throw")
    func otherBodies() async throws {
        let format = EnvelopeFormat(codeKey: "meta.code", messageKey: "meta.msg", successCodes: ["OK"])
        let backend = try Backend { $0.envelope = format }
        defer { backend.server.stop() }
        backend.server.route("/v1/n") { _ in .json(#"{"meta":{"code":"OK","msg":"fine"},"data":7}"#) }
        backend.server.route("/v1/t") { _ in .text("plain words") }
        let nested = try await backend.client.reply(to: Endpoint<Int>.get("n"))
        #expect(nested.value == 7 && nested.code == "OK" && nested.message == "fine")
        let text = try await backend.client.reply(to: Endpoint<String>.get("t", decoding: .text))
        #expect(text.value == "plain words")
        #expect(text.message == nil && text.code == nil)
        let error = await networkError { _ = try text.field("x", as: Int.self) }
        #expect(error?.code == .decodingFailed)
    }

    @Test("a failing answer throws as send does, with nothing returned")
    func failureThrows() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/no") { _ in .envelope(code: 7, message: "sold out", data: 0) }
        let error = await networkError { _ = try await backend.client.reply(to: Endpoint<Int>.get("no")) }
        #expect(error?.code == .business)
        #expect(error?.businessCode == 7)
    }
}
