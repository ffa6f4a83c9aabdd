import Courier
import Foundation
import Testing

/// The handshake's answer read from bytes cut anywhere: a `101` with the WebSocket's first
/// bytes after it, and the bodies of answers that refuse (by length, chunked, until the close).
@Suite struct HandshakeAnswerReaderTests {
    /// Feeds `text` to a reader `piece` bytes at a time; the first result that is not
    /// `needsMore`, or the reader's end.
    private static func read(_ text: String, piece: Int, limit: Int = 1 << 20) throws(NetworkError) -> (
        HTTPResponse, [UInt8]?
    ) {
        var reader = HandshakeAnswerReader(maximumBodySize: limit, url: nil)
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + piece, bytes.count)
            switch try reader.append(bytes[offset..<end]) {
            case .needsMore: offset = end
            case .answered(let response): return (response, nil)
            case .upgraded(let response, let leftover): return (response, leftover + bytes[end...])
            }
        }
        return (try reader.finish(), nil)
    }

    @Test(
        "a 101 after an interim 100 is the upgrade, and the bytes after its head are the WebSocket's",
        arguments: [1, 7, 4096])
    func upgraded(piece: Int) throws {
        let text =
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\n\r\n\u{81}\u{02}hi"
        let (response, leftover) = try Self.read(text, piece: piece)
        #expect(response.status == 101)
        #expect(response.headers["upgrade"] == "websocket")
        #expect(leftover == [0xC2, 0x81, 0x02, 0x68, 0x69])
    }

    @Test(
        "a refusal's body is read by its length, in chunks with extensions and trailers, or until the close",
        arguments: [1, 5, 4096])
    func bodies(piece: Int) throws {
        let envelope = #"{"code":401001,"msg":"token expired"}"#
        let byLength = "HTTP/1.1 401 Unauthorized\r\nContent-Length: \(envelope.utf8.count)\r\n\r\n\(envelope)extra"
        #expect(try Self.read(byLength, piece: piece).0.body == Data(envelope.utf8))
        let chunked =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\n{\"cod\r\n"
            + "\(String(envelope.utf8.count - 5, radix: 16))\r\n\(envelope.dropFirst(5))\r\n0\r\nX-Trailer: 1\r\n\r\n"
        let answer = try Self.read(chunked, piece: piece).0
        #expect(answer.status == 200)
        #expect(answer.body == Data(envelope.utf8))
        let untilClose = "HTTP/1.0 403 Forbidden\r\n\r\n\(envelope)"
        #expect(try Self.read(untilClose, piece: piece).0.body == Data(envelope.utf8))
    }

    @Test(
        "an answer that is not HTTP/1.1, is cut short, or is past its limits throws",
        arguments: [
            ("HTTP/2 101 Switching\r\n\r\n", NetworkError.Code.transport),
            ("HTTP/1.1 1011 Odd\r\n\r\n", .transport),
            ("HTTP/1.1 101 OK\r\nNo colon here\r\n\r\n", .transport),
            ("HTTP/1.1 101 OK\r\nName : value\r\n\r\n", .transport),
            ("HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\nab", .transport),
            ("HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\nab", .transport),
            ("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", .transport),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-0\r\n\r\n", .transport),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1 0\r\n", .transport),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", .transport),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n" + String(repeating: "a", count: 2000),
                .responseTooLarge
            ),
        ])
    func malformed(text: String, code: NetworkError.Code) {
        let error = #expect(throws: NetworkError.self) { try Self.read(text, piece: 3, limit: 1000) }
        #expect(error?.code == code, "\(text.prefix(60))")
    }

    @Test("a head larger than 256 KiB throws before it is whole")
    func hugeHead() {
        let text =
            "HTTP/1.1 101 OK\r\n"
            + String(repeating: "X-Filler: \(String(repeating: "a", count: 1000))\r\n", count: 300)
        let error = #expect(throws: NetworkError.self) { try Self.read(text, piece: 4096) }
        #expect(error?.code == .responseTooLarge)
    }
}
