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

        @Test("header lines up to the limit are read, past it too large; interim answers and trailers count")
        func headerLinesPastTheLimit() {
            let limit = HTTPResponse.maximumHeaderSize
            /// `filler` lines of 1000 bytes, then one of the length that brings `counted` to `total`.
            func filler(from counted: Int, to total: Int) -> [String] {
                let whole = (total - counted) / 1000 - 1
                let last = total - counted - whole * 1000 - 2
                return Array(repeating: "X-Filler: " + String(repeating: "a", count: 988), count: whole)
                    + ["X-Last: " + String(repeating: "b", count: last - 8)]
            }
            // An interim answer takes most of the room; the final head's lines reach the limit.
            var head = CurlResponseHead()
            let interim = take(["HTTP/1.1 100 Continue"] + filler(from: 23, to: limit / 2) + [""], into: &head)
            #expect(interim.allSatisfy { $0 == .reading })
            #expect(head.byteCount == limit / 2 + 2)
            let final = take(["HTTP/1.1 200 OK"] + filler(from: limit / 2 + 2 + 17, to: limit), into: &head)
            #expect(final.allSatisfy { $0 == .reading })
            #expect(head.byteCount == limit)
            #expect(take([""], into: &head) == [.tooLarge])

            // Trailers count as well: a small head, then trailers up to the limit and past it.
            var trailed = CurlResponseHead()
            #expect(take(["HTTP/1.1 200 OK", ""], into: &trailed) == [.reading, .completed])
            #expect(take(filler(from: 19, to: limit), into: &trailed).allSatisfy { $0 == .afterHead })
            #expect(take(["X"], into: &trailed) == [.tooLarge])
        }
    }
#endif
