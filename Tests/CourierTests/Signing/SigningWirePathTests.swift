import CourierTesting
import Foundation
import Testing

@testable import Courier

/// libcurl removes `.` and `..` segments from every path it sends, on both transports; a
/// signature must cover the path the server receives, not the one the endpoint was written with.
@Suite struct SigningWirePathTests {
    /// An endpoint path (joined to `…/v1/`) and the path the server must receive.
    struct Case: Sendable, CustomTestStringConvertible {
        let endpoint: String
        let received: String
        var testDescription: String { "\(endpoint) → \(received)" }
    }

    static let cases: [Case] = [
        Case(endpoint: "orders/archive/../7", received: "/v1/orders/7"),
        Case(endpoint: "orders/./7/.", received: "/v1/orders/7/"),
        Case(endpoint: "orders/7/items/..", received: "/v1/orders/7/"),
        Case(endpoint: "orders//../7", received: "/v1/orders/7"),
        Case(endpoint: "../../../admin", received: "/admin"),
        // Encoded dots are dots (libcurl 8.13 and later, and many servers, read them so);
        // `...`, `.a` and `%2E%2E%2E` are no dot-segments.
        Case(endpoint: "orders/%2E%2E/7", received: "/v1/7"),
        Case(endpoint: "orders/%2e%2E/7", received: "/v1/7"),
        Case(endpoint: "orders/x/.%2e/%2E/7", received: "/v1/orders/7"),
        Case(endpoint: "orders/%2E%2E%2E/7", received: "/v1/orders/%2E%2E%2E/7"),
        Case(endpoint: "orders/.../.a/..b", received: "/v1/orders/.../.a/..b"),
    ]

    static var transports: [String] {
        #if os(Linux)
            ["curl", "urlsession"]
        #else
            ["urlsession"]
        #endif
    }

    private static let secret = Data("wire-path-secret".utf8)

    @Test("the server receives the path that was signed, and the signature verifies", arguments: transports, cases)
    func signedPathIsSentPath(transport: String, path: Case) async throws {
        let backend = try Backend {
            #if os(Linux)
                $0.transport = transport == "curl" ? try? CurlTransport() : URLSessionTransport()
            #else
                $0.transport = URLSessionTransport()
            #endif
            $0.interceptors = [.signing(.hmacSHA256(secret: Self.secret), placement: .headers())]
        }
        defer { backend.server.stop() }

        _ = try? await backend.client.send(
            Endpoint<EmptyResponse>.get(path.endpoint, query: ["a": "1"], decoding: .empty))

        let request = try #require(backend.server.requests.first)
        #expect(request.path == path.received)
        let canonical = try await WireSignature.canonicalV2(
            request, timestamp: request.headers["X-KC-TIME"] ?? "", nonce: request.headers["X-KC-NONCE"] ?? "")
        let expected = try await WireSignature.hmacSHA256(canonical, secret: Self.secret)
        #expect(request.headers["X-KC-HMAC"] == expected, "signed a path other than \(request.path)")
    }

    @Test(
        "a path may hold a dot-segment where a segment starts with a dot or %2E, and nowhere else",
        arguments: [
            ("", false), ("/", false), ("//", false), ("a.b", false), ("/a%2e", false), ("/%2", false), ("/%2f", false),
            ("/%", false), ("/.", true), ("/%2e", true), ("/%2E", true), ("/a/.b", true), ("https://h/x/./y", true),
        ])
    func mayHoldDotSegment(path: String, expected: Bool) {
        #expect(DotSegments.mayHoldDotSegment(path) == expected)
    }

    @Test("the wire URL keeps everything but the dot-segments byte for byte")
    func wireURLKeepsTheRest() throws {
        let request = HTTPRequest(
            method: .get, url: URL(string: "https://User@API.Example.com:8443/a%2Fb/./c%20d/../e;p=1/..")!,
            query: ["q": "x y"])
        #expect(try request.wireURL().absoluteString == "https://User@API.Example.com:8443/a%2Fb/?q=x%20y")
    }

    @Test(
        "the signed path is the URL's path as written, read the way URLComponents reads it",
        arguments: [
            "http://h", "http://h?x=1", "http://h#f", "http://h/", "http://[::1]:8080/a?b", "http://[fe80::1%25en0]/p",
            "http://u:p%40@h/a;b=c/d?x#y", "https://h/%E4%B8%AD/%20x", "http://h/a:b@c/d", "http://h:80/?a/b",
            "https://h/a/b/../c?x=/y", "http://h/a%2F..%2Fb",
        ])
    func pathAsURLComponentsReadsIt(text: String) throws {
        let url = try #require(URL(string: text))
        let request = HTTPRequest(method: .get, url: url)
        let canonical = CanonicalRequest(request, version: .v2, timestamp: "1", nonce: "n")
        let wire = try request.wireURL()
        let path = try #require(URLComponents(url: wire, resolvingAgainstBaseURL: false)).percentEncodedPath
        #expect(canonical.path == (path.isEmpty ? "/" : path))
    }

    @Test(
        "a URL relative to a base signs its full path, the one the transports send",
        arguments: [
            ("b/c?x=1", "http://h/a/", "/a/b/c"), ("/b", "http://h/a/", "/b"), ("../b", "https://h:8443/a/c/", "/a/b"),
            ("?x=1", "http://h/a", "/a"), (".", "http://h/a/b", "/a/"), ("//g/x#f", "http://h/a", "/x"),
        ])
    func relativeURL(relative: String, base: String, expected: String) throws {
        let url = try #require(URL(string: relative, relativeTo: URL(string: base)))
        let request = HTTPRequest(method: .get, url: url)
        #expect(try request.wireURL().absoluteString == url.absoluteURL.absoluteString.split(separator: "#")[0])
        let canonical = CanonicalRequest(request, version: .v2, timestamp: "1", nonce: "n")
        #expect(canonical.path == expected)
        let absolute = try #require(URLComponents(url: url.absoluteURL, resolvingAgainstBaseURL: false))
        #expect(absolute.percentEncodedPath == expected, "the transports send \(absolute.percentEncodedPath)")
    }

    @Test("a relative URL set after the request was made is resolved too, and signs the path that is sent")
    func relativeURLSetLater() throws {
        var request = HTTPRequest(method: .get, url: try #require(URL(string: "https://h/")))
        request.url = try #require(URL(string: "x/%2E%2E/y", relativeTo: URL(string: "https://h/a/")))
        #expect(try request.wireURL().absoluteString == "https://h/a/y")
        #expect(CanonicalRequest(request, version: .v2, timestamp: "1", nonce: "n").path == "/a/y")
    }

    @Test(
        "a URL with no scheme signs the path it holds, up to its query",
        arguments: [("/a/b?x=http://c/d", "/a/b"), ("/a%20b#f", "/a%20b"), ("?x=1", "/"), ("a/b:c", "a/b:c")])
    func noScheme(text: String, expected: String) throws {
        let url = try #require(URL(string: text))
        let canonical = CanonicalRequest(HTTPRequest(method: .get, url: url), version: .v2, timestamp: "1", nonce: "n")
        #expect(canonical.path == expected)
    }
}
