import Courier
import CourierTesting
import Foundation
import Testing

/// Reserved characters round-trip through query and form; the server decodes with Foundation's
/// `URLComponents`, an implementation independent of Courier's.
@Suite struct PercentEncodingTests {
    static let values = [
        "plain", "a b", "a+b", "a&b=c", "#hash", "100%", "%41 stays literal", "?/:@!$'()*,;",
        "[]{}|\\^`\"<>", "~-._", "中文 參數", "emoji 😀👍🏽", "line\nbreak\ttab", "", "=&=&",
    ]

    /// Decodes `a=1&b=2` the way Foundation does, without Courier.
    private static func foundationDecode(_ encoded: String) -> [String: String] {
        var components = URLComponents()
        components.percentEncodedQuery = encoded
        var result: [String: String] = [:]
        for item in components.queryItems ?? [] { result[item.name] = item.value ?? "" }
        return result
    }

    @Test("a value round-trips through the query", arguments: values)
    func query(_ value: String) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/echo") { _ in .empty204 }
        let endpoint = Endpoint<EmptyResponse>(
            method: .get, path: "echo", query: ["v": value, "k \(value)": "key"], decoding: .empty)
        _ = try await backend.client.send(endpoint)
        let received = try #require(backend.server.requests.first)
        let decoded = Self.foundationDecode(received.rawQuery)
        #expect(decoded["v"] == value)
        #expect(decoded["k \(value)"] == "key")
        #expect(!received.rawQuery.contains("+"), "a plus or space must be escaped, never sent as +")
    }

    @Test("a value round-trips through a form body", arguments: values)
    func form(_ value: String) async throws {
        let backend = try Backend()
        defer { backend.server.stop() }
        backend.server.route("/v1/echo") { _ in .empty204 }
        _ = try await backend.client.send(
            Endpoint<EmptyResponse>(method: .post, path: "echo", body: .form(["v": value]), decoding: .empty))
        let received = try #require(backend.server.requests.first)
        #expect(received.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(Self.foundationDecode(String(decoding: received.body, as: UTF8.self))["v"] == value)
    }

    @Test("query and form use the same encoder")
    func sameEncoder() {
        let parameters: Parameters = ["a b": "c+d&e=f#g%😀"]
        #expect(parameters.encoded == "a%20b=c%2Bd%26e%3Df%23g%25%F0%9F%98%80")
        #expect(PercentEncoding.decode(parameters.encoded) == "a b=c+d&e=f#g%😀")
    }

    @Test("every byte is escaped as %XX but the unreserved A–Z a–z 0–9 - . _ ~")
    func everyByte() {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        for byte in UInt8.min..<0x80 {
            let text = String(UnicodeScalar(byte))
            let expected = unreserved.contains(byte) ? text : String(format: "%%%02X", byte)
            #expect(PercentEncoding.encode(text) == expected, "byte \(byte)")
            #expect(PercentEncoding.encode(text[...]) == expected, "byte \(byte) in a substring")
            let padded = "ab" + text + "cd"
            let inner = padded.dropFirst(2).dropLast(2)
            #expect(PercentEncoding.encode(inner) == expected, "byte \(byte) in a substring of a longer string")
        }
        // Bytes from 0x80 up only occur in the UTF-8 of text beyond ASCII.
        #expect(PercentEncoding.encode("\u{80}\u{FF}\u{10FFFF}") == "%C2%80%C3%BF%F4%8F%BF%BF")
        #expect(PercentEncoding.encode("x中y") == "x%E4%B8%ADy")
    }

    @Test("decoding keeps + literal and malformed escapes as written")
    func lenientDecoding() {
        #expect(PercentEncoding.decode("a+b%20c") == "a+b c")
        #expect(PercentEncoding.decode("100%") == "100%")
        #expect(PercentEncoding.decode("%zz%4") == "%zz%4")
        #expect(
            Parameters.decoding("a=1&b&c=%3D&a=2").items.map { "\($0.name)=\($0.value)" } == [
                "a=1", "b=", "c==", "a=2",
            ])
    }
}
