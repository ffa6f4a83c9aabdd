import Courier
import Foundation
import Testing

/// What the default (v2) signature covers that v1 did not: where each parameter travels, the
/// host and the port. Every pair of requests here differs only in what is named.
@Suite struct SigningV2Tests {
    private static func signature(
        _ method: HTTPMethod, _ url: String, query: Parameters = [:], body: HTTPBody = .none,
        placement: SigningInterceptor.Placement = .headers()
    ) throws -> String? {
        let signer = SigningInterceptor(
            .hmacSHA256(secret: Data("secret".utf8)), placement: placement,
            now: { Date(timeIntervalSince1970: 1_700_000_000) }, nonce: { "0123456789abcdef" })
        let request = HTTPRequest(method: method, url: try #require(URL(string: url)), query: query, body: body)
        let signed = signer.signedForTest(request)
        switch placement {
        case .headers(let name, _, _): return signed.headers[name]
        case .parameters(let name, _, _):
            guard case .form(let form) = signed.body else { return signed.query[name] }
            return form[name]
        }
    }

    @Test(
        "moving a parameter between the query and the body changes the signature",
        arguments: [SigningInterceptor.Placement.headers(), .parameters()])
    func queryAndBodyAreApart(placement: SigningInterceptor.Placement) throws {
        let url = "https://api.example.com/v1/pay"
        let inQuery = try Self.signature(
            .post, url, query: ["amount": "1"], body: .form(["to": "ann"]), placement: placement)
        let inBody = try Self.signature(.post, url, body: .form(["amount": "1", "to": "ann"]), placement: placement)
        let inBothSwapped = try Self.signature(
            .post, url, query: ["to": "ann"], body: .form(["amount": "1"]), placement: placement)

        #expect(inQuery != nil)
        #expect(Set([inQuery, inBody, inBothSwapped]).count == 3)
    }

    @Test(
        "a different host or port changes the signature",
        arguments: [
            ("https://api.example.com/v1/orders", "https://evil.example.com/v1/orders"),
            ("https://api.example.com/v1/orders", "https://api.example.com.evil.net/v1/orders"),
            ("https://api.example.com/v1/orders", "https://api.example.com:8443/v1/orders"),
            ("http://127.0.0.1:8080/v1/orders", "http://127.0.0.1:8081/v1/orders"),
            ("http://127.0.0.1:8080/v1/orders", "http://127.0.0.2:8080/v1/orders"),
            ("https://api.example.com/v1/orders", "http://api.example.com:443/v1/orders"),
        ])
    func hostAndPortAreSigned(original: String, other: String) throws {
        let signed = try Self.signature(.get, original, query: ["page": "1"])
        #expect(signed != nil)
        #expect(try Self.signature(.get, other, query: ["page": "1"]) != signed)
    }

    @Test(
        "a scheme's default port is left out, any other port is signed, and case does not matter",
        arguments: [("http", 80), ("https", 443)])
    func defaultPortsAreOmitted(scheme: String, defaultPort: Int) throws {
        let plain = try Self.signature(.get, "\(scheme)://api.example.com/v1/orders")
        #expect(try Self.signature(.get, "\(scheme)://api.example.com:\(defaultPort)/v1/orders") == plain)
        #expect(try Self.signature(.get, "\(scheme)://API.Example.COM/v1/orders") == plain)
        #expect(try Self.signature(.get, "\(scheme)://api.example.com:\(defaultPort + 1)/v1/orders") != plain)
    }
}
