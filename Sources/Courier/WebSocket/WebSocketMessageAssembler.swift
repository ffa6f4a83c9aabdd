import Foundation

/// Joins the frames of a WebSocket connection into what its reader sees: whole messages, and
/// the control frames as they come (RFC 6455, sections 5.4 and 5.5). Checks what a single
/// frame cannot show: continuations in order, a message's size across its fragments, and a
/// text's UTF-8 as each fragment arrives.
package struct WebSocketMessageAssembler: Sendable {
    /// What a frame amounts to.
    package enum Event: Sendable, Equatable {
        case text(String)
        case binary(Data)
        case ping(Data)
        case pong(Data)
        case close(WebSocketClose)
    }

    /// The message under way: its kind, its bytes so far and, for a text, its validation.
    private var partial: (opcode: WebSocketFrame.Opcode, bytes: Data, validation: UTF8Validation)?
    private let maximumMessageSize: Int

    /// An assembler.
    /// - Parameter maximumMessageSize: The most bytes a message may have in all its fragments;
    ///   past it the message fails with 1009.
    package init(maximumMessageSize: Int) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// Takes the next frame.
    /// - Returns: A message when `frame` ends one, a control frame's event, or `nil` for a
    ///   fragment that does not end its message.
    /// - Throws: The protocol error the frame shows.
    package mutating func receive(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> Event? {
        // Nothing inflates a compressed message yet: read as it is, its bytes would be wrong.
        guard !frame.isCompressed else {
            throw WebSocketProtocolError(.protocolError, "a compressed message came, and nothing can inflate it")
        }
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return .close(try WebSocketClose(payload: frame.payload))
        case .text, .binary:
            guard partial == nil else {
                throw WebSocketProtocolError(.protocolError, "a new message began before the last one ended")
            }
            partial = (frame.opcode, Data(), UTF8Validation())
        case .continuation:
            guard partial != nil else {
                throw WebSocketProtocolError(.protocolError, "a continuation frame came with no message under way")
            }
        }
        guard var message = partial else { return nil }
        partial = nil
        guard frame.payload.count <= maximumMessageSize - message.bytes.count else {
            throw WebSocketProtocolError(
                .messageTooBig, "a message is larger than the limit of \(maximumMessageSize) bytes")
        }
        if message.opcode == .text, !message.validation.consume(frame.payload) {
            throw WebSocketProtocolError(.invalidData, "a text message is not UTF-8")
        }
        message.bytes.append(frame.payload)
        guard frame.isFinal else {
            partial = message
            return nil
        }
        guard message.opcode == .text else { return .binary(message.bytes) }
        guard message.validation.isComplete else {
            throw WebSocketProtocolError(.invalidData, "a text message ends inside a character")
        }
        return .text(String(decoding: message.bytes, as: UTF8.self))
    }
}
