import Courier
import CourierTesting
import Foundation
import Testing

/// Signatures checked by the test server with an independent computation: the canonical string
/// rebuilt from the raw bytes on the wire, hashed and MACed by `openssl`.
@Suite struct SigningTests {
    private static let secret = Data("s3cret-ключ".utf8)
    private static let fixedClock: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_700_000_000) }
    private static let fixedNonce: @Sendable () -> String = { "0123456789abcdef" }

    /// The signature a backend expects for what arrived, with the one that was sent.
    private static func verify(
        _ request: LoopbackServer.Request, signatureFrom sent: (LoopbackServer.Request) -> String?,
        timestamp: String, nonce: String
    ) async throws -> (expected: String, sent: String?) {
        let canonical = try await WireSignature.canonicalV1(request, timestamp: timestamp, nonce: nonce)
        return (try await WireSignature.hmacSHA256(canonical, secret: secret), sent(request))
    }

    private static let awkward = "a+b &=#%/?😀 中文 ~-._"

    @Test("a signature as parameters verifies on the server, for query, form and JSON requests")
    func parameters() async throws {
        let backend = try Backend {
            $0.interceptors = [
                .commonParameters(["version": "3.2.0", "deviceId": "设备 1"]),
                .signing(.hmacSHA256(secret: Self.secret)),
            ]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders") { _ in .empty204 }
        let endpoints: [Endpoint<EmptyResponse>] = [
            .get("orders", query: ["q": Self.awkward, "page": "1", "q": "2"], decoding: .empty),
            .post("orders", body: .form(["title": Self.awkward]), decoding: .empty),
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
                request, signatureFrom: { _ in value("sign") }, timestamp: value("timestamp") ?? "",
                nonce: value("nonce") ?? "")
            #expect(result.sent == result.expected, "\(request.method) \(request.target)")
            #expect(value("nonce")?.count == 32)
        }
    }

    @Test("a signature as headers verifies on the server")
    func headers() async throws {
        let backend = try Backend {
            $0.interceptors = [.signing(.hmacSHA256(secret: Self.secret), placement: .headers())]
        }
        defer { backend.server.stop() }
        backend.server.route("/v1/orders/%E4%B8%AD") { _ in .empty204 }
        _ = try await backend.client.send(
            Endpoint<EmptyResponse>.patch(
                "orders/中", query: ["q": Self.awkward], body: .json(["n": 1]), decoding: .empty))
        let request = try #require(backend.server.requests.first)
        let result = try await Self.verify(
            request, signatureFrom: { $0.headers["X-KC-HMAC"] }, timestamp: request.headers["X-KC-TIME"] ?? "",
            nonce: request.headers["X-KC-NONCE"] ?? "")
        #expect(result.sent == result.expected)
    }

    @Test("the documented worked example: GET with parameters")
    func workedExampleGet() throws {
        let signer = SigningInterceptor(
            .hmacSHA256(secret: Data("secret".utf8)), now: Self.fixedClock, nonce: Self.fixedNonce)
        let request = HTTPRequest(
            method: .get, url: URL(string: "https://api.example.com/v1/orders")!,
            query: ["page": "1", "q": "tea & cake"])
        let signed = signer.sign(request)
        let canonical = CanonicalRequest(signed, excluding: "sign", timestamp: "1700000000", nonce: "0123456789abcdef")
        #expect(
            canonical.string == """
                GET
                /v1/orders
                nonce=0123456789abcdef&page=1&q=tea%20%26%20cake&timestamp=1700000000
                1700000000
                0123456789abcdef
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """)
        #expect(signed.query["sign"] == "04ac49d721f70216c96932e6ca5f8620009f57357e2f3e2e6c2fe04469c400f3")
        #expect(
            try signed.wireURL().absoluteString.hasSuffix(
                "&sign=04ac49d721f70216c96932e6ca5f8620009f57357e2f3e2e6c2fe04469c400f3"))
    }

    @Test("the documented worked example: POST JSON signed in headers")
    func workedExampleHeaders() {
        let signer = SigningInterceptor(
            .hmacSHA256(secret: Data("secret".utf8)), placement: .headers(), now: Self.fixedClock,
            nonce: Self.fixedNonce)
        let request = HTTPRequest(
            method: .post, url: URL(string: "https://api.example.com/v1/orders")!,
            body: .json(Data(#"{"title":"Tea"}"#.utf8)))
        let signed = signer.sign(request)
        #expect(signed.headers["X-KC-TIME"] == "1700000000")
        #expect(signed.headers["X-KC-NONCE"] == "0123456789abcdef")
        #expect(signed.headers["X-KC-HMAC"] == "a6c55dd84815dba0bd9dd56931781d48d53921cd8e85e41a0148ace1f541d2ac")
        #expect(signed.body == .json(Data(#"{"title":"Tea"}"#.utf8)), "the body is not changed after hashing")
    }

    @Test("the legacy MD5 scheme: sorted parameters + key, checked against openssl")
    func legacyMD5() async throws {
        let signer = SigningInterceptor(.legacyMD5(key: "secret"), now: Self.fixedClock, nonce: Self.fixedNonce)
        let request = HTTPRequest(
            method: .get, url: URL(string: "https://api.example.com/v1/orders")!,
            query: ["page": "1", "q": "tea & cake"])
        let signed = signer.sign(request)
        let text = "nonce=0123456789abcdef&page=1&q=tea%20%26%20cake&timestamp=1700000000&key=secret"
        #expect(signed.query["sign"] == "4ddc5575369ecbe97bf6e35bd1d15c56")
        #expect(try await OpenSSL.digest(Data(text.utf8), arguments: ["-md5"]) == "4ddc5575369ecbe97bf6e35bd1d15c56")
    }
}
