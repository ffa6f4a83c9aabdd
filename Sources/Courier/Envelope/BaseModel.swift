import Foundation

/// The envelope an app backend wraps around every answer: `{"code": 0, "msg": "ok", "data": …}`.
///
/// Which keys carry the code, message and payload, and which codes mean success, come from the
/// ``EnvelopeFormat`` of the decoder's `userInfo` (``NetworkClient`` sets it); `.standard` when
/// none is set. The payload is decoded only when the code is a success code, so a failing
/// answer whose `data` has another shape still yields its code and message. Unknown keys are
/// ignored.
///
/// ```swift
/// let envelope = try decoder.decode(BaseModel<[Order]>.self, from: body)
/// if envelope.isSuccess { print(envelope.data ?? []) }
/// ```
public struct BaseModel<T: Decodable & Sendable>: Decodable, Sendable {
    /// The business code.
    public let code: Int
    /// The message, when the envelope has one.
    public let message: String?
    /// The payload: present when the code is a success code and the payload key is there and
    /// not `null`.
    public let data: T?
    /// Whether ``code`` is one of the format's success codes.
    public let isSuccess: Bool

    /// Decodes an envelope using the format in `decoder.userInfo[.envelopeFormat]`.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when the code is missing or not an integer, or the payload does
    ///   not match `T`.
    public init(from decoder: any Decoder) throws {
        let format = decoder.userInfo[.envelopeFormat] as? EnvelopeFormat ?? .standard
        let container = try decoder.container(keyedBy: EnvelopeKey.self)
        code = try EnvelopeCode.read(from: container, format: format)
        message = try? container.decodeIfPresent(String.self, forKey: EnvelopeKey(format.messageKey))
        isSuccess = format.successCodes.contains(code)
        data = isSuccess ? try container.decodeIfPresent(T.self, forKey: EnvelopeKey(format.dataKey)) : nil
    }
}

extension CodingUserInfoKey {
    /// The key under which a decoder's `userInfo` holds the ``EnvelopeFormat`` for ``BaseModel``.
    public static let envelopeFormat = CodingUserInfoKey(rawValue: "courier.envelopeFormat")!
}

/// Only an envelope's business code, read as ``BaseModel`` reads it: what the token and
/// re-login layers look at, so they see the code the caller gets.
struct EnvelopeCode: Decodable {
    let code: Int

    init(from decoder: any Decoder) throws {
        let format = decoder.userInfo[.envelopeFormat] as? EnvelopeFormat ?? .standard
        code = try Self.read(from: decoder.container(keyedBy: EnvelopeKey.self), format: format)
    }

    /// The code under the format's key: an integer, or a numeric string when the format
    /// accepts those.
    static func read(from container: KeyedDecodingContainer<EnvelopeKey>, format: EnvelopeFormat) throws -> Int {
        let codeKey = EnvelopeKey(format.codeKey)
        if let number = try? container.decode(Int.self, forKey: codeKey) { return number }
        if format.acceptsStringCodes, let text = try? container.decode(String.self, forKey: codeKey),
            let number = Int(text.trimmingCharacters(in: .whitespaces))
        {
            return number
        }
        // Let the decoder say precisely what is wrong (missing key or wrong type).
        return try container.decode(Int.self, forKey: codeKey)
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
