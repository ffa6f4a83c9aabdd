import Foundation
import Testing

@testable import Courier

/// The canonical form's sorted lists against a plain reference: each pair percent-encoded on its
/// own, the lot sorted by bytes with the standard library, joined with `&`.
@Suite struct CanonicalSortTests {
    /// RFC 3986 percent-encoding written out plainly: unreserved bytes kept, the rest `%XX`.
    static func referenceEncoded(_ text: String) -> String {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        return text.utf8.map { unreserved.contains($0) ? String(UnicodeScalar($0)) : String(format: "%%%02X", $0) }
            .joined()
    }

    /// The reference list: written pairs as written, the others encoded; `excluding` left out.
    static func reference(_ lists: [Parameters], excluding: String?) -> String {
        let pairs = lists.flatMap(\.items).filter { $0.name != excluding }.map { item in
            item.written ?? referenceEncoded(item.name) + "=" + referenceEncoded(item.value)
        }
        return pairs.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.joined(separator: "&")
    }

    /// Names and values that sort in awkward ways: prefixes of one another, bytes above 0x7F,
    /// escapes that sort apart from their letters, empty text, the excluded name.
    static let words = [
        "", "a", "A", "ab", "a b", "a=b", "sign", "signs", "~", "-", "中", "é", "e\u{301}", "%", "+", "z",
    ]

    /// A list of `count` pairs drawn from ``words`` by `seed`, some parsed from a URL so that
    /// they keep their written text.
    static func parameters(_ count: Int, seed: inout UInt64) -> Parameters {
        var result = Parameters()
        for _ in 0..<count {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let draw = Int(truncatingIfNeeded: seed >> 33)
            switch draw % 7 {
            case 0: result.items += Parameters.decoding("flag&x=%FF&x=%ff").items  // no `=`, not UTF-8
            default:
                let name = words[(draw / 7) % words.count]
                result.append(name: name, value: words[(draw / 101) % words.count])
            }
        }
        return result
    }

    @Test("query, form and merged lists match the reference for 500 drawn requests")
    func matchesReference() throws {
        var seed: UInt64 = 42
        for round in 0..<500 {
            let query = Self.parameters(round % 9, seed: &seed)
            let form = Self.parameters((round / 9) % 6, seed: &seed)
            let excluding: String? = round % 3 == 0 ? nil : "sign"
            let url = try #require(URL(string: "https://h/p"))
            let request = HTTPRequest(method: .post, url: url, query: query, body: .form(form))
            let canonical = CanonicalRequest(request, version: .v2, excluding: excluding, timestamp: "1", nonce: "n")
            #expect(canonical.sortedQuery == Self.reference([query], excluding: excluding), "round \(round)")
            #expect(canonical.sortedForm == Self.reference([form], excluding: excluding), "round \(round)")
            #expect(
                canonical.sortedParameters == Self.reference([query, form], excluding: excluding), "round \(round)")
            // The lines are joined as written, and the bytes HMAC signs are the string's.
            let lines = [
                "COURIER-V2", "POST", "h", "/p", canonical.sortedQuery, canonical.sortedForm, canonical.bodyHash, "1",
                "n",
            ]
            #expect(canonical.string == lines.joined(separator: "\n"), "round \(round)")
            #expect(canonical.withUTF8 { Data($0) } == Data(canonical.string.utf8), "round \(round)")
            let v1 = CanonicalRequest(request, version: .v1, excluding: excluding, timestamp: "1", nonce: "n")
            #expect(
                v1.string == ["POST", "/p", v1.sortedParameters, "1", "n", v1.bodyHash].joined(separator: "\n"),
                "round \(round)")
        }
    }

    @Test(
        "the host is signed lower-cased, beyond ASCII too, with its port only when not the scheme's",
        arguments: [
            ("https://api.example.com/", "api.example.com"),
            ("https://API.Example.COM:443/", "api.example.com"),
            ("https://%C3%84x.example/", "äx.example"),
            ("https://%C3%84X.example/", "äx.example"),
            ("http://H:8080/", "h:8080"),
            ("http://[::1]:80/", "[::1]"),
            ("https://API.Example.com:443/a/../b", "api.example.com"),
            ("https://u:p@API.example.com:8443/a/./b", "api.example.com:8443"),
            ("https://%C3%84x.example/a/%2E%2E/b", "äx.example"),
        ])
    func host(url: String, expected: String) throws {
        let request = HTTPRequest(method: .get, url: try #require(URL(string: url)))
        #expect(CanonicalRequest(request, version: .v2, timestamp: "1", nonce: "n").host == expected)
    }

    @Test(
        "the host read from the URL's text is the one read from its decoded host",
        arguments: [
            "https://api.example.com/v1", "HTTPS://API.Example.COM:443/", "http://H:8080/p?q#f", "http://[::1]:80/",
            "http://[::A]:8443", "https://h:0443/", "http://h:/", "http://h:443/", "https://h:80/", "http://a-b.c_d~e/",
            "https://h?q=1", "https://h#f", "http://127.0.0.1:65535/", "http://[::ffff:1.2.3.4]/",
        ])
    func plainHost(url: String) throws {
        var text = try #require(URL(string: url)).absoluteString
        let plain = try #require(text.withUTF8 { CanonicalRequest.plainHost(in: $0) }, "read from the text")
        #expect(plain == CanonicalRequest.decodedHost(of: try #require(URL(string: url))))
    }

    @Test(
        "a host that needs decoding is not read from the text",
        arguments: ["https://%41x.example/", "https://u:p@h/", "https://u@h/", "ftp://h/"])
    func decodedHost(url: String) throws {
        var text = try #require(URL(string: url)).absoluteString
        #expect(text.withUTF8 { CanonicalRequest.plainHost(in: $0) } == nil)
    }

    @Test(
        "host and path are those of the URL sent, dot-segments removed",
        arguments: [
            ("https://API.Example.com:443/a/../b", "api.example.com", "/b"),
            ("https://u:p@API.example.com:8443/a/./b/", "api.example.com:8443", "/a/b/"),
            ("http://h/a/%2e%2E/c/./d", "h", "/c/d"),
        ])
    func hostAndPathOfWireURL(url: String, host: String, path: String) throws {
        let request = HTTPRequest(method: .get, url: try #require(URL(string: url)))
        let canonical = CanonicalRequest(request, version: .v2, timestamp: "1", nonce: "n")
        #expect(canonical.host == host)
        #expect(canonical.path == path)
        #expect(URLComponents(url: try request.wireURL(), resolvingAgainstBaseURL: false)?.percentEncodedPath == path)
    }

    @Test("a host beyond ASCII is signed as the URL spells it, and so as the Host header carries it")
    func internationalHost() throws {
        let url = try #require(URL(string: "https://\u{E4}x.Example/"))
        let request = HTTPRequest(method: .get, url: url)
        // The text libcurl is given names the host in its ASCII form, which is what it sends.
        #expect(try request.wireURLText().text.hasPrefix("https://xn--x-zfa.example/"))
        #expect(CanonicalRequest(request, version: .v2, timestamp: "1", nonce: "n").host == "xn--x-zfa.example")
    }

    @Test("a list whose every pair is the signature's is empty")
    func allExcluded() throws {
        let url = try #require(URL(string: "https://h/p"))
        let request = HTTPRequest(
            method: .post, url: url, query: ["sign": "1", "sign": ""], body: .form(["sign": "x"]))
        let canonical = CanonicalRequest(request, version: .v2, excluding: "sign", timestamp: "1", nonce: "n")
        #expect(canonical.sortedQuery == "" && canonical.sortedForm == "" && canonical.sortedParameters == "")
    }
}
