import Courier
import Foundation

/// Reads HTTP/1.1 requests from the bytes of one connection, as they arrive, for the test
/// servers. Incremental (each byte is looked at once), bounded (head size, body size) and safe
/// on any input: a malformed or hostile request ends in ``Event/malformed(status:reason:)``,
/// never in a trap.
///
/// Requests are framed as RFC 9112 says, with the ambiguous cases refused (the ones request
/// smuggling relies on): two different `Content-Length` values, `Content-Length` with
/// `Transfer-Encoding`, a transfer coding other than `chunked`.
package struct RequestParser {
    /// A request head: the request line and the header fields.
    package struct Head: Sendable, Hashable {
        package var method: String
        package var target: String
        package var version: String
        package var headers: HTTPHeaders
    }

    /// What the bytes fed so far make.
    package enum Event: Equatable {
        /// A request head arrived; its body (if any) follows.
        case head(Head)
        /// The body of the request whose head came last arrived in full (de-chunked).
        case body(Data, wasChunked: Bool)
        /// The bytes are not a request this parser can frame; nothing after them is read.
        /// `status` is the answer a server should give (400, 413, 431, 501).
        case malformed(status: Int, reason: String)
    }

    /// The largest request head (request line and fields).
    let maximumHeadSize: Int
    /// The largest body, de-chunked.
    let maximumBodySize: Int64

    private enum State {
        case head
        case fixed(remaining: Int64)
        case chunkSize
        case chunkData(remaining: Int64)
        case chunkDataEnd
        case trailers
        case failed
    }

    private var state = State.head
    private var buffer: [UInt8] = []
    /// Where unread bytes start in ``buffer``.
    private var start = 0
    /// How far the search for the end of a line or head has looked, from ``start``.
    private var scanned = 0
    private var body: [UInt8] = []
    private var trailerBytes = 0

    package init(maximumHeadSize: Int = 64 * 1024, maximumBodySize: Int64 = 1 << 31) {
        self.maximumHeadSize = maximumHeadSize
        self.maximumBodySize = maximumBodySize
    }

    /// Whether the parser gave up on malformed input.
    var hasFailed: Bool {
        if case .failed = state { return true }
        return false
    }

    /// Whether a request has begun (some of its bytes arrived) but is not complete.
    var isInsideRequest: Bool {
        switch state {
        case .head: start < buffer.count
        case .failed: false
        default: true
        }
    }

    /// The bytes fed and not read: what came after the last request (a WebSocket's first frames
    /// after its handshake). The parser holds none afterwards.
    package mutating func takeUnread() -> [UInt8] {
        defer {
            buffer = []
            start = 0
            scanned = 0
        }
        return Array(buffer[start...])
    }

    /// Adds bytes that arrived.
    package mutating func feed(_ bytes: some Collection<UInt8>) {
        guard !hasFailed else { return }
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next event the bytes fed so far make, or `nil` when more bytes are needed.
    package mutating func next() -> Event? {
        while true {
            switch state {
            case .failed:
                return nil
            case .head:
                guard let end = findHeadEnd() else {
                    if buffer.count - start > maximumHeadSize {
                        return fail(431, "The request head is larger than \(maximumHeadSize) bytes.")
                    }
                    return nil
                }
                guard end - start <= maximumHeadSize else {
                    return fail(431, "The request head is larger than \(maximumHeadSize) bytes.")
                }
                let bytes = buffer[start..<end]
                start = end
                scanned = 0
                return parseHead(bytes)
            case .fixed(let remaining):
                let available = Int64(buffer.count - start)
                let take = Int(min(available, remaining))
                body.append(contentsOf: buffer[start..<(start + take)])
                start += take
                guard remaining - Int64(take) == 0 else {
                    state = .fixed(remaining: remaining - Int64(take))
                    return nil
                }
                return finishBody(chunked: false)
            case .chunkSize:
                guard let line = takeLine(limit: 1024) else { return lineTooLong(1024) }
                guard let size = Self.chunkSize(line) else {
                    return fail(400, "The chunk size line is not valid.")
                }
                if size == 0 {
                    state = .trailers
                    trailerBytes = 0
                    continue
                }
                guard size <= maximumBodySize - Int64(body.count) else {
                    return fail(413, "The body is larger than \(maximumBodySize) bytes.")
                }
                state = .chunkData(remaining: size)
            case .chunkData(let remaining):
                let available = Int64(buffer.count - start)
                let take = Int(min(available, remaining))
                body.append(contentsOf: buffer[start..<(start + take)])
                start += take
                guard remaining - Int64(take) == 0 else {
                    state = .chunkData(remaining: remaining - Int64(take))
                    return nil
                }
                state = .chunkDataEnd
            case .chunkDataEnd:
                guard buffer.count - start >= 2 else { return nil }
                guard buffer[start] == 0x0D, buffer[start + 1] == 0x0A else {
                    return fail(400, "A chunk does not end with CR LF.")
                }
                start += 2
                state = .chunkSize
            case .trailers:
                guard let line = takeLine(limit: maximumHeadSize) else { return lineTooLong(maximumHeadSize) }
                trailerBytes += line.count + 2
                guard trailerBytes <= maximumHeadSize else {
                    return fail(431, "The trailers are larger than \(maximumHeadSize) bytes.")
                }
                if line.isEmpty { return finishBody(chunked: true) }
            }
        }
    }

    // MARK: - Heads

    /// The index just past the blank line that ends a head, searching only new bytes.
    private mutating func findHeadEnd() -> Int? {
        var index = start + max(scanned - 3, 0)
        while index + 3 < buffer.count {
            if buffer[index] == 0x0D, buffer[index + 1] == 0x0A, buffer[index + 2] == 0x0D, buffer[index + 3] == 0x0A {
                return index + 4
            }
            index += 1
        }
        scanned = buffer.count - start
        return nil
    }

    private mutating func parseHead(_ bytes: ArraySlice<UInt8>) -> Event {
        var lines = Self.split(bytes.dropLast(4))
        // RFC 9112 §2.2: a server should ignore empty lines before the request line.
        while let first = lines.first, first.isEmpty { lines.removeFirst() }
        guard !lines.isEmpty else { return fail(400, "The request has no request line.") }
        let requestLine = lines.removeFirst().split(separator: 0x20, omittingEmptySubsequences: false)
        guard requestLine.count == 3, !requestLine[1].isEmpty, Self.isToken(requestLine[0]),
            requestLine[2].starts(with: Array("HTTP/1.".utf8)), requestLine[2].count == 8
        else { return fail(400, "The request line is not valid.") }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: 0x3A), Self.isToken(line[..<colon]) else {
                return fail(400, "A header line is not `name: value`.")
            }
            let value = line[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 }
            let trimmed = value.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
            guard !trimmed.contains(where: { $0 == 0x00 || $0 == 0x0D || $0 == 0x0A }) else {
                return fail(400, "A header value holds CR, LF or NUL.")
            }
            headers.append(name: Self.text(line[..<colon]), value: Self.text(trimmed))
        }
        let head = Head(
            method: Self.text(requestLine[0]), target: Self.text(requestLine[1]), version: Self.text(requestLine[2]),
            headers: headers)
        if let failure = frameBody(of: head) { return failure }
        return .head(head)
    }

    /// Sets the state for the body the head announces, or fails on ambiguous framing.
    private mutating func frameBody(of head: Head) -> Event? {
        let lengths = Set(head.headers.fields.filter { $0.name.lowercased() == "content-length" }.map(\.value))
        let encodings = head.headers.fields.filter { $0.name.lowercased() == "transfer-encoding" }
        body = []
        if !encodings.isEmpty {
            guard lengths.isEmpty else {
                return fail(400, "The request has both Content-Length and Transfer-Encoding.")
            }
            let codings = encodings.flatMap { $0.value.split(separator: ",") }.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
            guard codings == ["chunked"] else { return fail(501, "The transfer coding is not chunked.") }
            state = .chunkSize
            return nil
        }
        guard lengths.count <= 1 else { return fail(400, "The request has different Content-Length values.") }
        guard let text = lengths.first else {
            state = .fixed(remaining: 0)
            return nil
        }
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let length = Int64(text)
        else { return fail(400, "The Content-Length is not a number.") }
        guard length <= maximumBodySize else { return fail(413, "The body is larger than \(maximumBodySize) bytes.") }
        state = .fixed(remaining: length)
        return nil
    }

    private mutating func finishBody(chunked: Bool) -> Event {
        state = .head
        scanned = 0
        defer { body = [] }
        return .body(Data(body), wasChunked: chunked)
    }

    // MARK: - Lines

    /// The next CR LF line without its end, or `nil` when it has not arrived (or is longer
    /// than `limit`: then ``lineTooLong(_:)`` tells).
    private mutating func takeLine(limit: Int) -> [UInt8]? {
        var index = start + max(scanned - 1, 0)
        while index + 1 < buffer.count {
            if buffer[index] == 0x0D, buffer[index + 1] == 0x0A {
                let line = Array(buffer[start..<index])
                start = index + 2
                scanned = 0
                return line
            }
            index += 1
        }
        scanned = buffer.count - start
        return nil
    }

    /// `nil` while a line may still be completed, a failure once it is too long.
    private mutating func lineTooLong(_ limit: Int) -> Event? {
        guard buffer.count - start > limit else { return nil }
        return fail(400, "A line is longer than \(limit) bytes.")
    }

    private mutating func fail(_ status: Int, _ reason: String) -> Event {
        state = .failed
        buffer = []
        start = 0
        body = []
        return .malformed(status: status, reason: reason)
    }

    /// A chunk size: hexadecimal digits (at most 15, so it fits `Int64`), then optional
    /// extensions after `;`.
    static func chunkSize(_ line: [UInt8]) -> Int64? {
        let digits = line.prefix { $0 != 0x3B && $0 != 0x20 && $0 != 0x09 }
        guard !digits.isEmpty, digits.count <= 15 else { return nil }
        var size: Int64 = 0
        for byte in digits {
            guard let digit = hexValue(byte) else { return nil }
            size = size << 4 | Int64(digit)
        }
        return size
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    private static func split(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 0x0D, index + 1 < bytes.endIndex, bytes[index + 1] == 0x0A {
                lines.append(bytes[lineStart..<index])
                index += 2
                lineStart = index
            } else {
                index += 1
            }
        }
        lines.append(bytes[lineStart..<bytes.endIndex])
        return lines
    }

    /// An RFC 9110 token: visible ASCII without separators.
    private static func isToken(_ bytes: some Collection<UInt8>) -> Bool {
        !bytes.isEmpty
            && bytes.allSatisfy { byte in
                byte > 0x20 && byte < 0x7F && !"()<>@,;:\\\"/[]?={}".utf8.contains(byte)
            }
    }

    private static func text(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
