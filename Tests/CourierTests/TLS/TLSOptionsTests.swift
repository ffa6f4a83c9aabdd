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
        "with pins set, a host spelled so a pattern could miss it is refused, whatever its pins",
        arguments: [
            "127.1", "0x7f.0.0.1", "2130706433", "127.000.0.1", "0177.0.0.1", "api%2Eexample.com", "api.example.com..",
            "bücher.example.com", "a..example.com", "[::ffff:zz]",
        ])
    func unmatchableSpelling(host: String) {
        #expect(throws: NetworkError.self) { try Self.options.pins(for: host) }
        #expect(throws: Never.self) { try TLSOptions().pins(for: host) }
    }

    @Test("IP addresses match in their canonical spelling")
    func addresses() throws {
        let options = TLSOptions(pinnedPublicKeys: ["[0:0::1]": ["six"], "10.0.0.1": ["four"]])
        #expect(try options.pins(for: "::1") == ["six"])
        #expect(try options.pins(for: "[0000:0000:0000:0000:0000:0000:0000:0001]") == ["six"])
        #expect(try options.pins(for: "10.0.0.1") == ["four"])
        #expect(try options.pins(for: "10.0.0.2") == [])
    }

    @Test("two patterns naming the same hosts are refused rather than one picked at random")
    func collidingPatterns() {
        for pins in [
            ["api.example.com": ["a"], "API.Example.com.": []], ["*.example.com": ["a"], "*.EXAMPLE.com": ["b"]],
            ["[::1]": ["a"], "0:0::1": ["b"]],
        ] {
            let options = TLSOptions(pinnedPublicKeys: pins)
            #expect(throws: NetworkError.self, "\(pins)") { try options.pins(for: "other.net") }
        }
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
