import Courier
import CourierTesting
import Foundation
import Testing

/// What an app developer and an app's user read in an error: the common mistake of an endpoint
/// without an envelope said plainly, the backend's own message for the user whatever the status,
/// and no Swift type names or doubled punctuation.
@Suite struct UserFacingErrorTests {
    @Test(
        "an answer without an envelope says so, and what to do, instead of a decoding path",
        arguments: [(#"[{"id":1,"title":"Tea"}]"#, "its top level is not an object"), (#"{"id":1}"#, #"no "code""#)])
    func missingEnvelope(body: String, says: String) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .json(body) }

        let error = await networkError { _ = try await backend.client.send(Endpoint<[Order]>.get("orders")) }

        #expect(error?.code == .decodingFailed)
        #expect(error?.message.contains("This answer has no envelope") == true, "\(String(describing: error))")
        #expect(error?.message.contains(says) == true)
        #expect(error?.message.contains("decoding: .json") == true)
        #expect(error?.localizedDescription == "The server's answer could not be read.", "no type names for the user")
    }

    @Test("an envelope's message on a 4xx is the error's text for the user; a 5xx body's message is not shown")
    func envelopeMessageOnAnErrorStatus() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/orders/7") { _ in .json(#"{"code":404,"msg":"Order not found"}"#, status: 404) }
        backend.server.route("/v1/orders/8") { _ in
            .json(#"{"code":500,"msg":"NullPointerException at OrderService.java:42"}"#, status: 500)
        }

        let missing = await networkError { _ = try await backend.client.send(Endpoint<Order>.get("orders/7")) }
        let broken = await networkError { _ = try await backend.client.send(Endpoint<Order>.get("orders/8")) }

        #expect(missing?.code == .httpStatus && missing?.status == 404)
        #expect(missing?.localizedDescription == "Order not found")
        #expect(broken?.code == .httpStatus && broken?.status == 500)
        #expect(broken?.businessMessage?.contains("NullPointerException") == true, "kept for the app's logs")
        #expect(broken?.localizedDescription.contains("NullPointerException") == false, "not shown to the user")
    }

    @Test("a description joins its parts without a full stop before each semicolon")
    func noDoubledPunctuation() {
        var error = NetworkError(.httpStatus, "The server answered 404 (Not Found).")
        error.request = "GET https://api.example.com/orders/7"
        error.status = 404
        #expect(
            error.description
                == "NetworkError.httpStatus: The server answered 404 (Not Found); request: GET https://api.example.com/orders/7; status: 404"
        )
    }
}
