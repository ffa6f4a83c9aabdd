import Courier
import Foundation

extension FuzzTarget {
    static let webSocketTargets: [FuzzTarget] = [
        FuzzTarget(
            name: "websocket-frames",
            summary:
                "a server's WebSocket bytes give the same frames and messages (or the same protocol error) however they are cut, each frame and message within its limit",
            check: webSocketFrames),
        FuzzTarget(
            name: "websocket-round-trip",
            summary:
                "frames made from the input, written masked as a client writes them, read back the same by a server's reader however the bytes are cut",
            check: webSocketRoundTrip),
        FuzzTarget(
            name: "websocket-handshake-answer",
            summary:
                "a server's answer to the WebSocket handshake reads the same (or fails the same) however it is cut, its head and body within their limits",
            check: webSocketHandshakeAnswer),
    ]

    private static func webSocketHandshakeAnswer(_ input: UnsafeRawBufferPointer) {
        guard let (stream, pieces) = split(input) else { return }
        let limit = 256
        /// What the pieces amount to: the answer (status, header fields, body, and the bytes after
        /// a `101`'s head), or the error; the server's close ends the bytes.
        func run(_ pieces: [Data]) -> Result<String, NetworkError> {
            var reader = HandshakeAnswerReader(maximumBodySize: limit, url: nil)
            func describe(_ response: HTTPResponse, _ leftover: [UInt8]?) -> String {
                require(response.body.count <= limit, "a body over the limit was read")
                let fields = response.headers.map { "\($0.name)=\($0.value)" }.joined(separator: "|")
                return
                    "\(response.status) \(fields) \(response.body.hexString) \(leftover.map { Data($0).hexString } ?? "-")"
            }
            do throws(NetworkError) {
                var progress = HandshakeAnswerReader.Progress.needsMore
                var taken = 0
                for piece in pieces {
                    progress = try reader.append(piece)
                    taken += piece.count
                    if case .needsMore = progress { continue }
                    break
                }
                switch progress {
                case .needsMore: return .success(describe(try reader.finish(), nil))
                case .answered(let response): return .success(describe(response, nil))
                case .upgraded(let response, let leftover):
                    // The bytes after the head, those of the pieces not yet given included.
                    return .success(describe(response, leftover + stream.dropFirst(taken)))
                }
            } catch {
                return .failure(error)
            }
        }
        let whole = run([Data(stream)])
        let cut = run(pieces)
        switch (whole, cut) {
        case (.success(let a), .success(let b)): require(a == b, "cut into pieces, the answer read otherwise")
        case (.failure(let a), .failure(let b)): require(a.code == b.code, "cut into pieces, it failed otherwise")
        default: require(false, "cut into pieces, it read \(cut) instead of \(whole)")
        }
    }

    /// The input's bytes made into frames: each frame takes a header byte (its opcode, final
    /// bit, RSV1), a length byte, then that many bytes of payload (control frames at most 125).
    private static func webSocketRoundTrip(_ input: UnsafeRawBufferPointer) {
        let bytes = [UInt8](input)
        var frames: [WebSocketFrame] = []
        var index = 0
        let opcodes: [WebSocketFrame.Opcode] = [.continuation, .text, .binary, .close, .ping, .pong]
        while index + 2 <= bytes.count {
            let opcode = opcodes[Int(bytes[index] & 0x0F) % opcodes.count]
            let limit = opcode.isControl ? WebSocketFrame.maximumControlPayload : 300
            let count = min(Int(bytes[index + 1]) * 2, limit, bytes.count - index - 2)
            let payload = Data(bytes[(index + 2)..<(index + 2 + count)])
            frames.append(WebSocketFrame(opcode, payload, isFinal: opcode.isControl || bytes[index] & 0x80 != 0))
            index += 2 + count
        }
        var wire = Data()
        for (number, frame) in frames.enumerated() {
            wire.append(frame.encoded(maskingKey: UInt32(truncatingIfNeeded: number &* 0x9E37_79B9)))
        }
        for step in [wire.count + 1, 1, 7, 13] where step > 0 {
            var reader = WebSocketFrameReader(expectsMasked: true, maximumPayload: 300)
            var read: [WebSocketFrame] = []
            var offset = 0
            while offset < wire.count {
                reader.append(wire[offset..<min(offset + step, wire.count)])
                offset += step
                do {
                    while let frame = try reader.next() { read.append(frame) }
                } catch {
                    require(false, "a frame Courier wrote was refused: \(error.reason)")
                }
            }
            require(read == frames, "read back otherwise, cut every \(step) bytes")
            require(reader.bufferedByteCount == 0, "bytes left over")
        }
    }

    private static func webSocketFrames(_ input: UnsafeRawBufferPointer) {
        guard let (stream, pieces) = split(input) else { return }
        let limit = 512
        func run(_ pieces: [Data]) -> Result<[WebSocketMessageAssembler.Event], WebSocketProtocolError> {
            var reader = WebSocketFrameReader(expectsMasked: false, maximumPayload: limit, allowsCompression: false)
            var assembler = WebSocketMessageAssembler(maximumMessageSize: limit)
            var events: [WebSocketMessageAssembler.Event] = []
            do throws(WebSocketProtocolError) {
                for piece in pieces {
                    reader.append(piece)
                    while let frame = try reader.next() {
                        require(frame.payload.count <= limit, "a frame over the limit was read")
                        require(
                            !frame.opcode.isControl || frame.payload.count <= WebSocketFrame.maximumControlPayload,
                            "a control frame over 125 bytes was read")
                        if let event = try assembler.receive(frame) { events.append(event) }
                    }
                }
            } catch {
                return .failure(error)
            }
            return .success(events)
        }
        let whole = run([Data(stream)])
        require(whole == run(pieces), "cut into pieces, the bytes read otherwise")
        guard case .success(let events) = whole else { return }
        for event in events {
            switch event {
            case .text(let text): require(text.utf8.count <= limit, "a text over the limit was given")
            case .binary(let bytes): require(bytes.count <= limit, "a message over the limit was given")
            case .close(let close):
                require(close.code == .noStatus || close.code.isAllowedOnTheWire, "a bad close code")
            case .ping, .pong: break
            }
        }
    }
}
