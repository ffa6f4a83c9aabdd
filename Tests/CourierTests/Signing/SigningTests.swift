import Courier
import CourierTesting
import Foundation
import Testing

/// Signatures checked by the test server with an independent computation: the canonical string
/// rebuilt from the raw bytes on the wire, hashed and MACed by `openssl`.
@Suite struct SigningTests {
    private static let secret = Data("s3cret-ключ".utf8)
    private static let awkward = "a+b &=#%/?😀 中文 ~-._"
    private static let versions: [CanonicalRequest.Version] = [.v1, .v2]

    /// The signature a backend expects for what arrived, with the one that was sent.
    private static func verify(
        _ version: CanonicalRequest.Version, _ request: LoopbackServer.Request,
        signatureFrom sent: (LoopbackServer.Request) -> String?, timestamp: String, nonce: String
    ) async throws -> (expected: String, sent: String?) {
        let canonical = try await WireSignature.canonical(version, request, timestamp: timestamp, nonce: nonce)
        return (try await WireSignature.hmacSHA256(canonical, secret: secret), sent(request))
    }

    @Test(
        "a signature as parameters verifies on the server, for query, form and JSON requests",
        arguments: versions)
    func parameters(version: CanonicalRequest.Version) async throws {
        let backend = try Backend {
            $0.interceptors = [
                .commonParameters(["version": "3.2.0", "deviceId": "设备 1"]),
                .signing(.hmacSHA256(secret: Self.secret, canonicalForm: version)),
            ]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .empty204 }
        let endpoints: [Endpoint<EmptyResponse>] = [
            .get("orders", query: ["q": Self.awkward, "page": "1", "q": "2"], decoding: .empty),
            .post("orders", query: ["x": "1"], body: .form(["title": Self.awkward]), decoding: .empty),
            .post("orders", query: ["x": "1"], body: .json(["title": Self.awkward]), decoding: .empty),
        ]
        for endpoint in endpoints { _ = try await backend.client.send(endpoint) }
        #expect(backend.server.requests.count == 3)
        for request in backend.server.requests {
            let all =
                request.query.items
                + (request.headers["Content-Type"]?.hasPrefix("application/x-www") == true ? request.form.items : [])
            let value = { (name: String) in all.first { $0.name == name }?.value }
            let result = try await Self.verify(
                version, request, signatureFrom: { _ in value("sign") }, timestamp: value("timestamp") ?? "",
                nonce: value("nonce") ?? "")
            #expect(result.sent == result.expected, "\(request.method) \(request.target)")
            #expect(value("nonce")?.count == 32)
        }
    }

    @Test("a signature as headers verifies on the server", arguments: versions)
    func headers(version: CanonicalRequest.Version) async throws {
        let backend = try Backend {
            $0.interceptors = [
                .signing(.hmacSHA256(secret: Self.secret, canonicalForm: version), placement: .headers())
            ]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders/%E4%B8%AD") { _ in .empty204 }
        _ = try await backend.client.send(
            Endpoint<EmptyResponse>.patch(
                "orders/中", query: ["q": Self.awkward], body: .json(["n": 1]), decoding: .empty))
        let request = try #require(backend.server.requests.first)
        let result = try await Self.verify(
            version, request, signatureFrom: { $0.headers["X-KC-HMAC"] },
            timestamp: request.headers["X-KC-TIME"] ?? "", nonce: request.headers["X-KC-NONCE"] ?? "")
        #expect(result.sent == result.expected)
    }

    @Test("a v2 signature over a file body, or in a multipart form's text fields, verifies on the server")
    func fileAndMultipart() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let file = folder.file("backup.bin")
        try patternedBytes(300_000).write(to: file)
        let backend = try Backend { $0.interceptors = [.signing(.hmacSHA256(secret: Self.secret))] }
        defer { backend.server.stop() }
        backend.server.route("/v1/backup", method: .put) { _ in .empty204 }
        backend.server.route("/v1/media", method: .post) { _ in .empty204 }
        var form = MultipartForm(fields: ["title": Self.awkward])
        form.append(name: "photo", data: Data("jpeg".utf8), filename: "beach.jpg")

        _ = try await backend.client.send(
            Endpoint<EmptyResponse>.put(
                "backup", body: .file(file, contentType: "application/octet-stream"), decoding: .empty))
        _ = try await backend.client.send(
            Endpoint<EmptyResponse>.post("media", body: .multipart(form), decoding: .empty))

        let (put, post) = (backend.server.requests[0], backend.server.requests[1])
        #expect(put.body.count == 300_000)
        let field = { (name: String) in post.multipartParts?.first { $0.name == name && $0.filename == nil }?.text }
        let signedPut = try await Self.verify(
            .v2, put, signatureFrom: { $0.query["sign"] }, timestamp: put.query["timestamp"] ?? "",
            nonce: put.query["nonce"] ?? "")
        let signedPost = try await Self.verify(
            .v2, post, signatureFrom: { _ in field("sign") }, timestamp: field("timestamp") ?? "",
            nonce: field("nonce") ?? "")
        #expect(signedPut.sent == signedPut.expected, "the file's bytes are hashed, as the server receives them")
        #expect(signedPost.sent == signedPost.expected, "signature, timestamp and nonce are text fields")
    }

    @Test("a Host header naming the URL's host verifies; one naming another host is refused before sending")
    func hostHeader() async throws {
        let backend = try Backend { $0.interceptors = [.signing(.hmacSHA256(secret: Self.secret))] }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .empty204 }
        let authority = try #require(backend.server.baseURL.host).appending(":\(backend.server.baseURL.port ?? 0)")

        _ = try await backend.client.send(
            Endpoint<EmptyResponse>.get("orders", headers: ["Host": authority.uppercased()], decoding: .empty))
        let request = try #require(backend.server.requests.first)
        let result = try await Self.verify(
            .v2, request, signatureFrom: { $0.query["sign"] }, timestamp: request.query["timestamp"] ?? "",
            nonce: request.query["nonce"] ?? "")
        #expect(result.sent == result.expected)

        let error = await #expect(throws: NetworkError.self) {
            try await backend.client.send(
                Endpoint<EmptyResponse>.get("orders", headers: ["Host": "api.example.com"], decoding: .empty))
        }
        #expect(error?.code == .invalidRequest)
        #expect(backend.server.requests.count == 1, "the request signed for one host is not sent to another")
    }

    @Test("the default canonical form is v2, and a server checking v1 rejects it")
    func defaultIsV2() async throws {
        let backend = try Backend { $0.interceptors = [.signing(.hmacSHA256(secret: Self.secret))] }
        defer { backend.server.stop() }
        _ = try? await backend.client.send(Endpoint<EmptyResponse>.get("orders", query: ["a": "1"], decoding: .empty))
        let request = try #require(backend.server.requests.first)
        let (timestamp, nonce) = (request.query["timestamp"] ?? "", request.query["nonce"] ?? "")
        let v2 = try await Self.verify(
            .v2, request, signatureFrom: { $0.query["sign"] }, timestamp: timestamp, nonce: nonce)
        let v1 = try await Self.verify(
            .v1, request, signatureFrom: { $0.query["sign"] }, timestamp: timestamp, nonce: nonce)
        #expect(v2.sent == v2.expected)
        #expect(v1.sent != v1.expected)
    }
}
