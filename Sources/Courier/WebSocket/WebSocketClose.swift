import Foundation

/// A close code (RFC 6455, section 7.4): why a WebSocket connection ends. Applications may
/// use their own codes from 4000 to 4999.
///
/// ```swift
/// await socket.close(code: 4001, reason: "left the room")
/// ```
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, ExpressibleByIntegerLiteral {
    /// The code's number.
    public let rawValue: UInt16

    /// Creates a code.
    /// - Parameter rawValue: The code's number.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Creates a code from a literal.
    /// - Parameter value: The code's number.
    public init(integerLiteral value: UInt16) { self.rawValue = value }

    /// 1000: the purpose of the connection is fulfilled.
    public static let normal = Self(rawValue: 1000)
    /// 1001: the endpoint is going away (a server shutting down, a page left).
    public static let goingAway = Self(rawValue: 1001)
    /// 1002: the other side broke the protocol.
    public static let protocolError = Self(rawValue: 1002)
    /// 1003: a kind of message the endpoint cannot take (binary to a text-only endpoint).
    public static let unsupportedData = Self(rawValue: 1003)
    /// 1005: the close frame had no code. Never sent.
    public static let noStatus = Self(rawValue: 1005)
    /// 1006: the connection ended without a close frame. Never sent.
    public static let abnormal = Self(rawValue: 1006)
    /// 1007: a text message was not UTF-8.
    public static let invalidData = Self(rawValue: 1007)
    /// 1008: a message broke the endpoint's policy.
    public static let policyViolation = Self(rawValue: 1008)
    /// 1009: a message was larger than the endpoint takes.
    public static let messageTooBig = Self(rawValue: 1009)
    /// 1011: the server met an unexpected condition.
    public static let internalError = Self(rawValue: 1011)

    /// Whether a close frame may carry the code: 1000–1003, 1007–1014 (those defined and
    /// registered), 3000–4999 (libraries' and applications' own). Not 1004, 1005, 1006 or 1015,
    /// which are reserved or never sent, nor anything below 1000 or above 4999.
    public var isAllowedOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}

/// How a WebSocket connection was closed: the code and reason of a close frame (RFC 6455,
/// section 5.5.1).
public struct WebSocketClose: Sendable, Equatable {
    /// The code; ``WebSocketCloseCode/noStatus`` when the frame carried none.
    public var code: WebSocketCloseCode
    /// The reason; empty when none was given.
    public var reason: String

    /// Creates a close.
    /// - Parameters:
    ///   - code: The code.
    ///   - reason: The reason.
    public init(code: WebSocketCloseCode, reason: String = "") {
        self.code = code
        self.reason = reason
    }

    /// The most bytes of a reason: a control frame carries 125, two of them the code.
    package static let maximumReasonSize = WebSocketFrame.maximumControlPayload - 2

    /// Reads a close frame's payload.
    /// - Throws: 1002 for a payload of one byte or a code that may not be sent; 1007 for a
    ///   reason that is not UTF-8.
    package init(payload: Data) throws(WebSocketProtocolError) {
        guard !payload.isEmpty else {
            self.init(code: .noStatus)
            return
        }
        guard payload.count >= 2 else {
            throw WebSocketProtocolError(.protocolError, "a close frame carries one byte, not a code")
        }
        let bytes = [UInt8](payload)
        let code = WebSocketCloseCode(rawValue: UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
        guard code.isAllowedOnTheWire else {
            throw WebSocketProtocolError(.protocolError, "a close frame carries the code \(code.rawValue)")
        }
        var validation = UTF8Validation()
        guard validation.consume(bytes[2...]), validation.isComplete else {
            throw WebSocketProtocolError(.invalidData, "a close frame's reason is not UTF-8")
        }
        self.init(code: code, reason: String(decoding: bytes[2...], as: UTF8.self))
    }

    /// The payload of a close frame saying this: the code, then the reason cut to
    /// ``maximumReasonSize`` bytes at a character's end. Empty for a code that may not be sent
    /// (``WebSocketCloseCode/noStatus`` among them): the frame then says nothing.
    package var payload: Data {
        guard code.isAllowedOnTheWire else { return Data() }
        var bytes = Data([UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)])
        var size = 0
        for character in reason {
            let utf8 = character.utf8
            guard size + utf8.count <= Self.maximumReasonSize else { break }
            bytes.append(contentsOf: utf8)
            size += utf8.count
        }
        return bytes
    }
}
