import Foundation

/// Reads a server's answer to a WebSocket handshake out of the connection's bytes (HTTP/1.1,
/// RFC 9112), however they are cut into pieces: the head, and, for an answer that is not
/// `101 Switching Protocols`, its body, which the layers read (a refused token, a business
/// code that asks for a login). Interim `1xx` answers are skipped.
package struct HandshakeAnswerReader: Sendable {
    /// What the bytes so far amount to.
    package enum Progress: Sendable {
        /// The answer is not whole yet.
        case needsMore
        /// The server switched protocols: `leftover` is the first of the WebSocket's bytes.
        case upgraded(HTTPResponse, leftover: [UInt8])
        /// The server answered without switching: its whole answer.
        case answered(HTTPResponse)
    }

    private enum Framing: Sendable {
        case length(Int)
        case chunked
        case untilClose
    }

    private enum ChunkStep: Sendable {
        case size
        case data(Int)
        case dataEnd
        case trailer
    }

    private var buffer: [UInt8] = []
    private var head: (status: Int, headers: HTTPHeaders)?
    private var framing = Framing.untilClose
    private var chunk = ChunkStep.size
    private var body = Data()
    private var headBytes = 0
    /// How far the search for the end of the head has looked.
    private var scanned = 0
    private let maximumBodySize: Int
    private let url: URL?

    /// A reader.
    /// - Parameters:
    ///   - maximumBodySize: The most bytes of body taken from an answer that is not `101`.
    ///   - url: The URL the answer is for.
    package init(maximumBodySize: Int, url: URL?) {
        self.maximumBodySize = max(0, maximumBodySize)
        self.url = url
    }

    private static func malformed(_ what: String) -> NetworkError {
        NetworkError(.transport, "The server's answer to the WebSocket handshake is not HTTP/1.1: \(what).")
    }

    /// Adds bytes received and reads as far as they go.
    /// - Throws: ``NetworkError/Code/transport`` for an answer that is not HTTP/1.1,
    ///   ``NetworkError/Code/responseTooLarge`` for a head or body past its limit.
    package mutating func append(_ bytes: some Sequence<UInt8>) throws(NetworkError) -> Progress {
        buffer.append(contentsOf: bytes)
        while head == nil {
            guard let end = endOfHead() else {
                guard headBytes + buffer.count <= HTTPResponse.maximumHeaderSize else {
                    throw NetworkError(
                        .responseTooLarge, "The handshake's answer has more than 256 KiB of header lines.")
                }
                return .needsMore
            }
            headBytes += end
            guard headBytes <= HTTPResponse.maximumHeaderSize else {
                throw NetworkError(.responseTooLarge, "The handshake's answer has more than 256 KiB of header lines.")
            }
            let parsed = try Self.parseHead(buffer[..<(end - 4)])
            buffer.removeFirst(end)
            if parsed.status == 101 {
                var response = HTTPResponse(status: 101, headers: parsed.headers, url: url)
                response.httpVersion = "1.1"
                return .upgraded(response, leftover: buffer)
            }
            // An interim answer (100 Continue, 103 Early Hints) comes before the real one.
            if parsed.status < 200 { continue }
            head = parsed
            framing = try Self.framing(status: parsed.status, headers: parsed.headers)
        }
        return try readBody()
    }

    /// The answer as it stands when the server closed the connection: an answer read until
    /// the close ends there; any other that is not whole fails.
    /// - Throws: ``NetworkError/Code/transport`` when the answer was cut short.
    package mutating func finish() throws(NetworkError) -> HTTPResponse {
        guard let head, case .untilClose = framing else {
            throw NetworkError(
                .transport, "The server closed the connection before its answer to the handshake was whole.")
        }
        return response(head)
    }

    private func response(_ head: (status: Int, headers: HTTPHeaders)) -> HTTPResponse {
        var response = HTTPResponse(status: head.status, headers: head.headers, body: body, url: url)
        response.httpVersion = "1.1"
        return response
    }

    private mutating func take(_ count: Int) throws(NetworkError) {
        guard body.count + count <= maximumBodySize else {
            throw NetworkError(
                .responseTooLarge, "The handshake's answer has a body of more than \(maximumBodySize) bytes.")
        }
        body.append(contentsOf: buffer[..<count])
        buffer.removeFirst(count)
    }

    private mutating func readBody() throws(NetworkError) -> Progress {
        guard let head else { return .needsMore }
        switch framing {
        case .untilClose:
            try take(buffer.count)
            return .needsMore
        case .length(let left):
            let count = min(left, buffer.count)
            try take(count)
            framing = .length(left - count)
            return left == count ? .answered(response(head)) : .needsMore
        case .chunked:
            while true {
                switch chunk {
                case .size:
                    guard let line = try takeLine() else { return .needsMore }
                    // Hex digits, then perhaps whitespace and `;extensions`.
                    let digits = line.prefix { Self.isHexDigit($0) }
                    let rest = line.dropFirst(digits.count).drop { $0 == 0x20 || $0 == 0x09 }
                    guard !digits.isEmpty, digits.count <= 15, rest.first.map({ $0 == UInt8(ascii: ";") }) ?? true,
                        let size = Int(String(decoding: digits, as: UTF8.self), radix: 16)
                    else { throw Self.malformed("a chunk's size is not hexadecimal") }
                    chunk = size == 0 ? .trailer : .data(size)
                case .data(let left):
                    let count = min(left, buffer.count)
                    try take(count)
                    guard left == count else {
                        chunk = .data(left - count)
                        return .needsMore
                    }
                    chunk = .dataEnd
                case .dataEnd:
                    guard let line = try takeLine() else { return .needsMore }
                    guard line.isEmpty else { throw Self.malformed("a chunk is longer than its size") }
                    chunk = .size
                case .trailer:
                    guard let line = try takeLine() else { return .needsMore }
                    if line.isEmpty { return .answered(response(head)) }
                    // Trailer lines count as header lines.
                    headBytes += line.count + 2
                    guard headBytes <= HTTPResponse.maximumHeaderSize else {
                        throw NetworkError(
                            .responseTooLarge, "The handshake's answer has more than 256 KiB of header lines.")
                    }
                }
            }
        }
    }

    /// The next line of a chunked body without its CR LF, or `nil` when it is not whole yet.
    private mutating func takeLine() throws(NetworkError) -> [UInt8]? {
        guard let newline = buffer.firstIndex(of: 0x0A) else {
            guard buffer.count <= 4096 else { throw Self.malformed("a chunk's line is longer than 4 KiB") }
            return nil
        }
        guard newline <= 4096 else { throw Self.malformed("a chunk's line is longer than 4 KiB") }
        guard newline > 0, buffer[newline - 1] == 0x0D else {
            throw Self.malformed("a chunk's line ends without CR LF")
        }
        let line = Array(buffer[..<(newline - 1)])
        buffer.removeFirst(newline + 1)
        return line
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// The index just past the blank line that ends a head (`CR LF CR LF`), if it is in; the
    /// scan goes on from where the last one stopped.
    private mutating func endOfHead() -> Int? {
        let bytes = buffer
        var index = max(3, scanned)
        while index < bytes.count {
            if bytes[index] == 0x0A && bytes[index - 1] == 0x0D && bytes[index - 2] == 0x0A && bytes[index - 3] == 0x0D
            {
                scanned = 0
                return index + 1
            }
            index += 1
        }
        scanned = index
        return nil
    }

    private static func parseHead(_ bytes: ArraySlice<UInt8>) throws(NetworkError) -> (
        status: Int, headers: HTTPHeaders
    ) {
        var lines = [ArraySlice<UInt8>]()
        var start = bytes.startIndex
        while let newline = bytes[start...].firstIndex(of: 0x0A) {
            guard newline > start, bytes[newline - 1] == 0x0D else { throw malformed("a line ends without CR LF") }
            lines.append(bytes[start..<(newline - 1)])
            start = newline + 1
        }
        lines.append(bytes[start...])
        let statusLine = String(decoding: lines[0], as: UTF8.self)
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0", parts[1].utf8.count == 3,
            parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) }), let status = Int(parts[1]), status >= 100
        else { throw malformed("its status line is \"\(statusLine.prefix(64))\"") }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex,
                !line[..<colon].contains(where: { $0 == 0x20 || $0 == 0x09 })
            else { throw malformed("a header line has no name") }
            let name = String(decoding: line[..<colon], as: UTF8.self)
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            headers.append(name: name, value: value)
        }
        return (status, headers)
    }

    /// How the body of an answer that is not `101` ends (RFC 9112, section 6.3).
    private static func framing(status: Int, headers: HTTPHeaders) throws(NetworkError) -> Framing {
        if status == 204 || status == 304 { return .length(0) }
        let codings = headers.filter { $0.name.lowercased() == "transfer-encoding" }
            .flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if let last = codings.last {
            return last == "chunked" ? .chunked : .untilClose
        }
        let lengths = Set(
            headers.filter { $0.name.lowercased() == "content-length" }
                .flatMap { $0.value.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces) })
        guard let length = lengths.first else {
            // A field with no value at all is no length.
            if headers.contains(where: { $0.name.lowercased() == "content-length" }) {
                throw malformed("its Content-Length is empty")
            }
            return .untilClose
        }
        guard lengths.count == 1, length.utf8.count <= 18, length.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let count = Int(length)
        else { throw malformed("its Content-Length is not one number") }
        return .length(count)
    }
}
