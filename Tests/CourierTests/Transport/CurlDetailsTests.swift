#if os(Linux)
    import Foundation
    import Testing

    @testable import Courier

    /// The byte-level parser of the header lines libcurl delivers.
    @Suite struct CurlHeaderLineTests {
        private func parse<T>(_ text: String, _ read: (CurlHeaderLine) -> T) -> T {
            Array(text.utf8).withUnsafeBytes { read(CurlHeaderLine($0)) }
        }

        @Test(
            "status lines of every HTTP version, with and without a reason",
            arguments: [
                ("HTTP/1.1 200 OK\r\n", 200), ("HTTP/1.0 404 Not Found\r\n", 404), ("HTTP/2 204\r\n", 204),
                ("HTTP/3 100\r\n", 100), ("HTTP/1.1 30\r\n", nil), ("HTTP/1.1 2000 x\r\n", nil),
                ("Host: HTTP/1.1\r\n", nil),
            ])
        func statusLine(_ line: String, _ expected: Int?) {
            #expect(parse(line) { $0.statusCode } == expected)
        }

        @Test("the version of a status line")
        func version() {
            #expect(parse("HTTP/1.1 200 OK\r\n") { $0.httpVersion } == "1.1")
            #expect(parse("HTTP/2 204\r\n") { $0.httpVersion } == "2")
            #expect(parse("Host: x\r\n") { $0.httpVersion } == nil)
        }

        @Test("fields keep their value's inner spaces and colons; blank lines end a head")
        func fields() {
            let field = parse("Content-Type:  text/html; charset=utf-8 \r\n") { $0.field }
            #expect(field?.0 == "Content-Type" && field?.1 == "text/html; charset=utf-8")
            let location = parse("Location: http://a:8080/x\r\n") { $0.field }
            #expect(location?.1 == "http://a:8080/x")
            let empty = parse("X-Empty:\r\n") { $0.field }
            #expect(empty?.0 == "X-Empty" && empty?.1 == "")
            #expect(parse("\r\n") { $0.isBlank })
            #expect(parse(": no name\r\n") { $0.field } == nil)
        }
    }
#endif

#if os(Linux)
    import CourierTesting

    /// What CurlTransport reports besides the answer.
    @Suite struct CurlTimingsTests {
        @Test("an answer carries its timings, each phase no later than the next")
        func timings() async throws {
            let server = try LoopbackServer()
            defer { server.stop() }
            server.route("/slow") { _ in LoopbackServer.Response.text("late").delayed(by: .milliseconds(50)) }
            let transport = try CurlTransport()

            let response = try await transport.send(
                HTTPRequest(method: .get, url: server.baseURL.appendingPathComponent("slow")))

            let timings = try #require(response.timings)
            #expect(timings.nameLookup <= timings.connect && timings.connect <= timings.firstByte)
            #expect(timings.firstByte <= timings.total)
            #expect(timings.firstByte >= .milliseconds(50), "the server's delay comes before the first byte")
            #expect(timings.tlsHandshake == .zero, "no TLS on plain HTTP")
        }
    }
#endif
