import Courier
import Foundation

extension FuzzTarget {
    static let webSocketTargets: [FuzzTarget] = [
        FuzzTarget(
            name: "websocket-frames",
            summary:
                "a server's WebSocket bytes give the same frames and messages (or the same protocol error) however they are cut, each frame and message within its limit",
            check: webSocketFrames)
    ]

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
