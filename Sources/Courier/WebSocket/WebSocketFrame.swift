import Foundation

/// One frame of the WebSocket protocol (RFC 6455, section 5.2): a message, or a piece of one,
/// or a control frame (close, ping, pong).
package struct WebSocketFrame: Sendable, Equatable {
    /// What a frame carries.
    package enum Opcode: UInt8, Sendable {
        /// The next piece of a message whose first frame said text or binary.
        case continuation = 0x0
        case text = 0x1
        case binary = 0x2
        case close = 0x8
        case ping = 0x9
        case pong = 0xA

        /// Close, ping and pong: at most ``WebSocketFrame/maximumControlPayload`` bytes, never
        /// fragmented, and allowed between the fragments of a message.
        package var isControl: Bool { rawValue & 0x8 != 0 }
    }

    /// The most bytes a control frame carries.
    package static let maximumControlPayload = 125

    /// Whether this is the last frame of its message (always, for a control frame).
    package var isFinal: Bool
    /// Whether the message is compressed (the RSV1 bit, with `permessage-deflate` only): set on
    /// the first frame of a message.
    package var isCompressed: Bool
    package var opcode: Opcode
    /// The payload, unmasked.
    package var payload: Data

    /// A frame.
    /// - Parameters:
    ///   - opcode: What it carries.
    ///   - payload: The payload, unmasked.
    ///   - isFinal: Whether it ends its message.
    ///   - isCompressed: The RSV1 bit.
    package init(_ opcode: Opcode, _ payload: Data = Data(), isFinal: Bool = true, isCompressed: Bool = false) {
        self.opcode = opcode
        self.payload = payload
        self.isFinal = isFinal
        self.isCompressed = isCompressed
    }

    /// The frame's bytes on the wire.
    /// - Parameter maskingKey: The key its payload is masked with: a client masks every frame
    ///   it sends with a fresh random key (section 5.3); a server masks none (`nil`).
    /// - Returns: The header and the (masked) payload.
    package func encoded(maskingKey: UInt32?) -> Data {
        let count = payload.count
        // Never held inline, as a `Data` of 14 bytes or fewer is (copied wherever it goes): a
        // frame libcurl's TLS could not finish writing must be retried from the same address.
        var bytes = Data(capacity: max(count + 14, 16))
        bytes.append((isFinal ? 0x80 : 0) | (isCompressed ? 0x40 : 0) | opcode.rawValue)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        switch count {
        case 0...125:
            bytes.append(maskBit | UInt8(count))
        case 126...0xFFFF:
            bytes.append(maskBit | 126)
            bytes.append(contentsOf: [UInt8(count >> 8), UInt8(count & 0xFF)])
        default:
            bytes.append(maskBit | 127)
            bytes.append(contentsOf: (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(count) >> ($0 * 8)) })
        }
        guard let maskingKey else {
            bytes.append(payload)
            return bytes
        }
        let key: [UInt8] = (0..<4).reversed().map { UInt8(truncatingIfNeeded: maskingKey >> ($0 * 8)) }
        bytes.append(contentsOf: key)
        let start = bytes.count
        bytes.append(payload)
        bytes.withUnsafeMutableBytes { buffer in
            Self.mask(UnsafeMutableRawBufferPointer(rebasing: buffer[start...]), with: key, from: 0)
        }
        return bytes
    }

    /// XORs `bytes` with the masking key, the key's `from % 4`th byte first (section 5.3).
    static func mask(_ bytes: UnsafeMutableRawBufferPointer, with key: [UInt8], from offset: Int) {
        guard let base = bytes.baseAddress else { return }
        // The key turned so that its first byte falls on `bytes[0]`, eight bytes at a time.
        let turned = (0..<4).map { key[(offset + $0) & 3] }
        var word: UInt64 = 0
        for index in 0..<8 { word |= UInt64(turned[index & 3]) << (8 * index) }
        word = UInt64(littleEndian: word)
        var index = 0
        while index + 8 <= bytes.count {
            let value = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            base.storeBytes(of: value ^ word, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            bytes[index] ^= turned[index & 3]
            index += 1
        }
    }
}

/// A breach of the WebSocket protocol by the other side, with the close code that answers it
/// (RFC 6455, section 7.4.1).
package struct WebSocketProtocolError: Error, Sendable, Equatable {
    /// The close code to send before the connection is dropped.
    package let closeCode: WebSocketCloseCode
    /// What was wrong, for the error the caller sees.
    package let reason: String

    package init(_ closeCode: WebSocketCloseCode, _ reason: String) {
        self.closeCode = closeCode
        self.reason = reason
    }
}
