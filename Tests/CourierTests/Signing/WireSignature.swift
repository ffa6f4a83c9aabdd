import Courier
import CourierTesting
import Foundation
import Testing

/// What a backend computes from a request as it arrived: the canonical string rebuilt from the
/// raw bytes on the wire, without Courier's encoder, hashed and MACed by `openssl`.
enum WireSignature {
    /// The v1 canonical string of a received request: query and form pairs merged and sorted.
    static func canonicalV1(_ request: LoopbackServer.Request, timestamp: String, nonce: String) async throws
        -> String
    {
        let (query, form, bodyForHash) = split(request)
        let sorted = sortedPairs(query + form)
        let bodyHash = try await OpenSSL.digest(bodyForHash, arguments: ["-sha256"])
        return [request.method.rawValue, request.path, sorted, timestamp, nonce, bodyHash].joined(separator: "\n")
    }

    /// The v2 canonical string of a received request: the marker, method, `Host` header
    /// (lower-cased, without a default port), path, query and form kept apart, body hash,
    /// timestamp and nonce.
    static func canonicalV2(_ request: LoopbackServer.Request, timestamp: String, nonce: String) async throws
        -> String
    {
        let (query, form, bodyForHash) = split(request)
        var host = (request.headers["Host"] ?? "").lowercased()
        if host.hasSuffix(":80") { host.removeLast(3) }  // the test servers speak plain http
        let bodyHash = try await OpenSSL.digest(bodyForHash, arguments: ["-sha256"])
        return [
            "COURIER-V2", request.method.rawValue, host, request.path, sortedPairs(query), sortedPairs(form), bodyHash,
            timestamp,
            nonce,
        ]
        .joined(separator: "\n")
    }

    /// The canonical string of `version` for a received request.
    static func canonical(
        _ version: CanonicalRequest.Version, _ request: LoopbackServer.Request, timestamp: String, nonce: String
    ) async throws -> String {
        version == .v1
            ? try await canonicalV1(request, timestamp: timestamp, nonce: nonce)
            : try await canonicalV2(request, timestamp: timestamp, nonce: nonce)
    }

    /// The lower-case hex HMAC-SHA256 of `canonical` under `secret`, computed by `openssl`.
    static func hmacSHA256(_ canonical: String, secret: Data) async throws -> String {
        try await OpenSSL.digest(
            Data(canonical.utf8), arguments: ["-sha256", "-mac", "HMAC", "-macopt", "hexkey:\(secret.hexString)"])
    }

    /// The raw `name=value` pairs of the query and of a form body (or the text fields of a
    /// multipart form, encoded here), and the body bytes that are hashed (none for a form or a
    /// multipart form, whose fields are signed as pairs; a file body's bytes like any other's).
    private static func split(_ request: LoopbackServer.Request) -> (query: [String], form: [String], body: Data) {
        let query = request.rawQuery.split(separator: "&").map(String.init)
        if let parts = request.multipartParts {
            let fields = parts.filter { $0.filename == nil }
            return (query, fields.map { encoded($0.name ?? "") + "=" + encoded($0.text) }, Data())
        }
        guard request.headers["Content-Type"] == "application/x-www-form-urlencoded" else {
            return (query, [], request.body)
        }
        return (query, String(decoding: request.body, as: UTF8.self).split(separator: "&").map(String.init), Data())
    }

    /// Every UTF-8 byte but the unreserved ones (`A–Z a–z 0–9 - . _ ~`) as `%XX`, written here
    /// apart from Courier's encoder.
    private static func encoded(_ text: String) -> String {
        text.utf8.map { byte in
            let unreserved =
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || [0x2D, 0x2E, 0x5F, 0x7E].contains(byte)
            return unreserved ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
        }.joined()
    }

    /// The pairs without the signature, sorted by their bytes and joined with `&`.
    private static func sortedPairs(_ pairs: [String]) -> String {
        pairs.filter { !$0.hasPrefix("sign=") }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .joined(separator: "&")
    }
}

extension SigningInterceptor {
    /// ``SigningInterceptor/sign(_:)`` for an algorithm that cannot fail: a failure is recorded
    /// as an issue, and the request comes back unsigned.
    func signedForTest(_ request: HTTPRequest) -> HTTPRequest {
        do {
            return try sign(request)
        } catch {
            Issue.record(error)
            return request
        }
    }
}
