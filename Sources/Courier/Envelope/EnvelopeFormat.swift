/// Describes a backend's envelope: where the business code, the message and the payload are,
/// and what means success.
///
/// ```swift
/// // {"result": "1", "message": "ok", "data": {...}}
/// let format = EnvelopeFormat(codeKey: "result", messageKey: "message", successCodes: [1])
///
/// // {"meta": {"code": "A0000", "msg": "ok"}, "result": {"data": {...}}}
/// let nested = EnvelopeFormat(
///     codeKey: "meta.code", messageKey: "meta.msg", dataKey: "result.data", successCodes: ["A0000"])
///
/// // {"success": true, "errorCode": null, "errorMessage": null, "data": {...}}
/// let flagged = EnvelopeFormat(codeKey: "errorCode", messageKey: "errorMessage", successKey: "success")
/// ```
///
/// A key may be a path through nested objects, its names joined by dots (`meta.code`); a name
/// that itself contains a dot cannot be given.
public struct EnvelopeFormat: Sendable, Hashable {
    /// The key of the business code, for example `code`, `result`, `status` or `meta.code`.
    public var codeKey: String
    /// The key of the message, for example `msg`, `message` or `meta.msg`.
    public var messageKey: String
    /// The key of the payload, usually `data`.
    public var dataKey: String
    /// The business codes that mean success (when ``successKey`` is `nil`).
    public var successCodes: Set<BusinessCode>
    /// The key of a boolean that says whether the call succeeded (`{"success": true, …}`), or
    /// `nil` when the code says it. With a flag, the flag alone decides, and the code is
    /// optional: read when present, for the error and the token and re-login layers.
    public var successKey: String?
    /// The message used when a failing envelope carries none.
    public var defaultMessage: String

    /// Creates a format.
    /// - Parameters:
    ///   - codeKey: The key of the business code.
    ///   - messageKey: The key of the message.
    ///   - dataKey: The key of the payload.
    ///   - successCodes: The codes that mean success.
    ///   - successKey: The key of a boolean success flag, if the backend sends one.
    ///   - defaultMessage: The message for a failing envelope without one.
    public init(
        codeKey: String = "code", messageKey: String = "msg", dataKey: String = "data",
        successCodes: Set<BusinessCode> = [0], successKey: String? = nil, defaultMessage: String = "Request failed"
    ) {
        self.codeKey = codeKey
        self.messageKey = messageKey
        self.dataKey = dataKey
        self.successCodes = successCodes
        self.successKey = successKey
        self.defaultMessage = defaultMessage
    }

    /// `{"code": 0, "msg": "ok", "data": …}` with `0` as the only success code.
    public static let standard = EnvelopeFormat()

    /// The names along a key's path: `meta.code` is `["meta", "code"]`.
    static func path(_ key: String) -> [String] {
        key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }
}
