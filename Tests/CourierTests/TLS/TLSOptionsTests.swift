import Courier
import Foundation
import Testing

/// Which pins apply to which host.
@Suite struct TLSOptionsTests {
    static let options = TLSOptions(pinnedPublicKeys: [
        "api.example.com": ["api"],
        "*.example.com": ["domain"],
        "*.cdn.example.com": [],
        "*.deep.example.com": ["deep"],
        "*": ["every"],
    ])

    @Test(
        "a host takes the pins of its own name, else its longest matching domain, else *",
        arguments: [
            ("api.example.com", ["api"]),
            ("API.Example.COM.", ["api"]),
            ("www.example.com", ["domain"]),
            ("a.b.example.com", ["domain"]),
            ("example.com", ["every"]),
            ("img.cdn.example.com", []),
            ("cdn.example.com", ["domain"]),
            ("x.deep.example.com", ["deep"]),
            ("notexample.com", ["every"]),
            ("127.0.0.1", ["every"]),
        ])
    func pinsForHost(host: String, expected: [String]) throws {
        #expect(try Self.options.pins(for: host) == expected)
    }

    @Test("no pattern matching leaves a host unpinned")
    func unmatched() throws {
        let options = TLSOptions(pinnedPublicKeys: ["api.example.com": ["api"], "*.example.com": ["domain"]])
        #expect(try options.pins(for: "cdn.other.net") == [])
        #expect(try options.pins(for: "example.com") == [])
        #expect(try TLSOptions().pins(for: "api.example.com") == [])
    }

    @Test("an IPv6 literal matches with or without brackets")
    func ipv6() throws {
        let options = TLSOptions(pinnedPublicKeys: ["[::1]": ["loopback"]])
        #expect(try options.pins(for: "::1") == ["loopback"])
        #expect(try options.pins(for: "[::1]") == ["loopback"])
    }

    @Test(
        "a malformed pattern fails with invalidRequest, whatever the host",
        arguments: [
            "", "*.", "api.*.example.com", "*example.com", "https://api.example.com", "a b", "..", ".example.com",
        ])
    func malformed(pattern: String) {
        let options = TLSOptions(pinnedPublicKeys: [pattern: ["pin"], "api.example.com": ["api"]])
        #expect(throws: NetworkError.self) { try options.pins(for: "api.example.com") }
        do {
            _ = try options.pins(for: "api.example.com")
        } catch {
            #expect(error.code == .invalidRequest)
            #expect(error.message.contains("pattern"))
        }
    }
}
