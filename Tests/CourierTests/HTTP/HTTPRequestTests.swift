import Foundation
import Testing

@testable import Courier

/// How a request takes its URL apart, and how an answer's length is read.
@Suite("HTTPRequest")
struct HTTPRequestTests {
    @Test("a URL's query moves into the parameters and its fragment is dropped; a plain URL is kept as it is")
    func urlParts() throws {
        let plain = HTTPRequest(method: .get, url: URL(string: "https://api.example.com/v1/orders")!)
        #expect(plain.url.absoluteString == "https://api.example.com/v1/orders")
        #expect(plain.query.isEmpty)
        let full = HTTPRequest(
            method: .get, url: URL(string: "https://api.example.com/v1/orders?page=2#top")!, query: ["size": "10"])
        #expect(full.url.absoluteString == "https://api.example.com/v1/orders")
        #expect(full.query.items.map(\.name) == ["page", "size"])
        let emptyQuery = HTTPRequest(method: .get, url: URL(string: "https://api.example.com/v1/orders?#")!)
        #expect(emptyQuery.url.absoluteString == "https://api.example.com/v1/orders")
        #expect(try emptyQuery.wireURL().absoluteString == "https://api.example.com/v1/orders")
    }

    @Test(
        "the URL text libcurl is given is the URL URLSession is given, byte for byte",
        arguments: [
            "a|b", "x=1&flag", "sig=%FF", "sig=%FF|x", "q=a^b&r={}", "p=%zz", "t=%", "k=`v`", "s=a+b", "u=%7C&w=\\",
            "filter[s]=1",
        ])
    func wireTextIsWireURL(query: String) throws {
        var request = HTTPRequest(method: .get, url: try #require(URL(string: "https://h/p")))
        request.query = Parameters.decoding(Substring(query))
        let text = try request.wireURLText().text
        #expect(text == (try request.wireURL().absoluteString))
        // Nothing the caller wrote is lost: an escape that is not UTF-8 goes out as written.
        if query.hasPrefix("sig=%FF") { #expect(text.contains("sig=%FF")) }
    }

    @Test("a URL's own query goes out as written, with only what a query cannot hold escaped")
    func urlQueryAsWritten() throws {
        let request = HTTPRequest(method: .get, url: try #require(URL(string: "https://h/p?q=a+b&x=%7c&y=%2f")))
        let text = try request.wireURLText().text
        #expect(text == "https://h/p?q=a+b&x=%7c&y=%2f")
        #expect(text == (try request.wireURL().absoluteString))
    }

    @Test("a URL relative to a base is resolved against it, as URLSession would; without a base it is refused")
    func relativeURL() throws {
        let base = URL(string: "https://api.example.com/v1/")!
        for text in ["orders", "orders?page=1", "./orders#top"] {
            let request = HTTPRequest(method: .get, url: URL(string: text, relativeTo: base)!)
            #expect(request.url.baseURL == nil, "\(text)")
            #expect(request.url.absoluteString == "https://api.example.com/v1/orders", "\(text)")
            #expect(request.query.items.map(\.name) == (text.contains("page") ? ["page"] : []), "\(text)")
            try request.checkWireSafety()
        }
        let bare = HTTPRequest(method: .get, url: URL(string: "orders")!)
        #expect(throws: NetworkError.self) { try bare.checkWireSafety() }
    }

    @Test(
        "Content-Length: one number, spaces and tabs around it allowed",
        arguments: [
            ("5", 5), (" 5\t", 5), ("5, 5", 5), ("5,5,", 5), ("0", 0), ("9223372036854775807", Int64.max),
        ] as [(String, Int64)])
    func contentLength(_ value: String, _ expected: Int64) throws {
        #expect(try HTTPHeaders(dictionaryLiteral: ("Content-Length", value)).contentLength() == expected)
    }

    @Test(
        "Content-Length: anything else is refused",
        arguments: [" ", "5 6", "5, 6", "+5", "-5", "5\u{0B}", "\u{A0}5", "5\r", "9223372036854775808", "0x10"])
    func badContentLength(_ value: String) {
        #expect(throws: NetworkError.self, "\(value.debugDescription)") {
            try HTTPHeaders(dictionaryLiteral: ("Content-Length", value)).contentLength()
        }
    }
}
