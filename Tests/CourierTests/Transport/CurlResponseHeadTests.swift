#if os(Linux)
    import Foundation
    import Testing

    @testable import Courier

    /// The head an answer's header lines build, line by line, without libcurl or a server.
    @Suite struct CurlResponseHeadTests {
        /// The steps `lines` take, each line given with its CR LF.
        private func take(_ lines: [String], into head: inout CurlResponseHead) -> [CurlResponseHead.Step] {
            lines.map { line in Array((line + "\r\n").utf8).withUnsafeBytes { head.take($0) } }
        }

        @Test("an interim 1xx answer is dropped with its fields; the final head completes at its blank line")
        func interimAnswersDropped() {
            var head = CurlResponseHead()
            let steps = take(
                [
                    "HTTP/1.1 100 Continue", "", "HTTP/1.1 103 Early Hints", "Link: </app.css>; rel=preload", "",
                    "HTTP/1.1 201 Created", "Content-Type: application/json", "ETag: \"v1\"", "",
                ], into: &head)
            #expect(
                steps == [.reading, .reading, .reading, .reading, .reading, .reading, .reading, .reading, .completed])
            #expect(head.isComplete)
            #expect(head.status == 201)
            #expect(head.version == "1.1")
            #expect(head.headers.fields.map(\.name) == ["Content-Type", "ETag"])
            #expect(head.headers["Link"] == nil)
        }

        @Test("lines after the final head (a chunked body's trailers) change nothing, a status line neither")
        func linesAfterTheHeadChangeNothing() {
            var head = CurlResponseHead()
            _ = take(["HTTP/2 200", "content-type: text/plain", ""], into: &head)
            let steps = take(["X-Checksum: abc", "HTTP/1.1 500 Internal Server Error", ""], into: &head)
            #expect(steps == [.afterHead, .afterHead, .afterHead])
            #expect(head.status == 200)
            #expect(head.version == "2")
            #expect(head.headers.fields.map(\.name) == ["content-type"])
        }

        @Test("a blank line before any final status line completes nothing")
        func blankLineBeforeAStatusCompletesNothing() {
            var head = CurlResponseHead()
            #expect(take(["", "HTTP/1.1 100 Continue", ""], into: &head) == [.reading, .reading, .reading])
            #expect(!head.isComplete)
        }

        @Test("header lines past the limit, interim answers and trailers counted, are too large")
        func headerLinesPastTheLimit() {
            let line = "X-Filler: " + String(repeating: "a", count: 1000)
            let count = HTTPResponse.maximumHeaderSize / (line.utf8.count + 2)
            var head = CurlResponseHead()
            let below = take(["HTTP/1.1 100 Continue", ""] + Array(repeating: line, count: count - 1), into: &head)
            #expect(below.allSatisfy { $0 == .reading })
            #expect(take([line, line], into: &head).last == .tooLarge)
            #expect(!head.isComplete)

            // Trailers count as well: a head within the limit, then trailers past it.
            var trailed = CurlResponseHead()
            #expect(take(["HTTP/1.1 200 OK", ""], into: &trailed) == [.reading, .completed])
            #expect(take(Array(repeating: line, count: count + 1), into: &trailed).last == .tooLarge)
        }
    }
#endif
