#if os(Linux)
    import Foundation

    /// One header line as libcurl delivers it (with its CR LF): a status line, a field, or the
    /// blank line that ends a head.
    package struct CurlHeaderLine {
        private let bytes: UnsafeRawBufferPointer
        private let end: Int

        package init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            var end = bytes.count
            while end > 0, Self.isWhitespace(bytes[end - 1]) { end -= 1 }
            self.end = end
        }

        private static func isWhitespace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
        }

        var isBlank: Bool { end == 0 }

        /// The status of an `HTTP/x y reason` line.
        package var statusCode: Int? {
            guard end >= 5, bytes[0] == 0x48, bytes[1] == 0x54, bytes[2] == 0x54, bytes[3] == 0x50, bytes[4] == 0x2F,
                let space = (5..<end).first(where: { bytes[$0] == 0x20 })
            else { return nil }
            var code = 0
            var index = space + 1
            while index < end, index < space + 4, (0x30...0x39).contains(bytes[index]) {
                code = code * 10 + Int(bytes[index] - 0x30)
                index += 1
            }
            guard index == space + 4, index == end || bytes[index] == 0x20 else { return nil }
            return code
        }

        /// The version of an `HTTP/x y reason` line: `1.1`, `2`, …
        package var httpVersion: String? {
            guard statusCode != nil, let space = (5..<end).first(where: { bytes[$0] == 0x20 }) else { return nil }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[5..<space]), as: UTF8.self)
        }

        /// The name and value of a `Name: value` line.
        package var field: (String, String)? {
            guard let colon = (0..<end).first(where: { bytes[$0] == 0x3A }), colon > 0 else { return nil }
            var start = colon + 1
            while start < end, Self.isWhitespace(bytes[start]) { start += 1 }
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<colon]), as: UTF8.self)
            let value = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            return (name, value)
        }
    }

    /// An answer's head as libcurl's header lines build it: an interim `1xx` answer is read and
    /// dropped, the final head is complete at its blank line, and the lines after it (a chunked
    /// body's trailers) change nothing. A value: the transfer keeps it under its lock, and tests
    /// give it lines directly.
    struct CurlResponseHead {
        /// What a line did to the head.
        enum Step: Equatable {
            /// The head goes on (or an interim answer did).
            case reading
            /// The final head is complete: this was its blank line.
            case completed
            /// A line after the final head, which changes nothing.
            case afterHead
            /// The header lines passed ``HTTPResponse/maximumHeaderSize``.
            case tooLarge
        }

        private(set) var status = 0
        private(set) var version: String?
        private(set) var headers = HTTPHeaders()
        /// Whether the final head is complete.
        private(set) var isComplete = false
        /// The bytes of header lines so far, interim answers and trailers included.
        private(set) var byteCount = 0

        /// Takes one header line as libcurl delivers it (with its CR LF).
        mutating func take(_ line: UnsafeRawBufferPointer) -> Step {
            byteCount += line.count
            guard byteCount <= HTTPResponse.maximumHeaderSize else { return .tooLarge }
            guard !isComplete else { return .afterHead }
            let text = CurlHeaderLine(line)
            if let code = text.statusCode {
                // A new answer: an interim one's fields are not the final one's.
                status = code
                version = text.httpVersion
                headers = HTTPHeaders()
            } else if let (name, value) = text.field {
                headers.append(name: name, value: value)
            } else if text.isBlank, status >= 200 {
                isComplete = true
                return .completed
            }
            return .reading
        }
    }
#endif
