import Foundation
import Testing

@testable import Courier

/// Where the signing layer puts its timestamp, nonce and signature parameters, for every kind of
/// body, and that the signature it writes there is the one the canonical request gives.
@Suite struct SigningPlacementTests {
    private static let secret = Data("placement-secret".utf8)
    private static let url = URL(string: "https://api.example.com/v1/orders")!

    /// The caller's own parameters, with a stale signature, timestamp and nonce among them.
    private static let own: Parameters = ["a": "1", "sign": "stale", "b": "2 & 3", "timestamp": "1", "nonce": "n"]

    /// A request of each kind, whether its parameters go in the query, and the names they end
    /// up with there.
    static let cases: [(String, HTTPMethod, HTTPBody, Bool, [String])] = [
        ("GET", .get, .none, true, ["a", "b", "timestamp", "nonce", "sign"]),
        ("HEAD", .head, .none, true, ["a", "b", "timestamp", "nonce", "sign"]),
        ("DELETE with a form", .delete, .form(["f": "1"]), true, ["a", "b", "timestamp", "nonce", "sign"]),
        ("POST without a body", .post, .none, false, ["timestamp", "nonce", "sign"]),
        ("PUT without a body", .put, .none, false, ["timestamp", "nonce", "sign"]),
        ("POST with a form", .post, .form(own), false, ["a", "b", "timestamp", "nonce", "sign"]),
        ("PATCH with a form", .patch, .form(own), false, ["a", "b", "timestamp", "nonce", "sign"]),
        (
            "POST with a multipart form", .post, .multipart(MultipartForm(fields: own)), false,
            ["a", "b", "timestamp", "nonce", "sign"]
        ),
        ("POST with JSON", .post, .json(Data(#"{"a":1}"#.utf8)), true, ["a", "b", "timestamp", "nonce", "sign"]),
        (
            "PUT with raw bytes", .put, .data(Data([1, 2]), contentType: "application/octet-stream"), true,
            ["a", "b", "timestamp", "nonce", "sign"]
        ),
        (
            "POST with a file", .post, .file(URL(fileURLWithPath: #filePath), contentType: "text/plain"), true,
            ["a", "b", "timestamp", "nonce", "sign"]
        ),
    ]

    @Test(
        "timestamp, nonce and signature go where the parameters go, once each, replacing the caller's",
        arguments: cases)
    func placement(name: String, method: HTTPMethod, body: HTTPBody, inQuery: Bool, names: [String]) throws {
        let signer = SigningInterceptor(
            .hmacSHA256(secret: Self.secret), now: { Date(timeIntervalSince1970: 1_700_000_000) },
            nonce: { "0123456789abcdef" })
        let query: Parameters = inQuery ? Self.own : ["q": "kept"]
        let signed = try signer.sign(HTTPRequest(method: method, url: Self.url, query: query, body: body))

        let list: Parameters
        switch signed.body {
        case .form(let form) where !inQuery: list = form
        case .multipart(let form) where !inQuery: list = form.fields
        default: list = signed.query
        }
        #expect(list.items.map(\.name) == names, "\(name)")
        if !inQuery { #expect(signed.query == ["q": "kept"], "\(name)") }
        #expect(list["timestamp"] == "1700000000")
        #expect(list["nonce"] == "0123456789abcdef")

        // The signature is the HMAC, computed in pure Swift, of the canonical form of what goes out.
        let canonical = CanonicalRequest(
            signed, version: .v2, excluding: "sign", timestamp: "1700000000", nonce: "0123456789abcdef")
        let expected = HMAC<SHA256>.authenticationCode(for: Data(canonical.string.utf8), key: Self.secret).hexString
        #expect(list["sign"] == expected, "\(name)")
    }

    @Test(
        "two of the signature, timestamp and nonce named alike fail the request before anything is sent",
        arguments: [
            SigningInterceptor.Placement.parameters(signature: "t", timestamp: "t", nonce: "n"),
            .parameters(signature: "n", timestamp: "t", nonce: "n"),
            .parameters(signature: "s", timestamp: "t", nonce: "t"),
            .headers(signature: "X-A", timestamp: "x-a", nonce: "X-N"),
            .headers(signature: "X-S", timestamp: "X-T", nonce: "x-t"),
        ])
    func collidingNames(placement: SigningInterceptor.Placement) {
        let signer = SigningInterceptor(.hmacSHA256(secret: Self.secret), placement: placement)
        let request = HTTPRequest(method: .get, url: Self.url, query: ["a": "1"])
        let error = #expect(throws: NetworkError.self) { try signer.sign(request) }
        #expect(error?.code == .invalidRequest)
    }

    @Test("a Host header naming another host is refused in version 2, which signs the host, and kept in version 1")
    func hostHeaderByVersion() throws {
        var request = HTTPRequest(method: .get, url: Self.url, query: ["a": "1"])
        request.headers["Host"] = "cdn.example.com"
        let v2 = SigningInterceptor(.hmacSHA256(secret: Self.secret))
        let v1 = SigningInterceptor(.hmacSHA256(secret: Self.secret, canonicalForm: .v1))
        let legacy = SigningInterceptor(.legacyMD5(key: "k"))

        let error = #expect(throws: NetworkError.self) { try v2.sign(request) }
        #expect(error?.code == .invalidRequest)
        #expect(try v1.sign(request).query["sign"] != nil)
        #expect(try legacy.sign(request).query["sign"] != nil)
    }
}
