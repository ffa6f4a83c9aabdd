import Foundation

/// The envelope an app backend wraps around every answer: `{"code": 0, "msg": "ok", "data": …}`.
///
/// Where the code, message and payload are, and what means success, come from the
/// ``EnvelopeFormat`` of the decoder's `userInfo` (``NetworkClient`` sets it); `.standard` when
/// none is set. The payload is decoded only when the call succeeded, so a failing answer whose
/// `data` has another shape still yields its code and message. Unknown keys are ignored.
///
/// ```swift
/// let envelope = try decoder.decode(BaseModel<[Order]>.self, from: body)
/// if envelope.isSuccess { print(envelope.data ?? []) }
/// ```
public struct BaseModel<T: Decodable & Sendable>: Decodable, Sendable {
    /// The business code: always there when the code says what succeeded; `nil` only when the
    /// format has a ``EnvelopeFormat/successKey`` and the envelope carries no code.
    public let code: BusinessCode?
    /// The message, when the envelope has one.
    public let message: String?
    /// The payload: present when the call succeeded and the payload key is there and not
    /// `null`.
    public let data: T?
    /// Whether the call succeeded: the format's success flag, or else whether ``code`` is one
    /// of its success codes.
    public let isSuccess: Bool

    /// Decodes an envelope using the format in `decoder.userInfo[.envelopeFormat]`.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when the code (or the success flag) is missing or of another
    ///   type, or the payload does not match `T`.
    public init(from decoder: any Decoder) throws {
        let format = decoder.userInfo[.envelopeFormat] as? EnvelopeFormat ?? .standard
        let root = try decoder.container(keyedBy: EnvelopeKey.self)
        let head = try EnvelopeHead(root: root, format: format)
        code = head.code
        isSuccess = head.isSuccess
        message = try? root.value(String.self, at: format.messageKey)
        data = isSuccess ? try root.value(T.self, at: format.dataKey) : nil
    }
}

extension CodingUserInfoKey {
    /// The key under which a decoder's `userInfo` holds the ``EnvelopeFormat`` for ``BaseModel``.
    public static let envelopeFormat = CodingUserInfoKey(rawValue: "courier.envelopeFormat")!
}

/// What an envelope says about the call: its code and whether it succeeded.
struct EnvelopeHead {
    let code: BusinessCode?
    let isSuccess: Bool

    /// With a success flag, the flag (required) and the code if it is there and readable;
    /// otherwise the code (required) and whether it is a success code.
    init(root: KeyedDecodingContainer<EnvelopeKey>, format: EnvelopeFormat) throws {
        if let successKey = format.successKey {
            isSuccess = try root.required(Bool.self, at: successKey)
            code = (try? root.value(BusinessCode.self, at: format.codeKey)) ?? nil
        } else {
            let code = try root.required(BusinessCode.self, at: format.codeKey)
            self.code = code
            isSuccess = format.successCodes.contains(code)
        }
    }
}

extension KeyedDecodingContainer where Key == EnvelopeKey {
    /// The value at a dotted key path, or `nil` when a name along it is missing or `null`.
    /// - Throws: `DecodingError` when something along it, or the value, has another type.
    func value<Value: Decodable>(_ type: Value.Type, at key: String) throws -> Value? {
        var names = EnvelopeFormat.path(key)
        let last = EnvelopeKey(names.removeLast())
        var container = self
        for name in names {
            let key = EnvelopeKey(name)
            guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
            container = try container.nestedContainer(keyedBy: EnvelopeKey.self, forKey: key)
        }
        return try container.decodeIfPresent(type, forKey: last)
    }

    /// The value at a dotted key path.
    /// - Throws: `DecodingError` when it, or an object along it, is missing or of another
    ///   type; the error's coding path is the key path.
    func required<Value: Decodable>(_ type: Value.Type, at key: String) throws -> Value {
        var names = EnvelopeFormat.path(key)
        let last = EnvelopeKey(names.removeLast())
        var container = self
        for name in names {
            container = try container.nestedContainer(keyedBy: EnvelopeKey.self, forKey: EnvelopeKey(name))
        }
        return try container.decode(type, forKey: last)
    }
}

/// A coding key made from any string.
struct EnvelopeKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// The payload of an endpoint that expects none: an envelope whose `data` is missing or
/// `null`, or an empty body (`204 No Content`, `HEAD`).
public struct EmptyResponse: Decodable, Sendable, Equatable {
    /// Creates the empty payload.
    public init() {}

    /// Decodes from anything, ignoring it.
    /// - Parameter decoder: The decoder (not read).
    public init(from decoder: any Decoder) throws {}
}
