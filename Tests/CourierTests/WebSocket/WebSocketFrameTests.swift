import Courier
import Foundation
import Testing

/// Frames on the wire, from RFC 6455's own examples (section 5.7) and its rules (section 5),
/// each rule broken once.
@Suite struct WebSocketFrameTests {
    /// A client reader (no masked frame allowed), with a 1 MiB limit.
    private func reader(limit: Int = 1 << 20, compression: Bool = false) -> WebSocketFrameReader {
        WebSocketFrameReader(expectsMasked: false, maximumPayload: limit, allowsCompression: compression)
    }

    /// Every frame in `bytes`, read whole; then read again one byte at a time, which must agree.
    private func frames(_ bytes: [UInt8], limit: Int = 1 << 20) throws -> [WebSocketFrame] {
        func read(_ pieces: [[UInt8]]) throws(WebSocketProtocolError) -> [WebSocketFrame] {
            var reader = reader(limit: limit)
            var frames: [WebSocketFrame] = []
            for piece in pieces {
                reader.append(piece)
                while let frame = try reader.next() { frames.append(frame) }
            }
            #expect(reader.bufferedByteCount == 0, "a whole input leaves nothing held")
            return frames
        }
        let whole = Result { () throws(WebSocketProtocolError) in try read([bytes]) }
        let byByte = Result { () throws(WebSocketProtocolError) in try read(bytes.map { [$0] }) }
        #expect(whole == byByte, "read byte by byte, the same frames or the same failure")
        return try whole.get()
    }

    private func failure(_ bytes: [UInt8], limit: Int = 1 << 20) -> WebSocketProtocolError? {
        do {
            _ = try frames(bytes, limit: limit)
            return nil
        } catch {
            return error as? WebSocketProtocolError
        }
    }

