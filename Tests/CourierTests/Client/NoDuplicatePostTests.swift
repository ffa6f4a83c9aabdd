import Courier
import CourierTesting
import Foundation
import Testing

/// A POST whose connection dies before the answer must not be sent again by the transport on
/// its own (libcurl retries requests on a reused connection that closed with no answer).
@Suite struct NoDuplicatePostTests {
    @Test("a POST on a reused connection that closes before the answer is sent once")
    func postOnDeadReusedConnection() async throws {
        let backend = try Backend(timeout: .seconds(2))
        defer { backend.server.stop() }
        backend.server.route("/v1/warm") { _ in .envelope(data: "ok") }
        backend.server.route("/v1/pay", method: .post) { _ in
            LoopbackServer.Response.json("{}").with(.closeBeforeResponding)
        }
        _ = try await backend.client.send(Endpoint<String>.get("warm"))

        let error = await networkError {
            _ = try await backend.client.send(Endpoint<EmptyResponse>.post("pay", body: .form(["amount": "10"])))
        }

        // CurlTransport reports the lost connection; Linux URLSession waits for the deadline.
        #expect(error?.code == .transport || error?.code == .timedOut, "\(String(describing: error))")
        #expect(backend.server.requests.filter { $0.method == "POST" }.count == 1)
    }
}
