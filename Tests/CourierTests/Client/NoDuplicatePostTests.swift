import Courier
import CourierTesting
import Foundation
import Testing

/// A request that is not idempotent is sent once: when its connection dies before the answer,
/// the transport reports it at once and never sends it again on its own (libcurl, and Linux
/// `URLSession` with it, re-sends a request on a reused connection that closed with no answer).
@Suite struct NoDuplicatePostTests {
    static let bodies: [(String, RequestBody)] = [
        ("no body", .none),
        ("a form", .form(["amount": "10"])),
        ("JSON", .json(["amount": 10])),
        ("2 MB", .data(Data(repeating: 0x61, count: 2 << 20), contentType: "application/octet-stream")),
    ]

    @Test(
        "a POST on a reused connection that closes before the answer is sent once and fails at once",
        arguments: 0..<4)
    func postOnDeadReusedConnection(row: Int) async throws {
        let (name, body) = Self.bodies[row]
        // The first connection answers one request and then closes on the next one unanswered,
        // as a server whose keep-alive timer fired does; every other connection closes unanswered.
        // The deadline is far past the "at once" below (both stretched alike for instrumented
        // code), so a failure at the deadline cannot pass for one at once.
        let backend = try FaultBackend(timeout: .seconds(20) * TestTiming.scale) { connection in
            let warm: [FaultServer.Step] = [
                .readRequest,
                .respond(headers: ["Content-Type": "application/json"], body: Data(#"{"code":0,"data":"ok"}"#.utf8)),
            ]
            return (connection == 0 ? warm : []) + [.readHead, .close]
        }
        defer { backend.server.stop() }
        _ = try await backend.client.send(Endpoint<String>.get("warm"))

        let started = ContinuousClock.now
        let error = await networkError {
            _ = try await backend.client.send(Endpoint<EmptyResponse>.post("pay", body: body))
        }
        let elapsed = ContinuousClock.now - started

        #expect(error?.code == .transport, "\(name): \(String(describing: error))")
        #expect(
            elapsed < .seconds(5) * TestTiming.scale, "\(name): failed at once, not at the deadline (\(elapsed))")
        let posts = backend.server.requestHeads.filter { $0.method == "POST" }
        #expect(posts.count == 1, "\(name): the server saw \(posts.count) POST heads")
    }
}