    @Test("the RFC's masked \"Hello\" is what a client sends with its key 37 fa 21 3d")
    func maskedHello() {
        let frame = WebSocketFrame(.text, Data("Hello".utf8))
        #expect(
            [UInt8](frame.encoded(maskingKey: 0x37fa_213d))
                == [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58])
    }

    @Test("the RFC's unmasked frames read as a server sends them: a text, its two fragments, a ping")
    func rfcExamples() throws {
        #expect(try frames([0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]) == [WebSocketFrame(.text, Data("Hello".utf8))])
        #expect(
            try frames([0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f]) == [
                WebSocketFrame(.text, Data("Hel".utf8), isFinal: false),
                WebSocketFrame(.continuation, Data("lo".utf8)),
            ])
        #expect(
            try frames([0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]) == [WebSocketFrame(.ping, Data("Hello".utf8))])
    }

    @Test(
        "lengths of 0, 125, 126, 65535, 65536 and 100000 bytes use the shortest of the three forms and read back",
        arguments: [0, 125, 126, 65535, 65536, 100_000])
    func lengths(_ count: Int) throws {
        let payload = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let encoded = [UInt8](WebSocketFrame(.binary, payload).encoded(maskingKey: nil))
        let header = count < 126 ? 2 : count < 65536 ? 4 : 10
        #expect(encoded.count == header + count)
        #expect(encoded[1] == (count < 126 ? UInt8(count) : count < 65536 ? 126 : 127))
        let read = try frames(encoded)
        #expect(read == [WebSocketFrame(.binary, payload)])
    }

    @Test("a masked frame unmasks to its payload whatever the key, and two keys give two wire forms")
    func maskRoundTrip() throws {
        let payload = Data((0..<300).map { UInt8(truncatingIfNeeded: $0) })
        let frame = WebSocketFrame(.binary, payload)
        var server = WebSocketFrameReader(expectsMasked: true, maximumPayload: 1 << 20)
        let first = frame.encoded(maskingKey: 0x0102_0304)
        let second = frame.encoded(maskingKey: 0xa1b2_c3d4)
        #expect(first != second)
        server.append(first + second)
        let read = [try server.next(), try server.next(), try server.next()]
        #expect(read == [frame, frame, nil])
    }

    @Test(
        "each broken rule fails with its close code as soon as the header shows it",
        arguments: [
            ("a reserved opcode (3)", [0x83, 0x00], 1002),
            ("a reserved control opcode (0xB)", [0x8B, 0x00], 1002),
            ("RSV2 set", [0xA1, 0x00], 1002),
            ("RSV3 set", [0x91, 0x00], 1002),
            ("RSV1 set with no compression agreed", [0xC1, 0x00], 1002),
            ("a masked frame from the server", [0x81, 0x80, 0, 0, 0, 0], 1002),
            ("a fragmented ping", [0x09, 0x00], 1002),
            ("a close of 126 bytes", [0x88, 0x7E, 0x00, 0x7E], 1002),
            ("a 64-bit length with its top bit set", [0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 1], 1002),
            ("a frame past the limit (1,025 bytes against 1,024)", [0x82, 0x7E, 0x04, 0x01], 1009),
        ] as [(String, [UInt8], UInt16)])
    func brokenRules(_ rule: String, _ bytes: [UInt8], _ code: UInt16) {
        let error = failure(bytes, limit: 1024)
        #expect(error?.closeCode.rawValue == code, "\(rule): \(String(describing: error))")
    }

    @Test("a frame past the limit fails from its header alone, before any of its payload arrives")
    func limitBeforePayload() {
        var reader = reader(limit: 1024)
        reader.append([0x82, 0x7F, 0, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF])  // 2 GiB announced
        #expect(throws: WebSocketProtocolError.self) { try reader.next() }
        reader.append([1, 2, 3])
        #expect(throws: WebSocketProtocolError.self, "a failed reader stays failed") { try reader.next() }
        #expect(reader.bufferedByteCount == 0, "and holds nothing")
    }

    @Test("with compression agreed, RSV1 is taken on a message's first frame and refused on a control or continuation")
    func compressionBit() throws {
        var agreed = reader(compression: true)
        agreed.append([0xC1, 0x01, 0x41])
        #expect(try agreed.next() == WebSocketFrame(.text, Data("A".utf8), isCompressed: true))
        for bytes: [UInt8] in [[0xC9, 0x00], [0xC0, 0x00]] {
            var reader = reader(compression: true)
            reader.append(bytes)
            #expect(throws: WebSocketProtocolError(.protocolError, "RSV1 is set on a control frame or a continuation"))
            {
                try reader.next()
            }
        }
    }

    @Test("a frame cut anywhere waits for the rest: nothing is read from a part")
    func partialFrames() throws {
        let encoded = [UInt8](WebSocketFrame(.binary, Data(count: 70_000)).encoded(maskingKey: nil))
        for cut in [1, 2, 5, 9, 10, 11, 69_999] {
            var reader = reader()
            reader.append(encoded[..<cut])
            #expect(try reader.next() == nil, "cut after \(cut) bytes")
            reader.append(encoded[cut...])
            #expect(try reader.next()?.payload.count == 70_000)
        }
    }

    @Test("a server's reader refuses an unmasked frame, and reads masked ones fed byte by byte, the key cut too")
    func serverSide() throws {
        var server = WebSocketFrameReader(expectsMasked: true, maximumPayload: 1024)
        server.append([0x81, 0x02, 0x68, 0x69])
        #expect(throws: WebSocketProtocolError(.protocolError, "a client frame is not masked")) { try server.next() }
        let frames = [WebSocketFrame(.text, Data("héllo".utf8)), WebSocketFrame(.binary, Data(count: 300))]
        var reader = WebSocketFrameReader(expectsMasked: true, maximumPayload: 1024)
        var read: [WebSocketFrame] = []
        for byte in frames.map({ $0.encoded(maskingKey: 0xdead_beef) }).reduce(Data(), +) {
            reader.append([byte])
            while let frame = try reader.next() { read.append(frame) }
        }
        #expect(read == frames)
    }
}
