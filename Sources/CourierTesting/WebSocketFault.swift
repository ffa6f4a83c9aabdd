import Foundation

/// A frame a broken WebSocket server sends, for tests of how the client fails: send its
/// ``bytes`` after the handshake, with ``FaultServer/Step/send(_:)-(WebSocketFault)`` in a
/// `FaultServer` script or `LoopbackServer.WebSocketConnection.sendRaw(_:)` in a route.
public enum WebSocketFault: String, Sendable, CaseIterable {
    /// A binary frame's header cut off after its first length byte, then nothing: the client
    /// waits for the rest until the connection ends.
    case frameCutMidHeader
    /// A text frame with its mask bit set, which a server must never send (the client closes
    /// with 1002).
    case maskedFrame
    /// A binary frame whose 64-bit length has its top bit set (the client closes with 1002).
    case oversizedLength
    /// A text frame whose payload is not UTF-8 (the client closes with 1007).
    case invalidText
    /// A close frame without a status code (the client answers with a close without one).
    case closeWithoutCode

    /// The bytes on the wire.
    public var bytes: Data {
        switch self {
        case .frameCutMidHeader: Data([0x82, 0x7E, 0x01])
        case .maskedFrame: Data([0x81, 0x82, 1, 2, 3, 4, 0x69 ^ 1, 0x69 ^ 2])
        case .oversizedLength: Data([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 1])
        case .invalidText: Data([0x81, 0x02, 0xC3, 0x28])
        case .closeWithoutCode: Data([0x88, 0x00])
        }
    }
}
