import Foundation

/// Reads WebSocket frames out of the bytes of a connection, however they are cut into pieces,
/// and checks each header as soon as its bytes are in (RFC 6455, section 5): a frame that breaks
/// the protocol fails before its payload is waited for or stored.
package struct WebSocketFrameReader: Sendable {
    /// The bytes received and not yet read; `start` is where the next frame begins.
    private var buffer: [UInt8] = []
    private var start = 0
    private var failure: WebSocketProtocolError?
    private let expectsMasked: Bool
    private let maximumPayload: Int
    private let allowsCompression: Bool

    /// A reader.
    /// - Parameters:
    ///   - expectsMasked: `false` for a client, which must be sent no masked frame; `true` for a
    ///     server, which must be sent masked frames only.
    ///   - maximumPayload: The most bytes one frame may carry (a message's limit bounds each of
    ///     its frames too); past it the frame fails with 1009 before its payload is stored.
    ///   - allowsCompression: Whether `permessage-deflate` was agreed, so the RSV1 bit may be set
    ///     on a message's first frame.
    package init(expectsMasked: Bool, maximumPayload: Int, allowsCompression: Bool = false) {
        self.expectsMasked = expectsMasked
        self.maximumPayload = max(0, maximumPayload)
        self.allowsCompression = allowsCompression
    }

    /// Adds bytes received; once the reader has failed, drops them.
    package mutating func append(_ bytes: some Sequence<UInt8>) {
        guard failure == nil else { return }
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The bytes held for a frame not yet whole.
    package var bufferedByteCount: Int { buffer.count - start }

    /// The next whole frame, or `nil` until more bytes arrive.
    /// - Throws: The protocol error the bytes show; from then on every call throws it.
    package mutating func next() throws(WebSocketProtocolError) -> WebSocketFrame? {
        if let failure { throw failure }
        do throws(WebSocketProtocolError) {
            return try read()
        } catch {
            failure = error
            buffer = []
            start = 0
            throw error
        }
    }

    private mutating func read() throws(WebSocketProtocolError) -> WebSocketFrame? {
        let available = buffer.count - start
        guard available >= 2 else { return nil }
        let first = buffer[start]
        let second = buffer[start + 1]
        let isFinal = first & 0x80 != 0
        let isCompressed = first & 0x40 != 0
        let masked = second & 0x80 != 0
        let shortLength = Int(second & 0x7F)
        guard let opcode = WebSocketFrame.Opcode(rawValue: first & 0x0F) else {
            throw WebSocketProtocolError(.protocolError, "a frame has the reserved opcode \(first & 0x0F)")
        }
        guard first & 0x30 == 0 else {
            throw WebSocketProtocolError(.protocolError, "a frame sets a reserved bit (RSV2 or RSV3)")
        }
        if isCompressed {
            guard allowsCompression else {
                throw WebSocketProtocolError(.protocolError, "a frame sets RSV1, and no compression was agreed")
            }
            guard !opcode.isControl, opcode != .continuation else {
                throw WebSocketProtocolError(.protocolError, "RSV1 is set on a control frame or a continuation")
            }
        }
        guard masked == expectsMasked else {
            throw WebSocketProtocolError(
                .protocolError, expectsMasked ? "a client frame is not masked" : "a server frame is masked")
        }
        if opcode.isControl {
            guard isFinal else { throw WebSocketProtocolError(.protocolError, "a control frame is fragmented") }
            guard shortLength <= WebSocketFrame.maximumControlPayload else {
                throw WebSocketProtocolError(.protocolError, "a control frame carries more than 125 bytes")
            }
        }
        var offset = start + 2
        let length: UInt64
        switch shortLength {
        case 126:
            guard available >= 4 else { return nil }
            length = UInt64(buffer[offset]) << 8 | UInt64(buffer[offset + 1])
            offset += 2
        case 127:
            guard available >= 10 else { return nil }
            length = buffer[offset..<offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
            offset += 8
            guard length >> 63 == 0 else {
                throw WebSocketProtocolError(.protocolError, "a frame's 64-bit length sets its highest bit")
            }
        default:
            length = UInt64(shortLength)
        }
        guard length <= UInt64(maximumPayload) else {
            throw WebSocketProtocolError(
                .messageTooBig, "a frame carries \(length) bytes, more than the limit of \(maximumPayload)")
        }
        let count = Int(length)
        var key: [UInt8] = []
        if masked {
            guard buffer.count - offset >= 4 else { return nil }
            key = Array(buffer[offset..<offset + 4])
            offset += 4
        }
        guard buffer.count - offset >= count else { return nil }
        var payload = Data(buffer[offset..<offset + count])
        if masked { payload.withUnsafeMutableBytes { WebSocketFrame.mask($0, with: key, from: 0) } }
        start = offset + count
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        return WebSocketFrame(opcode, payload, isFinal: isFinal, isCompressed: isCompressed)
    }
}
