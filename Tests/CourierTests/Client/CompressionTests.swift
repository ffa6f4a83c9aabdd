import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Compressed answers, on both transports: asked for and decoded in memory, never asked for on
/// downloads (a resumed download counts bytes of the file, which must be the bytes sent).
@Suite struct CompressionTests {
    /// `{"code":0,"msg":"ok","data":{"id":7,"title":"compressed compressed …"}}` (268 bytes),
    /// gzip-compressed (`gzip.compress(body, mtime=0)`).
    private static let gzipEnvelope = Data(
        base64Encoded:
            "H4sIAAAAAAACA6tWSs5PSVWyMtBRyi1OV7JSys9W0lFKSSxJVLKqVspMUbIy11EqySzJAaoBKs0tKEotLk5NURh2TKXaWgDb8CHvDAEAAA=="
    )!

    @Test("a gzip answer is asked for and decoded")
    func gzipDecoded() async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/order") { request in
            guard request.headers["Accept-Encoding"]?.contains("gzip") == true else {
                return .envelope(data: Order(id: 0, title: "not asked"))
            }
            return LoopbackServer.Response(
                headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: Self.gzipEnvelope)
        }

        let order = try await backend.client.send(Endpoint<Order>.get("order"))

        #expect(order == Order(id: 7, title: String(repeating: "compressed ", count: 20)))
    }

    @Test("a download asks for the bytes as they are")
    func downloadUncompressed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try Backend()
        defer { backend.server.stop() }
        let content = patternedBytes(100_000)
        backend.server.route("/v1/file") { _ in
            LoopbackServer.Response(headers: ["Content-Type": "application/octet-stream"], body: content)
        }

        _ = try await backend.client.download(.download("file"), to: directory.file("file.bin")).value

        let asked = try #require(backend.server.requests.first).headers["Accept-Encoding"]
        #expect(asked == nil || asked == "identity", "asked for \(asked ?? "-")")
        #expect(try Data(contentsOf: directory.file("file.bin")) == content)
    }
}
