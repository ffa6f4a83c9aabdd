/// Describes a backend's envelope: which keys carry the business code, the message and the
/// payload, and which codes mean success.
///
/// ```swift
/// // {"result": "1", "message": "ok", "data": {...}}
/// let format = EnvelopeFormat(codeKey: "result", messageKey: "message", successCodes: [1])
/// ```
public struct EnvelopeFormat: Sendable, Hashable {
    /// The key of the business code, for example `code`, `result` or `status`.
    public var codeKey: String
    /// The key of the message, for example `msg` or `message`.
    public var messageKey: String
    /// The key of the payload, usually `data`.
    public var dataKey: String
    /// The business codes that mean success.
    public var successCodes: Set<Int>
    /// Whether a code may arrive as a numeric string (`"0"`) as well as a number.
    public var acceptsStringCodes: Bool
    /// The message used when a failing envelope carries none.
    public var defaultMessage: String

    /// Creates a format.
    /// - Parameters:
    ///   - codeKey: The key of the business code.
    ///   - messageKey: The key of the message.
    ///   - dataKey: The key of the payload.
    ///   - successCodes: The codes that mean success.
    ///   - acceptsStringCodes: Whether `"0"` counts as `0`.
    ///   - defaultMessage: The message for a failing envelope without one.
    public init(
        codeKey: String = "code", messageKey: String = "msg", dataKey: String = "data",
        successCodes: Set<Int> = [0], acceptsStringCodes: Bool = true, defaultMessage: String = "Request failed"
    ) {
        self.codeKey = codeKey
        self.messageKey = messageKey
        self.dataKey = dataKey
        self.successCodes = successCodes
        self.acceptsStringCodes = acceptsStringCodes
        self.defaultMessage = defaultMessage
    }

    /// `{"code": 0, "msg": "ok", "data": …}` with `0` as the only success code.
    public static let standard = EnvelopeFormat()
}
