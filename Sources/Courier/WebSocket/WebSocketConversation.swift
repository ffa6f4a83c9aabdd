import Foundation

/// The client's side of one WebSocket connection without its I/O: the bytes the server sent go
/// in; messages, pongs, the close, and the bytes to write in answer come out (RFC 6455: pongs
/// for pings, the close handshake, failing the connection on a broken rule). A connection's
/// thread drives it; tests drive it directly.
package struct WebSocketConversation: Sendable {
    /// What the bytes received amount to, in order.
    package enum Event: Sendable, Equatable {
        /// A whole message.
        case message(WebSocketMessage)
        /// A pong, with the payload of the ping it answers.
        case pong(Data)
        /// Bytes to write (a pong, the close that answers the server's).
        case write(Data)
        /// The close handshake is complete: the connection may be closed.
        case closed(WebSocketClose)
        /// The server broke the protocol: the close to write is in the event before; the
        /// connection may be closed.
        case failed(WebSocketProtocolError)
    }

    /// Where the close handshake stands.
    package enum Phase: Sendable, Equatable {
        case open
        /// This side sent a close and waits for the server's.
        case closing
        /// Both closes were exchanged, or the connection failed.
        case closed
    }

    package private(set) var phase = Phase.open
    private var reader: WebSocketFrameReader
    private var assembler: WebSocketMessageAssembler

    /// A conversation.
    /// - Parameter maximumMessageSize: The most bytes a message from the server may have.
    package init(maximumMessageSize: Int) {
        reader = WebSocketFrameReader(expectsMasked: false, maximumPayload: maximumMessageSize)
        assembler = WebSocketMessageAssembler(maximumMessageSize: maximumMessageSize)
    }

    /// A frame as this client writes it: masked with a fresh random key (section 5.3).
    package static func encode(_ frame: WebSocketFrame) -> Data {
        var generator = SystemRandomNumberGenerator()
        return frame.encoded(maskingKey: UInt32.random(in: .min ... .max, using: &generator))
    }

    /// The bytes of a message, whatever the phase (only an open conversation may send them).
    package static func encode(_ message: WebSocketMessage) -> Data {
        switch message {
        case .text(let text): encode(WebSocketFrame(.text, Data(text.utf8)))
        case .binary(let data): encode(WebSocketFrame(.binary, data))
        }
    }

    /// The bytes of a ping, or `nil` once this side has sent its close.
    package func ping(_ payload: Data) -> Data? {
        guard phase == .open else { return nil }
        return Self.encode(WebSocketFrame(.ping, payload.prefix(WebSocketFrame.maximumControlPayload)))
    }

    /// Begins the close handshake: the bytes of this side's close, or `nil` when it was begun
    /// already or the connection is closed.
    package mutating func close(_ close: WebSocketClose) -> Data? {
        guard phase == .open else { return nil }
        phase = .closing
        return Self.encode(WebSocketFrame(.close, close.payload))
    }

    /// Takes bytes the server sent.
    /// - Returns: What they amount to, in order; nothing once the connection is closed.
    package mutating func receive(_ bytes: some Sequence<UInt8>) -> [Event] {
        guard phase != .closed else { return [] }
        reader.append(bytes)
        var events: [Event] = []
        do throws(WebSocketProtocolError) {
            while phase != .closed, let frame = try reader.next() {
                guard let event = try assembler.receive(frame) else { continue }
                switch event {
                case .text(let text): events.append(.message(.text(text)))
                case .binary(let data): events.append(.message(.binary(data)))
                // After its close, this side sends nothing more.
                case .ping(let payload):
                    if phase == .open { events.append(.write(Self.encode(WebSocketFrame(.pong, payload)))) }
                case .pong(let payload): events.append(.pong(payload))
                case .close(let close):
                    if phase == .open {
                        // Echo the code (section 5.5.1); a close without one is answered without one.
                        events.append(.write(Self.encode(WebSocketFrame(.close, close.payload))))
                    }
                    phase = .closed
                    events.append(.closed(close))
                }
            }
        } catch {
            if phase == .open {
                let close = WebSocketClose(code: error.closeCode, reason: error.reason)
                events.append(.write(Self.encode(WebSocketFrame(.close, close.payload))))
            }
            phase = .closed
            events.append(.failed(error))
        }
        return events
    }

    /// The connection ended without a close handshake (the server closed it, or it broke).
    package mutating func end() {
        phase = .closed
    }
}
